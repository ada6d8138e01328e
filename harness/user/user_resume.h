/* Internal to libsamebits: the resume hook of a user's kernel
 * (user_resume.c; samebits.h, sb_user_save_fn): the probe context its run
 * function is handed, which knows the steps the process runs, and the
 * checkpoint file around the kernel's own saved state. */
#ifndef SB_USER_RESUME_H
#define SB_USER_RESUME_H

#include "sb_harness.h"

/* The run function's probe_ctx: the run's sink (first, so that the sink's
 * own probe hook takes it), the steps it runs, and the first probe it made
 * outside them. */
typedef struct user_probe_ctx {
    sb_run_sink sink;
    sb_user_steps steps;
    bool check_steps;           /* a kernel with a resume hook: every probe in steps */
    bool steps_asked;           /* the run called sb_user_run_steps */
    int64_t stray_step;         /* stray_probe[0]: the first probe outside steps */
    char stray_probe[128];
} user_probe_ctx;

/* The probe hook the run function is handed, with a user_probe_ctx. */
sb_probe_fn sb_user_probe;

/* Writes path: a header naming kernel k (case c) and `step`, then what
 * k->save writes; atomically (support/out_file.c). SB_ERR_IO or the save's
 * status, with err. */
sb_status sb_user_checkpoint_save(const sb_user_kernel *k, const sb_case *c, const char *path,
                                  int64_t step, char *err, size_t errlen);

/* Reads path back into k->ctx through k->restore and says the step it
 * resumes at; SB_ERR_INPUT with one line naming the file for one that is
 * no checkpoint of this samebits, of another kernel or version of it, of
 * a step outside 1..steps-1, that k->restore refuses, or that holds bytes
 * after what it read. */
sb_status sb_user_checkpoint_restore(const sb_user_kernel *k, const sb_case *c,
                                     const char *path, int64_t *step, char *err,
                                     size_t errlen);

#endif
