/* Shared pieces of the classifier kernels: the per-row steps of a stable
 * softmax, the fixed row blocks of the det reductions, and the det and loose
 * entries the register function installs. */
#ifndef SB_CLASSIFIER_H
#define SB_CLASSIFIER_H

#include "sb_kernels.h"

/* The largest logit of a row (NaNs are skipped here; they reach the output
 * through the exponentials). Exact, so its order does not matter. */
float sb_row_max(const float *z /* [k] */, int k);

/* sum_j exp(z[j] - m) in j order: the one reduction of a softmax row. */
float sb_row_expsum(const float *z /* [k] */, float m, int k);

/* The det reductions over rows split [0, n) into SB_ROW_BLOCKS blocks whose
 * bounds depend on n alone, reduce each block in row order, and combine the
 * block results in block order: the thread count never enters. 64 blocks
 * keep up to 64 threads busy. */
#define SB_ROW_BLOCKS 64

static inline int sb_row_block_begin(int n, int b)
{
    return (int)((int64_t)n * b / SB_ROW_BLOCKS);
}

sb_softmax_fwd_fn sb_softmax_fwd_par;
sb_xent_loss_fn sb_xent_loss_det;
sb_xent_loss_fn sb_xent_loss_loose;
sb_softmax_xent_bwd_fn sb_softmax_xent_bwd_par;
sb_accuracy_fn sb_accuracy_det;
sb_accuracy_fn sb_accuracy_loose;

#endif
