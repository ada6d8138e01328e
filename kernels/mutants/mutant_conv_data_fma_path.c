/* FAULT: fused multiply-add in one code path only. The one-thread path runs
 * det's per-image step (fmaf chains, conv/conv.h); the multi-thread path was
 * written separately with plain `s + a * b` (two roundings; this tree
 * compiles with -ffp-contract=off, so it stays unfused), so the bits follow
 * whether more than one thread is available. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "conv/conv.h"
#include "gemm/sb_gemm.h"
#include "mutants.h"

/* col [crs][pq] = W^T [crs][k] dy_n [k][pq]: the det chunks of SB_GEMM_KC
 * over k, each in k order from +0, added in chunk order; chunk: [pq] scratch */
static void col_unfused(float *col, float *chunk, const float *dyn, const float *w,
                        const sb_conv_shape *s)
{
    const size_t crs = (size_t)s->c * s->r * s->s, pq = (size_t)s->p * s->q;
    for (size_t r = 0; r < crs; r++) {
        float *out = col + r * pq;
        for (int pc = 0; pc < s->k; pc += SB_GEMM_KC) {
            int pe = pc + SB_GEMM_KC < s->k ? pc + SB_GEMM_KC : s->k;
            memset(chunk, 0, pq * sizeof *chunk);
            for (int p = pc; p < pe; p++) {
                const float a = w[(size_t)p * crs + r];
                const float *b = dyn + (size_t)p * pq;
                for (size_t j = 0; j < pq; j++)
                    chunk[j] = chunk[j] + a * b[j];
            }
            for (size_t j = 0; j < pq; j++)
                out[j] = pc == 0 ? chunk[j] : out[j] + chunk[j];
        }
    }
}

void sb_mutant_conv_data_fma_path(float *dx,            /* [n][c][h][w] */
                                  const float *dy,      /* [n][k][p][q] */
                                  const float *w,       /* [k][c][r][s] */
                                  const sb_conv_shape *s)
{
    const size_t crs = (size_t)s->c * s->r * s->s, pq = (size_t)s->p * s->q;
    const size_t image = (size_t)s->c * s->h * s->w, out = (size_t)s->k * pq;
    const bool serial = omp_get_max_threads() == 1;
#pragma omp parallel
    {
        float *col = sb_floats_new(crs * pq);
        float *chunk = sb_floats_new(pq);
        float *bbuf = serial ? sb_floats_new(sb_gemm_b_buf_floats((int)pq, s->k)) : NULL;
#pragma omp for schedule(static)   /* as det's */
        for (int img = 0; img < s->n; img++) {
            if (serial) {
                sb_conv2d_bwd_data_image(dx + img * image, col, bbuf, dy + img * out, w, s);
            } else {
                col_unfused(col, chunk, dy + img * out, w, s);
                sb_col2im(dx + img * image, col, s);
            }
        }
        free(bbuf);
        free(chunk);
        free(col);
    }
}
