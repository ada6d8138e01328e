/* Checkpoint and resume inside a training loop, for every model: when a
 * run stops for its checkpoint, and the restore of a checkpoint's state
 * (sb_train_checkpoint, kernels/sb_model.h). */
#ifndef SB_MODEL_RESUME_H
#define SB_MODEL_RESUME_H

#include "sb_model.h"

/* The run stops for its checkpoint now that `steps` steps are done. */
static inline bool sb_train_stop_due(const sb_train_checkpoint *ck, int64_t steps)
{
    return ck && ck->stop_at > 0 && steps == ck->stop_at;
}

/* The run starts from a checkpoint instead of fresh weights. */
static inline bool sb_train_resuming(const sb_train_checkpoint *ck)
{
    return ck && ck->load;
}

/* Loads the checkpoint into s (the model's own tensors, by name and
 * count) and its counters, then lets cfg->resume_fault (a resume mutant)
 * change the counters. SB_ERR_INPUT with err when the checkpoint does not
 * fit the model. */
sb_status sb_train_restore(const sb_train_checkpoint *ck, const sb_train_config *cfg,
                           sb_train_state *s, char *err, size_t errlen);

#endif
