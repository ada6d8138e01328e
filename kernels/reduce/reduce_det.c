/* ReduceMean, det family: one writer per output, parallel over the outputs,
 * each sum in sb_sum_det's fixed chunks (kernels/gemm/sb_gemm.h: chunks of
 * SB_GEMM_KC from +0, the chunk sums added in chunk order), whatever the
 * thread count. */
#include "gemm/sb_gemm.h"
#include "reduce.h"

void sb_reduce_mean_det(float *y,              /* [outer][inner] */
                        const float *x,        /* [outer][r][inner] */
                        const sb_reduce_shape *s)
{
    sb_reduce_shape_check(s);
    const int64_t outputs = (int64_t)sb_reduce_outputs(s);
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < outputs; e++)
        y[e] = sb_sum_det(x + sb_reduce_first(s, (size_t)e), s->inner, (size_t)s->r, 0.0f) /
               (float)s->r;
}
