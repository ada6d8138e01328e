/* Average and max pooling in double, from the float inputs the op read:
 * the average's window sum with its bound (kh kw terms, path kh kw: every
 * family's order is ref's), then the division's rounding; the max, under
 * the same tie and NaN rules in double, is exact (bound 0), and so is its
 * argmax, the index into x of the element the max took (bound 0). */
#include <math.h>

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
