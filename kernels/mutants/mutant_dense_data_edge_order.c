/* FAULT: edge tiles sum in reverse order. Threads take equal column slabs of
 * dx that need not end on a tile boundary; full tiles run the det GEMM, the
 * columns left over at a slab's end run a hand-written edge loop whose chains
 * go from the last product to the first. A thread count whose slabs are whole
 * tiles (1, 2, 4 at the model's widths) never takes the edge loop. */
#include <math.h>
#include <omp.h>

#include "gemm/sb_gemm.h"
#include "mutants.h"

/* The mutant's tile width: columns per full tile. */
#define EDGE_NR 32

/* dx[i][j] for j in [j0, j1): chunks of SB_GEMM_KC as det, each chunk's fmaf
 * chain from p = end - 1 down to the chunk's start */
static void edge_columns(float *dx, const float *dy, const float *w, const sb_dense_shape *s,
                         int j0, int j1)
{
    const int k = s->out;
    for (int i = 0; i < s->n; i++)
        for (int j = j0; j < j1; j++) {
            float c = 0.0f;
            for (int pc = 0; pc < k; pc += SB_GEMM_KC) {
                int pe = pc + SB_GEMM_KC < k ? pc + SB_GEMM_KC : k;
                float acc = 0.0f;
                for (int p = pe - 1; p >= pc; p--)
                    acc = fmaf(dy[(size_t)i * k + p], w[(size_t)j * k + p], acc);
                c = pc == 0 ? acc : c + acc;
            }
            dx[(size_t)i * s->in + j] = c;
        }
}

void sb_mutant_dense_data_edge_order(float *dx,         /* [n][in] */
                                     const float *dy,   /* [n][out] */
                                     const float *w,    /* [in][out] */
                                     const sb_dense_shape *s)
{
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        int j0 = (int)((int64_t)s->in * t / nth), j1 = (int)((int64_t)s->in * (t + 1) / nth);
        int full = (j1 - j0) / EDGE_NR * EDGE_NR;
        if (full > 0) {
            /* dx[:, j0:j0+full] = dy [n][out] . w^T [out][j0:j0+full] */
            sb_matview a = sb_matview_rows(dy, s->out);
            sb_matview b = sb_matview_trans(w + (size_t)j0 * s->out, s->out);
            sb_gemm_work *wk = sb_gemm_work_new(s->n, full, s->out);
            SB_ASSERT(wk != NULL);
            sb_gemm_det_serial(dx + j0, a, b, wk, s->in, s->n, full, s->out, false);
            sb_gemm_work_free(wk);
        }
        edge_columns(dx, dy, w, s, j0 + full, j1);
    }
}
