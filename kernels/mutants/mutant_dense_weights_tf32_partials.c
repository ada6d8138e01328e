/* FAULT: split-K weight gradient whose workspace is reduced precision: the
 * batch rows are cut into one slice per thread, each thread's partial
 * product is stored rounded to a TF32-like 10-bit mantissa (as a library
 * that keeps split-K partials in half precision, or runs fp32 as TF32,
 * does), and the partials are added in thread order. Each partial loses
 * about 2^-12 of its magnitude: far more than any float summation order
 * of the same terms, yet within the worst-case reordering bound of a long
 * sum. On one thread it is the det GEMM. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gemm/sb_gemm.h"
#include "mutants.h"

/* x rounded to nearest, ties to even, to 10 stored mantissa bits;
 * infinities and NaN as they are */
static float round_tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x0fffu + ((u >> 13) & 1u);
        u &= ~0x1fffu;
    }
    memcpy(&x, &u, sizeof x);
    return x;
}

void sb_mutant_dense_weights_tf32_partials(float *dw,       /* [in][out] */
                                           const float *dy, /* [n][out] */
                                           const float *x,  /* [n][in] */
                                           const sb_dense_shape *s)
{
    const int threads = omp_get_max_threads();
    if (threads == 1) {
        sb_gemm_det(dw, sb_matview_trans(x, s->in), sb_matview_rows(dy, s->out), s->out,
                    s->in, s->out, s->n, false);
        return;
    }
    const size_t mn = (size_t)s->in * (size_t)s->out;
    float *part = malloc(mn * (size_t)threads * sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), nth = omp_get_num_threads();
        const int r0 = (int)((int64_t)s->n * t / nth), r1 = (int)((int64_t)s->n * (t + 1) / nth);
        float *mine = part + mn * (size_t)t;
        if (r1 > r0) {
            sb_gemm_work *wk = sb_gemm_work_new(s->in, s->out, r1 - r0);
            SB_ASSERT(wk != NULL);
            sb_gemm_det_serial(mine, sb_matview_trans(x + (size_t)r0 * s->in, s->in),
                               sb_matview_rows(dy + (size_t)r0 * s->out, s->out), wk, s->out,
                               s->in, s->out, r1 - r0, false);
            sb_gemm_work_free(wk);
        } else {
            memset(mine, 0, mn * sizeof *mine);
        }
        for (size_t e = 0; e < mn; e++)
            mine[e] = round_tf32(mine[e]);
#pragma omp barrier
#pragma omp for schedule(static)
        for (size_t e = 0; e < mn; e++) {
            float acc = part[e];
            for (int u = 1; u < nth; u++)
                acc += part[mn * (size_t)u + e];
            dw[e] = acc;
        }
    }
    free(part);
}
