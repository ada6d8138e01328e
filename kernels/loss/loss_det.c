/* The negative log-likelihood, det family. The sums run over position
 * blocks whose bounds depend on the position count alone (SB_ROW_BLOCKS,
 * classifier.h), each from +0 in position order, the block sums added in
 * block order: numerator and denominator alike, whatever the thread count.
 * The unreduced loss has one writer per position, as ref. */
#include "nll.h"

void sb_nll_block_sums(float num[SB_ROW_BLOCKS], float den[SB_ROW_BLOCKS], const float *logprob,
                       const int32_t *labels, const float *weight, const sb_nll_shape *s)
{
    const int m = (int)sb_nll_count(s);
#pragma omp parallel for schedule(static)
    for (int b = 0; b < SB_ROW_BLOCKS; b++) {
        const int end = sb_row_block_begin(m, b + 1);
        float sum = 0.0f, wsum = 0.0f;
        for (int e = sb_row_block_begin(m, b); e < end; e++) {
            sum += sb_nll_term(logprob, labels, weight, s, (size_t)e);
            wsum += sb_nll_weight(weight, labels, s, (size_t)e);
        }
        num[b] = sum;
        den[b] = wsum;
    }
}

void sb_nll_loss_mean_det(float *loss,             /* [1] */
                          const float *logprob,    /* [n][k][d] */
                          const int32_t *labels,   /* [n][d] */
                          const float *weight,     /* [k] */
                          const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    float num[SB_ROW_BLOCKS], den[SB_ROW_BLOCKS];
    sb_nll_block_sums(num, den, logprob, labels, weight, s);
    *loss = sb_nll_blocks_total(num) / sb_nll_blocks_total(den);
}

void sb_nll_loss_sum_det(float *loss,             /* [1] */
                         const float *logprob,    /* [n][k][d] */
                         const int32_t *labels,   /* [n][d] */
                         const float *weight,     /* [k] */
                         const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    float num[SB_ROW_BLOCKS], den[SB_ROW_BLOCKS];
    sb_nll_block_sums(num, den, logprob, labels, weight, s);
    *loss = sb_nll_blocks_total(num);
}

void sb_nll_loss_none_det(float *loss,             /* [n][d] */
                          const float *logprob,    /* [n][k][d] */
                          const int32_t *labels,   /* [n][d] */
                          const float *weight,     /* [k] */
                          const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    const int64_t m = (int64_t)sb_nll_count(s);
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < m; e++)
        loss[e] = sb_nll_term(logprob, labels, weight, s, (size_t)e);
}
