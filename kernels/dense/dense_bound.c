/* dense reordering bounds (sb_dot_bound, sb_kernels.h): per output element,
 * 2 gamma(n) sum |terms| over the n terms of its reduction:
 *   fwd          y[n][out]:   in products x*w + the bias term
 *   bwd_data     dx[n][in]:   out products dy*w
 *   bwd_weights  dw[in][out]: n products x*dy
 *   bwd_bias     db[out]:     n values of dy
 * Sums in double, one writer per element. */
#include <math.h>

#include "dense.h"

void sb_dense_fwd_bound(float *y, const float *x, const float *w, const float *b,
                        const sb_dense_shape *s)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        for (int o = 0; o < s->out; o++) {
            double sum = fabs((double)b[o]);
            for (int j = 0; j < s->in; j++)
                sum += fabs((double)x[(size_t)i * s->in + j]) *
                       fabs((double)w[(size_t)j * s->out + o]);
            y[(size_t)i * s->out + o] = sb_dot_bound((double)s->in + 1.0, sum);
        }
}

void sb_dense_bwd_data_bound(float *dx, const float *dy, const float *w,
                             const sb_dense_shape *s)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        for (int j = 0; j < s->in; j++) {
            double sum = 0.0;
            for (int o = 0; o < s->out; o++)
                sum += fabs((double)dy[(size_t)i * s->out + o]) *
                       fabs((double)w[(size_t)j * s->out + o]);
            dx[(size_t)i * s->in + j] = sb_dot_bound((double)s->out, sum);
        }
}

void sb_dense_bwd_weights_bound(float *dw, const float *dy, const float *x,
                                const sb_dense_shape *s)
{
#pragma omp parallel for schedule(static)
    for (int j = 0; j < s->in; j++)
        for (int o = 0; o < s->out; o++) {
            double sum = 0.0;
            for (int i = 0; i < s->n; i++)
                sum += fabs((double)x[(size_t)i * s->in + j]) *
                       fabs((double)dy[(size_t)i * s->out + o]);
            dw[(size_t)j * s->out + o] = sb_dot_bound((double)s->n, sum);
        }
}

void sb_dense_bwd_bias_bound(float *db, const float *dy, const sb_dense_shape *s)
{
#pragma omp parallel for schedule(static)
    for (int o = 0; o < s->out; o++) {
        double sum = 0.0;
        for (int i = 0; i < s->n; i++)
            sum += fabs((double)dy[(size_t)i * s->out + o]);
        db[o] = sb_dot_bound((double)s->n, sum);
    }
}
