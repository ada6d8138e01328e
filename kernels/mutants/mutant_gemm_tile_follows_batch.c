/* FAULT: the GEMM's K tile follows the batch size. A tuned GEMM picks its
 * blocking from the shape; here the K block of a dense forward product is
 * SB_GEMM_KC for batches of 16 rows or more and a quarter of it below, and
 * since the K block is also the summation chunk (each chunk one fmaf chain,
 * added onto y in chunk order), a sample's sums are cut at other places in
 * a small batch than in a large one. Each output element has one writer
 * running one fixed loop, so the thread count changes nothing; at 16 rows
 * and more it is the det GEMM, bit for bit. */
#include <math.h>

#include "dense/dense.h"
#include "gemm/sb_gemm.h"
#include "mutants.h"

/* The batch from which the K tile is the det chunk. */
#define TILE_FULL_ROWS 16

void sb_mutant_gemm_tile_follows_batch(float *y,            /* [n][out] */
                                       const float *x,      /* [n][in] */
                                       const float *w,      /* [in][out] */
                                       const float *b,      /* [out] */
                                       const sb_dense_shape *s)
{
    const int kc = s->n >= TILE_FULL_ROWS ? SB_GEMM_KC : SB_GEMM_KC / 4;
    const int k = s->in, n = s->out;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        for (int j = 0; j < n; j++) {
            float c = b[j];     /* the bias enters before chunk 0, as in det */
            for (int p0 = 0; p0 < k; p0 += kc) {
                int p1 = p0 + kc < k ? p0 + kc : k;
                float acc = 0.0f;
                for (int p = p0; p < p1; p++)
                    acc = fmaf(x[(size_t)i * k + p], w[(size_t)p * n + j], acc);
                c += acc;
            }
            y[(size_t)i * n + j] = c;
        }
}
