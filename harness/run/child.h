/* Internal to libsamebits: the `run` child of the sweep, the locator and
 * the golden commands, built and described in one place (child.c). */
#ifndef SB_CHILD_H
#define SB_CHILD_H

#include "sb_harness.h"

/* One configuration in a child:
 *   SELF run CASE --threads N --trace FILE [--max-steps M] [--stream FILE]
 *            [--dump PROBE --dump-step S --dump-dir DIR]
 *            [--dump-list FILE --dump-dir DIR] [--batch c->run_batch]
 * (CASE is c->path) with OMP_NUM_THREADS=N, its stderr to stderr_path
 * (NULL: ours). */
typedef struct sb_child_run {
    const char *self_exe;
    const sb_case *c;
    int threads;
    double timeout_seconds;     /* <= 0: no limit */
    int64_t max_steps;          /* > 0: --max-steps */
    const char *trace_path;     /* removed first: a stale trace must not pass for the child's */
    const char *stream_path;    /* NULL, or --stream (removed first, like the trace) */
    const char *stderr_path;
    const char *dump_probe;     /* non-NULL: --dump, --dump-step and --dump-dir */
    int64_t dump_step;
    const char *dump_dir;
    const char *dump_list;      /* non-NULL (dump_probe NULL): --dump-list and --dump-dir */
    /* One process of a resumed configuration (c->run_resume_at > 0,
     * resume.c): checkpoint NULL, both processes; else stop_at > 0:
     * --stop-at and --checkpoint; stop_at 0: --resume checkpoint (a
     * command case: its stop or its restore key's arguments). */
    const char *checkpoint;
    int64_t stop_at;
} sb_child_run;

/* The child of a kind = command case (command.c): its [command] lines with
 * the run's values in place of the placeholders, run by /bin/sh -c in the
 * case file's directory, in a process group of its own (a timeout kills
 * whatever the command started). As sb_child_spawn. */
sb_status sb_command_spawn(const sb_child_run *run, sb_child_result *cr, char *err,
                           size_t errlen);

/* Runs the child to its end (the case's command for a kind = command
 * case; both processes of a resumed configuration, resume.h); SB_ERR_USAGE (a path too long) or SB_ERR_IO
 * (it cannot be started), err saying which, else SB_OK with *cr. */
sb_status sb_child_spawn(const sb_child_run *run, sb_child_result *cr, char *err, size_t errlen);

/* Runs the child to its end and reads run->trace_path into *t when it
 * exits 0. On a nonzero exit err says how it ended, with the child's last
 * stderr line. SB_ERR_INPUT when it exited with SB_EXIT_INPUT (bad case,
 * missing data; err is then the child's own message) or its trace does not
 * read; SB_ERR_IO when it cannot be started; SB_OK otherwise, with *cr
 * saying how it ended. */
sb_status sb_run_child(const sb_child_run *run, sb_child_result *cr, sb_trace *t, char *err,
                       size_t errlen);

/* The first (or last) line of a child's stderr file that holds a letter or
 * digit (not empty, not a rule of dashes around a message), cut to fit;
 * "" when there is none or no file. */
void sb_child_stderr_line(char *out, size_t outlen, const char *path, bool first);

/* How a child that did not exit 0 ended: "exited with status N", "killed
 * by signal N (NAME)" or "timed out after S s", then ": " and the last
 * non-empty line of stderr_path when there is one. */
void sb_child_describe(char *out, size_t outlen, const sb_child_result *cr,
                       const char *stderr_path);

#endif
