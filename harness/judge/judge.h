/* Internal to libsamebits: what the judge's files share (compare.c,
 * origins.c, rerun.c, locate.c, repeats.c). */
#ifndef SB_JUDGE_H
#define SB_JUDGE_H

#include "sb_harness.h"

/* The two records tap the same tensor of the same program point (step,
 * name, dtype, shape). */
bool sb_records_same_place(const sb_record *a, const sb_record *b);

/* A shallow view of t's records before its first record of step `steps` or
 * later: the same records, fewer of them (not to be freed). */
sb_trace sb_trace_steps_view(const sb_trace *t, int64_t steps);

/* The records of t before its first record of step `steps` or later. */
size_t sb_trace_records_before_step(const sb_trace *t, int64_t steps);
/* The index where a comparison from step `from` starts in both traces:
 * their first record of that step when both have as many records before
 * it, else the shorter prefix's end. */
size_t sb_trace_first_of_step(const sb_trace *golden, const sb_trace *run, int64_t from);

/* The first divergence of run from golden among the records of step
 * `from` on (steps > 0: and before step `steps`, as sb_trace_compare_steps):
 * a run resumed at step `from` against the uninterrupted golden. run is
 * the whole run (run/resume.h: the records before `from` come from the
 * process that wrote the checkpoint); those records are not compared, but
 * the inputs of the later ones are looked up among them, in both traces, so
 * an op of step `from` on whose inputs are the golden's is an origin. A
 * run with another count of records before `from` parts at the first
 * record after the shorter prefix (structural). */
void sb_trace_compare_from_step(const sb_trace *golden, const sb_trace *run, int64_t from,
                                int64_t steps, sb_divergence *d);
/* sb_trace_origins among the records of step `from` on, as
 * sb_trace_compare_from_step compares them. */
void sb_trace_origins_from_step(const sb_trace *golden, const sb_trace *run, int64_t from,
                                int64_t steps, sb_origins *o);
/* sb_trace_origins_list among the records of step `from` on (0: all). */
int sb_trace_origins_list_from_step(const sb_trace *golden, const sb_trace *run, int64_t from,
                                    int64_t steps, sb_divergence *out, int cap);

/* One re-run of a configuration that dumps the probes of divergences:
 * <dir>/run.trace, <dir>/dump.list (the probes asked for), for each
 * divergence <dir>/<step>/<probe>.npy and <probe>.bound.npy, and
 * <dir>/stderr.log, with <dir> = <work_dir>/<threads><suffix>. */
typedef struct sb_rerun {
    int threads;
    char dir[768];
    char trace[1024];
    char list[1024];
    char log[1024];
} sb_rerun;

/* Fills the paths and creates the directory. */
sb_status sb_rerun_paths(sb_rerun *r, const char *work_dir, int threads, const char *suffix,
                         char *err, size_t errlen);
/* <dir>/<step>/<probe><suffix>.npy of d; false when it does not fit. */
bool sb_rerun_dump_path(char *out, size_t len, const sb_rerun *r, const sb_divergence *d,
                        const char *suffix);
/* Runs the child dumping the probe of each of ds[0..n) at its step (stale
 * dumps removed first) and reads its trace into *t (initialised here; free
 * it). SB_ERR_IO when the child fails, SB_ERR_INPUT when its trace does not
 * read or has not a divergence's probe at its record. */
sb_status sb_rerun_once(const sb_rerun *r, const sb_case *c, const char *self_exe,
                        sb_divergence *const *ds, int n, sb_trace *t, char *err,
                        size_t errlen);
/* The re-run's trace t has hash `want` at d's record. */
bool sb_rerun_has(const sb_trace *t, const sb_divergence *d, const sb_hash *want);
/* Diffs d's dumps of the two re-runs; the bound comes from a's side. */
sb_status sb_rerun_dumps_diff(const sb_rerun *a, const sb_rerun *b, const sb_divergence *d,
                              sb_elem_diff *e, char *err, size_t errlen);

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
