/* FAULT: the sum of squares is split into one contiguous run of det's
 * blocks per thread (the static schedule's share), each thread adding its
 * blocks in order into a partial of its own, and the partials added in
 * thread order: the bracketing follows the thread count. On one thread the
 * one partial adds every block in det's order exactly. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "mutants.h"
#include "optim/grad_norm.h"

void sb_mutant_grad_norm_thread_order(float *norm,         /* [1] */
                                      const float *g,      /* [n] */
                                      size_t n)
{
    const size_t blocks = sb_norm_blocks(n);
    const int threads = omp_get_max_threads();
    float *part = calloc((size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        const int me = omp_get_thread_num(), nth = omp_get_num_threads();
        const size_t lo = blocks * (size_t)me / (size_t)nth;
        const size_t hi = blocks * (size_t)(me + 1) / (size_t)nth;
        for (size_t b = lo; b < hi; b++)
            part[me] += sb_norm_block_sumsq(g, n, b);
    }
    float s = 0.0f;
    for (int t = 0; t < threads; t++)
        s += part[t];
    free(part);
    *norm = sqrtf(s);
}
