/* Average and max pooling in double, from the float inputs the op read:
 * the average's window sum with its bound (kh kw terms, path kh kw: every
 * family's order is ref's), then the division's rounding; the max, under
 * the same tie and NaN rules in double, is exact (bound 0), and so is its
 * argmax, the index into x of the element the max took (bound 0). */
#include <math.h>
#include <stdlib.h>

#include "pool.h"
#include "refd_sums.h"

typedef enum window_value { WINDOW_MEAN, WINDOW_MAX, WINDOW_ARGMAX } window_value;

static void windows_of(double *value, double *bound, const sb_op_call *c, window_value what)
{
    const sb_window_shape *s = &c->window;
    const int p = sb_window_p(s), q = sb_window_q(s);
    const double kk = (double)s->kh * s->kw;
    for (size_t plane = 0; plane < (size_t)s->n * (size_t)s->c; plane++)
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++) {
                const float *top =
                    sb_window_at(SB_REFD_IN(c, 0) + plane * (size_t)s->h * (size_t)s->w, s, i, j);
                const size_t e = (plane * (size_t)p + (size_t)i) * (size_t)q + (size_t)j;
                double sum = 0.0, a = 0.0, max = (double)top[0];
                size_t argmax = 0;
                for (int r = 0; r < s->kh; r++)
                    for (int t = 0; t < s->kw; t++) {
                        const size_t at = (size_t)r * (size_t)s->w + (size_t)t;
                        const double v = (double)top[at];
                        sum += v;
                        a += fabs(v);
                        if (v > max || (isnan(v) && !isnan(max)))
                            max = v, argmax = at;
                    }
                if (what != WINDOW_MEAN) {
                    value[e] = what == WINDOW_MAX
                                   ? max
                                   : (double)((size_t)(top - SB_REFD_IN(c, 0)) + argmax);
                    bound[e] = 0.0;
                    continue;
                }
                const double e0 = sb_refd_sum_bound(a, kk, kk) / kk;
                value[e] = sum / kk;
                bound[e] = e0 + SB_REFD_U * (fabs(value[e]) + e0) + SB_REFD_UNDERFLOW;
            }
}

void sb_avgpool_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    windows_of(value, bound, c, WINDOW_MEAN);
}

void sb_maxpool_window_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    windows_of(value, bound, c, WINDOW_MAX);
}

void sb_maxpool_window_indices_refd(double *value, double *bound, const sb_op_call *c,
                                    sb_family f)
{
    (void)f;
    windows_of(value, bound, c, WINDOW_ARGMAX);
}

void sb_window_grad_terms(sb_err_sum *sum, int *count, const float *dy, const float *x,
                          const sb_window_shape *s)
{
    const size_t p = (size_t)sb_window_p(s), q = (size_t)sb_window_q(s);
    const size_t hw = (size_t)s->h * (size_t)s->w;
    const double kk = (double)s->kh * s->kw;
    for (size_t plane = 0; plane < (size_t)s->n * (size_t)s->c; plane++)
        for (size_t i = 0; i < p; i++)
            for (size_t j = 0; j < q; j++) {
                const size_t o = (plane * p + i) * q + j;
                if (x != NULL) {
                    const size_t at = (size_t)sb_window_index(x, s, plane, (int)i, (int)j);
                    sb_err_sum_add(&sum[at], sb_err_exact((double)dy[o]));
                    count[at]++;
                    continue;
                }
                const sb_err t = sb_err_round((double)dy[o] / kk, 0.0);
                const size_t top = plane * hw + i * (size_t)s->sh * (size_t)s->w + j * (size_t)s->sw;
                for (size_t a = 0; a < (size_t)s->kh; a++)
                    for (size_t b = 0; b < (size_t)s->kw; b++) {
                        sb_err_sum_add(&sum[top + a * (size_t)s->w + b], t);
                        count[top + a * (size_t)s->w + b]++;
                    }
            }
}

/* The gradients: each element's sum of m terms in any order (every
 * family's order is ref's), gamma(m - 1) on the terms' magnitudes, the
 * average's terms one rounding each; plus 2^-150 a term for underflow. */
static void grads_of(double *value, double *bound, const sb_op_call *c, const float *x)
{
    const sb_window_shape *s = &c->window;
    const size_t n = (size_t)s->n * (size_t)s->c * (size_t)s->h * (size_t)s->w;
    sb_err_sum *sum = calloc(n, sizeof *sum);
    int *count = calloc(n, sizeof *count);
    SB_ASSERT(sum != NULL && count != NULL);
    sb_window_grad_terms(sum, count, SB_REFD_IN(c, 0), x, s);
    for (size_t e = 0; e < n; e++) {
        const sb_err g = sb_err_sum_end(&sum[e], (size_t)count[e]);
        value[e] = g.v;
        bound[e] = g.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW * count[e];
    }
    free(sum);
    free(count);
}

void sb_avgpool_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    grads_of(value, bound, c, NULL);
}

void sb_maxpool_window_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    grads_of(value, bound, c, SB_REFD_IN(c, 1));
}
