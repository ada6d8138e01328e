/* conv2d, loose family: the reductions over images written the usual OpenMP
 * way, so their bits follow the thread count. (fwd and bwd_data are
 * parallelised over images the usual way, which splits no reduction: loose
 * runs det's for them, kernels.def.) */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "gemm/sb_gemm.h"

/* Each thread sums the images the static schedule gives it into its own
 * partial dW; the partials are added in thread order. */
void sb_conv2d_bwd_filter_loose(float *dw, const float *dy, const float *x,
                                const sb_conv_shape *s)
{
    size_t crs = (size_t)s->c * s->r * s->s, nw = (size_t)s->k * crs;
    int threads = omp_get_max_threads();
    float *part = calloc(nw * (size_t)threads, sizeof(float));
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        float *bbuf = sb_floats_new(sb_gemm_b_buf_floats((int)crs, s->p * s->q));
#pragma omp for schedule(static)
        for (int img = 0; img < s->n; img++)
            sb_conv2d_bwd_filter_images(part + nw * (size_t)t, bbuf, dy, x, s, img, img + 1,
                                        true);
        free(bbuf);
        sb_partials_sum(dw, part, nw, nth);
    }
    free(part);
}

/* Each thread sums the images the static schedule gives it into its own
 * partial db, one running sum per image; the partials are added in thread
 * order. (Not a reduction clause: libgomp's combines the partials in the
 * order the threads arrive, so its bits change from run to run.) */
void sb_conv2d_bwd_bias_loose(float *db, const float *dy, const sb_conv_shape *s)
{
    int k = s->k;
    size_t pq = (size_t)s->p * s->q;
    int threads = omp_get_max_threads();
    float *part = calloc((size_t)k * (size_t)threads, sizeof(float));
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float *mine = part + (size_t)k * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
        for (int img = 0; img < s->n; img++)
            for (int f = 0; f < k; f++) {
                const float *d = dy + ((size_t)img * k + f) * pq;
                float acc = 0.0f;
                for (size_t i = 0; i < pq; i++)
                    acc += d[i];
                mine[f] += acc;
            }
        sb_partials_sum(db, part, (size_t)k, omp_get_num_threads());
    }
    free(part);
}
