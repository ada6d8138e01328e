/* FAULT: a serial fast path for tiny batches sums in another order. A batch
 * of fewer than 8 rows (a latency-bound request served alone or in a small
 * group) skips the GEMM for a plain loop that runs each output as one fmaf
 * chain over all of K from the bias, without the det definition's chunks;
 * larger batches take the det GEMM. Either path is the same at every thread
 * count; a sample's bits depend on the size of the batch it is in. */
#include <math.h>

#include "dense/dense.h"
#include "mutants.h"

/* Batches below this many rows take the fast path. */
#define TINY_ROWS 8

void sb_mutant_dense_tiny_batch_order(float *y,             /* [n][out] */
                                      const float *x,       /* [n][in] */
                                      const float *w,       /* [in][out] */
                                      const float *b,       /* [out] */
                                      const sb_dense_shape *s)
{
    if (s->n >= TINY_ROWS) {
        sb_dense_fwd_det(y, x, w, b, s);
        return;
    }
    const int k = s->in, n = s->out;
    for (int i = 0; i < s->n; i++)
        for (int j = 0; j < n; j++) {
            float c = b[j];
            for (int p = 0; p < k; p++)
                c = fmaf(x[(size_t)i * k + p], w[(size_t)p * n + j], c);
            y[(size_t)i * n + j] = c;
        }
}
