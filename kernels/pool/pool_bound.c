/* Average pooling's reordering bound, per output as ReduceMean's
 * (reduce_bound.c): two orders of a window's sum of kh kw terms and their
 * divisions differ by at most 2 gamma(kh kw + 1) sum |x| / (kh kw). In
 * double, rounded up to float. */
#include <stdlib.h>

#include "pool.h"
#include "running_error.h"

void sb_avgpool_fwd_bound(float *bound, const float *x, const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const double kk = (double)s->kh * s->kw;
    for (size_t plane = 0; plane < (size_t)s->n * (size_t)s->c; plane++)
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++) {
                const float *top = sb_window_at(x + plane * (size_t)s->h * (size_t)s->w, s, i, j);
                double a = 0.0;
                for (int r = 0; r < s->kh; r++)
                    for (int t = 0; t < s->kw; t++)
                        a += fabs((double)top[(size_t)r * (size_t)s->w + (size_t)t]);
                bound[(plane * (size_t)p + (size_t)i) * (size_t)q + (size_t)j] =
                    sb_err_bound_float(2.0 * sb_gamma(kk + 1.0) * a / kk, 1.0);
            }
}

/* The gradients' bounds: an element of x sums the terms of m windows (every
 * covering window for the average, each window whose argmax it is for the
 * max), the same float terms in every order, so two orders differ by at
 * most 2 gamma(m - 1) sum |term| (0 for m <= 1). */
static void grad_bound(float *bound, const float *dy, const float *x, const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const size_t n = (size_t)s->n * (size_t)s->c * (size_t)s->h * (size_t)s->w;
    sb_err_sum *sum = calloc(n, sizeof *sum);
    int *count = calloc(n, sizeof *count);
    SB_ASSERT(sum != NULL && count != NULL);
    sb_window_grad_terms(sum, count, dy, x, s);
    for (size_t e = 0; e < n; e++)
        bound[e] = count[e] > 1 ? sb_err_bound_float(sb_gamma(count[e] - 1) * sum[e].magnitude, 2.0)
                                : 0.0f;
    free(sum);
    free(count);
}

void sb_avgpool_bwd_bound(float *bound, const float *dy, const sb_window_shape *s)
{
    grad_bound(bound, dy, NULL, s);
}

void sb_maxpool_window_bwd_bound(float *bound, const float *dy, const float *x,
                                 const sb_window_shape *s)
{
    grad_bound(bound, dy, x, s);
}
