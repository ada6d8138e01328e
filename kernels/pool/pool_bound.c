/* Average pooling's reordering bound, per output as ReduceMean's
 * (reduce_bound.c): two orders of a window's sum of kh kw terms and their
 * divisions differ by at most 2 gamma(kh kw + 1) sum |x| / (kh kw). In
 * double, rounded up to float. */
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
