/* conv2d reordering bounds (sb_dot_bound, sb_kernels.h): per output element,
 * 2 gamma(n) sum |terms| over the n terms of its reduction, counting every
 * tap the loops visit (padding taps are zero terms):
 *   fwd        y[n][k][p][q]:  c*r*s products + the bias term
 *   bwd_data   dx[n][c][h][w]: k*r*s products dy*w
 *   bwd_filter dw[k][c][r][s]: n*p*q products dy*x
 *   bwd_bias   db[k]:          n*p*q values of dy
 * Sums in double; images or channels in parallel, each element one writer. */
#include <math.h>
#include <stdlib.h>

#include "conv.h"

static double x_abs(const float *x, const sb_conv_shape *s, int img, int ch, int ih, int iw)
{
    if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
        return 0.0;
    return fabs((double)x[(((size_t)img * s->c + ch) * s->h + ih) * s->w + iw]);
}

void sb_conv2d_fwd_bound(float *y, const float *x, const float *w, const float *b,
                         const sb_conv_shape *s)
{
    double nterms = (double)s->c * s->r * s->s + 1.0;
#pragma omp parallel for schedule(static)
    for (int img = 0; img < s->n; img++)
        for (int f = 0; f < s->k; f++)
            for (int p = 0; p < s->p; p++)
                for (int q = 0; q < s->q; q++) {
                    double sum = fabs((double)b[f]);
                    for (int ch = 0; ch < s->c; ch++)
                        for (int r = 0; r < s->r; r++)
                            for (int t = 0; t < s->s; t++)
                                sum += x_abs(x, s, img, ch, p * s->stride - s->pad + r,
                                             q * s->stride - s->pad + t) *
                                       fabs((double)w[(((size_t)f * s->c + ch) * s->r + r) * s->s + t]);
                    y[(((size_t)img * s->k + f) * s->p + p) * s->q + q] = sb_dot_bound(nterms, sum);
                }
}

void sb_conv2d_bwd_data_bound(float *dx, const float *dy, const float *w,
                              const sb_conv_shape *s)
{
    double nterms = (double)s->k * s->r * s->s;
    size_t img_in = (size_t)s->c * s->h * s->w;
#pragma omp parallel
    {
        double *sum = malloc(img_in * sizeof(double));
        SB_ASSERT(sum != NULL);
#pragma omp for schedule(static)
        for (int img = 0; img < s->n; img++) {
            for (size_t i = 0; i < img_in; i++)
                sum[i] = 0.0;
            for (int f = 0; f < s->k; f++)
                for (int p = 0; p < s->p; p++)
                    for (int q = 0; q < s->q; q++) {
                        double g = fabs((double)dy[(((size_t)img * s->k + f) * s->p + p) * s->q + q]);
                        for (int ch = 0; ch < s->c; ch++)
                            for (int r = 0; r < s->r; r++)
                                for (int t = 0; t < s->s; t++) {
                                    int ih = p * s->stride - s->pad + r;
                                    int iw = q * s->stride - s->pad + t;
                                    if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
                                        continue;
                                    sum[((size_t)ch * s->h + ih) * s->w + iw] +=
                                        g * fabs((double)w[(((size_t)f * s->c + ch) * s->r + r) * s->s + t]);
                                }
                    }
            for (size_t i = 0; i < img_in; i++)
                dx[img * img_in + i] = sb_dot_bound(nterms, sum[i]);
        }
        free(sum);
    }
}

void sb_conv2d_bwd_filter_bound(float *dw, const float *dy, const float *x,
                                const sb_conv_shape *s)
{
    double nterms = (double)s->n * s->p * s->q;
    int taps = s->c * s->r * s->s;
#pragma omp parallel for schedule(static) collapse(2)
    for (int f = 0; f < s->k; f++)
        for (int tap = 0; tap < taps; tap++) {
            sb_conv_tap at = sb_conv_tap_of(s, tap);
            double sum = 0.0;
            for (int img = 0; img < s->n; img++)
                for (int p = 0; p < s->p; p++)
                    for (int q = 0; q < s->q; q++)
                        sum += fabs((double)dy[(((size_t)img * s->k + f) * s->p + p) * s->q + q]) *
                               x_abs(x, s, img, at.ch, p * s->stride - s->pad + at.r,
                                     q * s->stride - s->pad + at.t);
            dw[(size_t)f * taps + tap] = sb_dot_bound(nterms, sum);
        }
}

void sb_conv2d_bwd_bias_bound(float *db, const float *dy, const sb_conv_shape *s)
{
    size_t pq = (size_t)s->p * s->q;
    double nterms = (double)s->n * (double)pq;
#pragma omp parallel for schedule(static)
    for (int f = 0; f < s->k; f++) {
        double sum = 0.0;
        for (int img = 0; img < s->n; img++)
            for (size_t i = 0; i < pq; i++)
                sum += fabs((double)dy[((size_t)img * s->k + f) * pq + i]);
        db[f] = sb_dot_bound(nterms, sum);
    }
}
