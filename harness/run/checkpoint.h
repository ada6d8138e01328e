/* Internal to libsamebits: the checkpoint file of a training case
 * (checkpoint.c; the format is harness/FORMATS.md, "Checkpoints"). */
#ifndef SB_RUN_CHECKPOINT_H
#define SB_RUN_CHECKPOINT_H

#include "sb_harness.h"

/* The file a run saves its state to or resumes from, for case c. */
typedef struct sb_checkpoint_file {
    const sb_case *c;
    const char *path;
} sb_checkpoint_file;

/* An sb_train_checkpoint on f: stop_at > 0, save to f->path after that many
 * steps; else load from f->path. A save is written with the atomic writer
 * (support/out_file.c); a load refuses, as SB_ERR_INPUT with one line
 * naming the file, a file that is not a checkpoint, of another format
 * version, of another case (digest), truncated, corrupt (its hash), or
 * whose tensors are not the model's. */
sb_train_checkpoint sb_checkpoint_bind(sb_checkpoint_file *f, int64_t stop_at);

/* The step a checkpoint file resumes at (its `step` line), checked as a
 * load checks the whole file; SB_ERR_INPUT with err otherwise. */
sb_status sb_checkpoint_step(const char *path, int64_t *step, char *err, size_t errlen);

#endif
