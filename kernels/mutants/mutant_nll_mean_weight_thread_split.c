/* FAULT: the weighted NLL mean's denominator, the sum of det's position
 * blocks' weight sums, is split into one contiguous run of blocks per
 * thread (the static schedule's share), each thread's partial added in
 * thread order: the numerator keeps det's order, so the loss's bits follow
 * the thread count through its denominator alone. One thread's one run is
 * det's order. */
#include <omp.h>
#include <stdlib.h>

#include "loss/nll.h"
#include "mutants.h"

void sb_mutant_nll_mean_weight_thread_split(float *loss,             /* [1] */
                                            const float *logprob,    /* [n][k][d] */
                                            const int32_t *labels,   /* [n][d] */
                                            const float *weight,     /* [k] */
                                            const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    float num[SB_ROW_BLOCKS], den[SB_ROW_BLOCKS];
    sb_nll_block_sums(num, den, logprob, labels, weight, s);
    const int threads = omp_get_max_threads();
    float *part = calloc((size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float wsum = 0.0f;
#pragma omp for schedule(static)
        for (int b = 0; b < SB_ROW_BLOCKS; b++)
            wsum += den[b];
        part[omp_get_thread_num()] = wsum;
    }
    float total = 0.0f;
    for (int t = 0; t < threads; t++)
        total += part[t];
    free(part);
    *loss = sb_nll_blocks_total(num) / total;
}
