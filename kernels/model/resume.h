/* Checkpoint and resume inside a training loop, for every model: when a
 * run stops for its checkpoint, and the restore of a checkpoint's state
 * (sb_train_checkpoint, kernels/sb_model.h). */
#ifndef SB_MODEL_RESUME_H
#define SB_MODEL_RESUME_H

#include "model_ops.h"
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

/* A model's side of checkpoint and resume: its counters, and its own
 * functions on it (m): fresh weights probed at step 0, its training state
 * (sb_cnn_state, sb_gpt_state), and what follows a restore (the probes the
 * next update lists name the last update's). */
typedef struct sb_train_model {
    void *m;
    sb_train_counters *ctr;
    void (*init)(void *m, const sb_model_probe *p);
    void (*state)(void *m, sb_train_state *s);
    void (*resumed)(void *m);
} sb_train_model;

/* The run's start: fresh weights, or (r->checkpoint loads) the
 * checkpoint's tensors and counters, the counters then passed through
 * r->cfg->resume_fault (a resume mutant). SB_ERR_INPUT with err when the
 * checkpoint does not read or does not fit the model. */
sb_status sb_train_start(const sb_train_model *tm, const sb_model_run *r,
                         const sb_model_probe *p, char *err, size_t errlen);
/* Saves the model's state to the run's checkpoint (its stop is due). */
sb_status sb_train_save(const sb_train_model *tm, const sb_train_checkpoint *ck, char *err,
                        size_t errlen);

#endif
