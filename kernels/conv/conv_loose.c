/* conv2d, loose family: the reductions over images written the usual OpenMP
 * way, so their bits follow the thread count. */
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "conv_det.h"

/* Each thread sums the images the static schedule gives it into its own
 * partial dW; the partials are added in thread order. */
void sb_conv2d_bwd_filter_loose(float *dw, const float *dy, const float *x,
                                const sb_conv_shape *s)
{
    size_t crs = (size_t)s->c * s->r * s->s, nw = (size_t)s->k * crs;
    size_t img_in = (size_t)s->c * s->h * s->w, img_out = (size_t)s->k * s->p * s->q;
    int threads = omp_get_max_threads();
    float *part = calloc(nw * (size_t)threads, sizeof(float));
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        float *col = malloc(crs * (size_t)s->p * s->q * sizeof(float));
        sb_gemm_work *wk = sb_gemm_work_new(s->k, (int)crs, s->p * s->q);
        SB_ASSERT(col != NULL && wk != NULL);
#pragma omp for schedule(static)
        for (int img = 0; img < s->n; img++)
            sb_conv2d_bwd_filter_image(part + nw * (size_t)t, col, wk, dy + img * img_out,
                                       x + img * img_in, s, true);
        sb_gemm_work_free(wk);
        free(col);
#pragma omp for schedule(static)
        for (size_t i = 0; i < nw; i++) {
            float acc = part[i];
            for (int u = 1; u < nth; u++)
                acc += part[nw * (size_t)u + i];
            dw[i] = acc;
        }
    }
    free(part);
}

/* An array reduction clause over images. */
void sb_conv2d_bwd_bias_loose(float *db, const float *dy, const sb_conv_shape *s)
{
    int k = s->k;
    size_t pq = (size_t)s->p * s->q;
    memset(db, 0, (size_t)k * sizeof(float));
#pragma omp parallel for schedule(static) reduction(+ : db[:k])
    for (int img = 0; img < s->n; img++)
        for (int f = 0; f < k; f++) {
            const float *d = dy + ((size_t)img * k + f) * pq;
            float acc = 0.0f;
            for (size_t i = 0; i < pq; i++)
                acc += d[i];
            db[f] += acc;
        }
}
