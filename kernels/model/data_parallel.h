/* What every model's data-parallel step shares (sb_model.h, sb_grad_reduce;
 * data_parallel.c): which chunks or samples of a global batch a rank
 * computes, and the det or loose combine of the passes' gradients. A model
 * gives a pass over some rows of its global batch; the combine runs the
 * rank's passes and leaves every rank with the same combined gradients. */
#ifndef SB_DATA_PARALLEL_H
#define SB_DATA_PARALLEL_H

#include "model_ops.h"
#include "sb_model.h"

/* The unprobed forward and backward of samples [first, first + rows) of the
 * n-sample global batch of `model`: its gradients, then its part of the
 * batch loss (the pass's mean loss times rows / n), into `row`. The loss
 * gradient divides by the global batch, so the rows add up to the batch's
 * gradient. `quiet` has no hook. */
typedef void sb_rows_pass_fn(void *model, int first, int rows, int n, float *row,
                             const sb_model_probe *quiet);

/* Whether cfg's reduce, chunk and combine hook mean something. */
bool sb_data_parallel_config_ok(const sb_train_config *cfg);

/* Rows of the partials buffer of a step over batches of at most `batch`
 * samples: one per chunk (det), else one. */
size_t sb_partials_rows(const sb_train_config *cfg, int batch);

/* One data-parallel combine over an n-sample batch, as cfg->reduce and
 * cfg->combine say (no hook: one rank). partials is [sb_partials_rows][total],
 * a row being the gradients and the loss; on return its first row holds the
 * combined gradients and the batch loss, the same on every rank. det: one
 * pass per chunk of cfg->chunk samples this rank owns (sb_chunks_owned), the
 * rows gathered to every rank and added in chunk order; loose: one pass over
 * the rank's share (sb_share_owned), summed over the ranks. cfg->rank_fault
 * plants a rank mutant's fault. */
void sb_data_parallel_combine(const sb_train_config *cfg, int n, int64_t step, float *partials,
                              size_t total, sb_rows_pass_fn *pass, void *model);

#endif
