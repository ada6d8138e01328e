/* FAULT: split-K GEMM: the reduction over the inputs is cut into one slice
 * per thread; thread 0 adds its slice onto the bias in y, the others into
 * scratch partials that are then added in thread order, so the summation
 * order follows the thread count. On one thread it is the det GEMM. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dense/dense.h"
#include "gemm/sb_gemm.h"
#include "mutants.h"

void sb_mutant_dense_fwd_split_k(float *y,              /* [n][out] */
                                 const float *x,        /* [n][in] */
                                 const float *w,        /* [in][out] */
                                 const float *b,        /* [out] */
                                 const sb_dense_shape *s)
{
    const int m = s->n, n = s->out, k = s->in;
    const size_t mn = (size_t)m * (size_t)n;
    sb_dense_fill_bias(y, b, s);
    const int threads = omp_get_max_threads();
    float *part = malloc(mn * (size_t)(threads > 1 ? threads - 1 : 1) * sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        int k0 = (int)((int64_t)k * t / nth), k1 = (int)((int64_t)k * (t + 1) / nth);
        sb_matview a = {x + k0, s->in, 1}, bv = {w + (size_t)k0 * n, n, 1};
        sb_gemm_work *wk = sb_gemm_work_new(m, n, k1 - k0 > 0 ? k1 - k0 : 1);
        SB_ASSERT(wk != NULL);
        if (t == 0)
            sb_gemm_det_serial(y, a, bv, wk, n, m, n, k1 - k0, true);
        else
            sb_gemm_det_serial(part + mn * (size_t)(t - 1), a, bv, wk, n, m, n, k1 - k0,
                               false);
        sb_gemm_work_free(wk);
#pragma omp barrier
#pragma omp for schedule(static)
        for (size_t e = 0; e < mn; e++) {
            float acc = y[e];
            for (int u = 1; u < nth; u++)
                acc += part[mn * (size_t)(u - 1) + e];
            y[e] = acc;
        }
    }
    free(part);
}
