/* The negative log-likelihood, det family. The sums run over position
 * blocks whose bounds depend on the position count alone (SB_ROW_BLOCKS,
 * classifier.h), each from +0 in position order, the block sums added in
 * block order: numerator and denominator alike, whatever the thread count.
 * The unreduced loss has one writer per position, as ref, and each
 * gradient one writer per row. */
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
            if (num != NULL)
                sum += sb_nll_term(logprob, labels, weight, s, (size_t)e);
            wsum += sb_nll_weight(weight, labels, s, (size_t)e);
        }
        if (num != NULL)
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

/* The gradients: parallel over rows, one writer a row (nll.h); the mean's
 * W is the forward's, det's blocks added in block order. */
void sb_nll_grad_rows(float *dlogprob, const float *q, bool per_position, const int32_t *labels,
                      const float *weight, const sb_nll_shape *s)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        sb_nll_grad_row(dlogprob, q, per_position, labels, weight, s, (size_t)i);
}

void sb_nll_loss_mean_bwd_det(float *dlogprob,         /* [n][k][d] */
                              const float *dloss,      /* [1] */
                              const int32_t *labels,   /* [n][d] */
                              const float *weight,     /* [k] */
                              const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    float den[SB_ROW_BLOCKS];
    sb_nll_block_sums(NULL, den, NULL, labels, weight, s);
    const float q = *dloss / sb_nll_blocks_total(den);
    sb_nll_grad_rows(dlogprob, &q, false, labels, weight, s);
}

void sb_nll_loss_sum_bwd_det(float *dlogprob,         /* [n][k][d] */
                             const float *dloss,      /* [1] */
                             const int32_t *labels,   /* [n][d] */
                             const float *weight,     /* [k] */
                             const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    sb_nll_grad_rows(dlogprob, dloss, false, labels, weight, s);
}

void sb_nll_loss_none_bwd_det(float *dlogprob,         /* [n][k][d] */
                              const float *dloss,      /* [n][d] */
                              const int32_t *labels,   /* [n][d] */
                              const float *weight,     /* [k] */
                              const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    sb_nll_grad_rows(dlogprob, dloss, true, labels, weight, s);
}
