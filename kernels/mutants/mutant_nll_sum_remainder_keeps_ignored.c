/* FAULT: the summed NLL as the unreduced loss's loop followed by det's
 * blocked sum, where each thread's share of the positions runs as a main
 * loop over groups of 64, which skips the labels equal to ignore_index,
 * and a separately written remainder loop (tail_paths.h) that never tests
 * for it: an ignored position of the remainder adds its term. With an
 * ignore_index outside the classes (PyTorch's -100) that term reads no
 * class and aborts, as a device-side assertion would. On one thread over a
 * multiple of 64 positions there is no remainder: det's bits. */
#include <limits.h>
#include <stdlib.h>

#include "mutants.h"
#include "tail_paths.h"

static float term_keeps_ignored(const float *logprob, const int32_t *labels, const float *weight,
                                const sb_nll_shape *s, size_t e)
{
    sb_nll_shape all = *s;
    all.ignore_index = INT_MIN;
    return sb_nll_term(logprob, labels, weight, &all, e);
}

void sb_mutant_nll_sum_remainder_keeps_ignored(float *loss,             /* [1] */
                                               const float *logprob,    /* [n][k][d] */
                                               const int32_t *labels,   /* [n][d] */
                                               const float *weight,     /* [k] */
                                               const sb_nll_shape *s)
{
    const int m = (int)sb_nll_count(s);
    float *terms = malloc((size_t)m * sizeof *terms), num[SB_ROW_BLOCKS];
    SB_ASSERT(terms != NULL);
    sb_mutant_nll_terms_with_remainder(terms, logprob, labels, weight, s, term_keeps_ignored);
    for (int b = 0; b < SB_ROW_BLOCKS; b++) {
        num[b] = 0.0f;
        for (int e = sb_row_block_begin(m, b); e < sb_row_block_begin(m, b + 1); e++)
            num[b] += terms[e];
    }
    free(terms);
    *loss = sb_nll_blocks_total(num);
}
