/* The negative log-likelihood's shared pieces, for the loss area's files,
 * its tests and the mutants of its ops (kernels/mutants/): one position's
 * term and weight, which every family computes alike, so that the families
 * differ only in how they sum them.
 *
 * Over the m = n d positions e = i d + p (row i, position p) of labels y:
 *   term_e   = -(w[y_e] lp[i][y_e][p])   (weighted), -lp[i][y_e][p] (not)
 *   weight_e = w[y_e] (weighted), 1 (not)
 * both 0 where y_e is ignore_index (ONNX's NegativeLogLikelihoodLoss and
 * PyTorch's nll_loss):
 *   none  loss_e = term_e
 *   sum   loss = sum_e term_e
 *   mean  loss = (sum_e term_e) / (sum_e weight_e), NaN when every label is
 *         ignored (0 / 0, as PyTorch's)
 * The product rounds once; the negation is exact. */
#ifndef SB_NLL_H
#define SB_NLL_H

#include "classifier/classifier.h"

static inline void sb_nll_shape_check(const sb_nll_shape *s)
{
    SB_ASSERT(s->n > 0 && s->k > 0 && s->d > 0);
}

/* the positions the loss sums over */
static inline size_t sb_nll_count(const sb_nll_shape *s)
{
    return (size_t)s->n * (size_t)s->d;
}

static inline float sb_nll_weight(const float *w, const int32_t *labels, const sb_nll_shape *s,
                                  size_t e)
{
    const int32_t y = labels[e];
    if (y == s->ignore_index)
        return 0.0f;
    SB_ASSERT(y >= 0 && y < s->k);
    return s->weighted ? w[y] : 1.0f;
}

static inline float sb_nll_term(const float *lp, const int32_t *labels, const float *w,
                                const sb_nll_shape *s, size_t e)
{
    const int32_t y = labels[e];
    if (y == s->ignore_index)
        return 0.0f;
    SB_ASSERT(y >= 0 && y < s->k);
    const size_t d = (size_t)s->d, i = e / d, p = e % d;
    const float v = lp[(i * (size_t)s->k + (size_t)y) * d + p];
    return s->weighted ? -(w[y] * v) : -v;
}

/* Det's sums: num[b] and den[b] are the sums, from +0 in position order, of
 * the terms and the weights of position block b (SB_ROW_BLOCKS blocks whose
 * bounds depend on the position count alone; blocks in parallel). */
void sb_nll_block_sums(float num[SB_ROW_BLOCKS], float den[SB_ROW_BLOCKS],
                       const float *logprob,   /* [n][k][d] */
                       const int32_t *labels,  /* [n][d] */
                       const float *weight,    /* [k] */
                       const sb_nll_shape *s);

/* The block sums added in block order from +0. */
static inline float sb_nll_blocks_total(const float part[SB_ROW_BLOCKS])
{
    float sum = 0.0f;
    for (int b = 0; b < SB_ROW_BLOCKS; b++)
        sum += part[b];
    return sum;
}

#endif
