/* Internal to libsamebits: a configuration resumed from a checkpoint, the
 * run hook of the resume axis (resume.c; harness/FORMATS.md, "Checkpoints").
 *
 * "Resume at K, T threads" is two children of one case at T threads: the
 * first trains steps 0..K-1 and writes a checkpoint (a training case's or
 * a user program's `run --stop-at K --checkpoint FILE`, a command case's
 * command with its stop key's arguments), the second restores it in a new
 * process and trains on (`run --resume FILE`, the restore key's
 * arguments); the harness names FILE and checks that the first left it,
 * not empty. Their traces, the first's records (steps
 * below K) then the second's (steps K on), make the configuration's trace:
 * the whole run as if it were one, so a comparison with the uninterrupted
 * golden (sb_trace_compare_from_step, or whole), the origins and the
 * locator take it like any run's, and the locator's re-runs of it go
 * through the same two processes (c->run_resume_at is part of the case the
 * re-run is given). */
#ifndef SB_RUN_RESUME_H
#define SB_RUN_RESUME_H

#include "run/child.h"

/* The run hook: configuration "resume at `at`" of run->c at run->threads,
 * as sb_run_child runs a plain one (the same run fields, the same returns:
 * *cr how it ended, *t the configuration's trace when it finished, err),
 * for a case with a resume hook whose whole run takes more than `at` steps
 * (1 <= at; a child refuses any other case or step with exit status 2,
 * SB_ERR_INPUT here). A crash or timeout of either process is the
 * configuration's, and so is a first process that exits 0 without its
 * checkpoint (cr->end SB_CHILD_NO_CHECKPOINT), its
 * stream (run->stream_path) holding the records of both as far as they
 * got; each process has run->timeout_seconds. */
sb_status sb_resume_run(const sb_child_run *run, int64_t at, sb_child_result *cr, sb_trace *t,
                        char *err, size_t errlen);

/* sb_child_spawn of a case with run->c->run_resume_at > 0 (and no
 * run->checkpoint): both processes, their traces joined into
 * run->trace_path. A dumping re-run whose dumps are all before the resume
 * step is one uninterrupted process (those steps are the same in both);
 * otherwise the resuming process dumps, and a listed probe before the
 * resume step never comes to it (it fails, naming the probe). */
sb_status sb_resume_spawn(const sb_child_run *run, sb_child_result *cr, char *err,
                          size_t errlen);

/* One line on `out` ("warning: WHERE: ...") when a record of `run` from
 * step `at` on names an input SB_TRACE_UNTRACED ("?") where the golden's
 * same record names one: a resumed process that did not name the tensors
 * it restored (a user's kernel: sb_probes_restored), whose origins then
 * cannot be told from upstream differences. The records are paired in
 * order while both traces agree on step and name; nothing is said of the
 * rest. */
void sb_resume_names_warn(const sb_case *c, const char *where, const sb_trace *golden,
                          const sb_trace *run, int64_t at, FILE *out);

#endif
