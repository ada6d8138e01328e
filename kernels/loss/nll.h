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
 * The product rounds once; the negation is exact.
 *
 * The gradients with respect to lp, from the loss's gradient g (dloss: a
 * scalar for mean and sum, one per position for none), are 0 but at each
 * kept position's target (PyTorch's nll_loss_backward):
 *   dlp[i][y_e][p] = w[y_e] scale_e (weighted), scale_e (not)
 *   scale_e = -(g / W) (mean, W = sum_e weight_e as the forward sums it),
 *             -g (sum), -g_e (none)
 * The quotient and the product round once each. */
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

/* position e's gradient at its target, from its scale (above) */
static inline float sb_nll_grad(const float *w, const int32_t *labels, const sb_nll_shape *s,
                                size_t e, float scale)
{
    const int32_t y = labels[e];
    if (y == s->ignore_index)
        return 0.0f;
    SB_ASSERT(y >= 0 && y < s->k);
    return s->weighted ? w[y] * scale : scale;
}

/* the offset in lp [n][k][d] of position e's target */
static inline size_t sb_nll_target_at(const int32_t *labels, const sb_nll_shape *s, size_t e)
{
    const size_t d = (size_t)s->d, i = e / d, p = e % d;
    const int32_t y = labels[e] == s->ignore_index ? 0 : labels[e];
    return (i * (size_t)s->k + (size_t)y) * d + p;
}

/* Row i of a gradient: its k d floats 0, then each position's target set
 * from scale_e = -q_e (an ignored position's 0, at class 0); q: one value,
 * g / W (mean) or g (sum), or one per position, g_e (none). Every family
 * writes its rows so. */
static inline void sb_nll_grad_row(float *dlp, const float *q, bool per_position,
                                   const int32_t *labels, const float *w,
                                   const sb_nll_shape *s, size_t i)
{
    const size_t d = (size_t)s->d, row = (size_t)s->k * d;
    for (size_t j = 0; j < row; j++)
        dlp[i * row + j] = 0.0f;
    for (size_t e = i * d; e < (i + 1) * d; e++)
        dlp[sb_nll_target_at(labels, s, e)] =
            sb_nll_grad(w, labels, s, e, -q[per_position ? e : 0]);
}

/* Det's sums: num[b] and den[b] are the sums, from +0 in position order, of
 * the terms and the weights of position block b (SB_ROW_BLOCKS blocks whose
 * bounds depend on the position count alone; blocks in parallel); num NULL:
 * the weights alone (logprob not read). */
void sb_nll_block_sums(float num[SB_ROW_BLOCKS], float den[SB_ROW_BLOCKS],
                       const float *logprob,   /* [n][k][d] */
                       const int32_t *labels,  /* [n][d] */
                       const float *weight,    /* [k] */
                       const sb_nll_shape *s);

/* Every row of a gradient (sb_nll_grad_row), rows in parallel. */
void sb_nll_grad_rows(float *dlogprob,       /* [n][k][d] */
                      const float *q,        /* [1], or [n][d] when per_position */
                      bool per_position,
                      const int32_t *labels, /* [n][d] */
                      const float *weight,   /* [k] */
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
