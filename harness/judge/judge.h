/* Internal to libsamebits: what the judge's files share (compare.c,
 * origins.c, rerun.c, locate.c, repeats.c). */
#ifndef SB_JUDGE_H
#define SB_JUDGE_H

#include "samebits.h"

/* The two records tap the same tensor of the same program point (step,
 * name, dtype, shape). */
bool sb_records_same_place(const sb_record *a, const sb_record *b);

/* An op of the kernel list without a reduction: no reordering can move
 * its bits (ops the list does not know, a user's own, are not). */
bool sb_op_cannot_reorder(const char *op);

/* A shallow view of t's records before its first record of step `steps` or
 * later: the same records, fewer of them (not to be freed). */
sb_trace sb_trace_steps_view(const sb_trace *t, int64_t steps);

/* One re-run of a configuration that dumps the probe of a divergence:
 * <dir>/run.trace, <dir>/<probe>.npy, <dir>/<probe>.bound.npy,
 * <dir>/stderr.log, with <dir> = <work_dir>/<threads><suffix>. */
typedef struct sb_rerun {
    int threads;
    char dir[768];
    char trace[1024];
    char dump[1024];
    char bound[1024];
    char log[1024];
} sb_rerun;

/* Fills the paths and creates the directory. */
sb_status sb_rerun_paths(sb_rerun *r, const char *work_dir, int threads, const char *suffix,
                         const char *probe, char *err, size_t errlen);
/* Runs the child dumping d's probe at d's step (stale dumps removed first)
 * and reads its trace into *t (initialised here; free it). SB_ERR_IO when the
 * child fails, SB_ERR_INPUT when its trace does not read or has not d's probe
 * at d's record; *rec is then the re-run's record at d->index. */
sb_status sb_rerun_once(const sb_rerun *r, const sb_case *c, const char *self_exe,
                        const sb_divergence *d, sb_trace *t, const sb_record **rec,
                        char *err, size_t errlen);
/* sb_rerun_once until the re-run's record has hash `want`, at most
 * SB_LOCATE_TRIES times; *tries says how many ran, *reproduced whether the
 * last one has it. */
sb_status sb_rerun_reproduce(const sb_rerun *r, const sb_case *c, const char *self_exe,
                             const sb_divergence *d, const sb_hash *want, int *tries,
                             bool *reproduced, char *err, size_t errlen);
/* Diffs the two re-runs' dumps; the bound comes from a's side. */
sb_status sb_rerun_dumps_diff(const sb_rerun *a, const sb_rerun *b, sb_elem_diff *e,
                              char *err, size_t errlen);

/* The slot of a sweep's reference re-runs (n of them) for a locate of d:
 * the one made for d's record, else an unused one, else the last. */
sb_locate_reference *sb_locate_reference_pick(sb_locate_reference *slots, int n,
                                              const sb_divergence *d);

/* Compares the traces of the repeats of one configuration (runs[i] with
 * traces[i], NULL for a run that left none) with the first that left one.
 * Every run that parts from it gets repeats_part and repeats_with (the first
 * run: where the earliest of the others parts from it). True when any part. */
bool sb_repeats_compare(sb_run_result *runs, const sb_trace *const *traces, int n,
                        int64_t max_steps);
/* Re-runs the configuration at `threads` dumping d's probe (work_dir/<T>.r<k>),
 * up to 4 times, until two re-runs agree before d's record and part at it, and
 * diffs their dumps into d->elem (d->have_elements; d->reruns: how many ran).
 * Without two such re-runs d has no elements. */
sb_status sb_repeats_locate(const sb_case *c, const char *self_exe, int threads,
                            const char *work_dir, sb_divergence *d, char *err, size_t errlen);

#endif
