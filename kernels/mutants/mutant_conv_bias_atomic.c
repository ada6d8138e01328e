/* FAULT: the bias gradient accumulated with a float `omp atomic` add (the
 * CPU form of the GPU atomicAdd pattern): threads take images as they come
 * and add each of an image's det chunk sums into the shared db, so the
 * order of the adds, and with it the bits, changes from run to run at any
 * thread count above one. Every order is a reordering of det's sum. On one
 * thread the images and their chunks come in det's order, and so do the
 * bits. */
#include <string.h>

#include "gemm/sb_gemm.h"
#include "mutants.h"

void sb_mutant_conv_bias_atomic(float *db,           /* [k] */
                                const float *dy,     /* [n][k][p][q] */
                                const sb_conv_shape *s)
{
    const size_t pq = (size_t)s->p * s->q;
    const int k = s->k;
    memset(db, 0, (size_t)k * sizeof *db);
#pragma omp parallel for schedule(dynamic, 1)
    for (int img = 0; img < s->n; img++)
        for (int f = 0; f < k; f++)
            for (size_t c0 = 0; c0 < pq; c0 += SB_GEMM_KC) {
                const size_t len = pq - c0 < SB_GEMM_KC ? pq - c0 : SB_GEMM_KC;
                /* one det chunk from +0 */
                const float part = sb_sum_det(dy + ((size_t)img * k + f) * pq + c0, 1, len, 0.0f);
#pragma omp atomic
                db[f] += part;
            }
}
