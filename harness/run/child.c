/* The `run` child: its command line, spawning it, reading its trace, and
 * saying how it ended, for the sweep, the locator and the golden commands. */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "resume.h"
#include "sb_build_info.h"
#include "support/support.h"

/* posix_spawn takes char *const argv[]: it copies the strings and never
 * writes them, but the type wants them writable, hence copies in buffers. */
static bool arg_copy(char *out, size_t outlen, const char *s)
{
    return (size_t)snprintf(out, outlen, "%s", s) < outlen;
}

static size_t args_append(char **argv, size_t n, char *const *more, size_t n_more)
{
    memcpy(argv + n, more, n_more * sizeof *more);
    return n + n_more;
}

sb_status sb_child_spawn(const sb_child_run *r, sb_child_result *cr, char *err, size_t errlen)
{
    if (r->c->run_resume_at > 0 && !r->checkpoint)
        return sb_resume_spawn(r, cr, err, errlen);
    if (r->c->kind == SB_CASE_COMMAND)
        return sb_command_spawn(r, cr, err, errlen);
    char exe[1024], path[sizeof r->c->path], trace[1024], stream[1024], probe[128], dir[1024],
        list[1024], ckpt[1024];
    char threads[16], steps[24], step[24], batch[16], stop[24];
    if (!arg_copy(exe, sizeof exe, r->self_exe) || !arg_copy(path, sizeof path, r->c->path) ||
        !arg_copy(trace, sizeof trace, r->trace_path) ||
        (r->stream_path && !arg_copy(stream, sizeof stream, r->stream_path)) ||
        (r->dump_probe && (!arg_copy(probe, sizeof probe, r->dump_probe) ||
                           !arg_copy(dir, sizeof dir, r->dump_dir))) ||
        (r->dump_list && (!arg_copy(list, sizeof list, r->dump_list) ||
                          !arg_copy(dir, sizeof dir, r->dump_dir))) ||
        (r->checkpoint && !arg_copy(ckpt, sizeof ckpt, r->checkpoint))) {
        sb_err_set(err, errlen, "%s: path too long", r->trace_path);
        return SB_ERR_USAGE;
    }
    snprintf(threads, sizeof threads, "%d", r->threads);
    snprintf(steps, sizeof steps, "%" PRId64, r->max_steps);
    snprintf(step, sizeof step, "%" PRId64, r->dump_step);
    snprintf(batch, sizeof batch, "%d", r->c->run_batch);
    snprintf(stop, sizeof stop, "%" PRId64, r->stop_at);
    char arg_run[] = "run", arg_threads[] = "--threads", arg_trace[] = "--trace",
         arg_steps[] = "--max-steps", arg_dump[] = "--dump", arg_step[] = "--dump-step",
         arg_dir[] = "--dump-dir", arg_stream[] = "--stream", arg_batch[] = "--batch",
         arg_list[] = "--dump-list", arg_stop[] = "--stop-at", arg_ckpt[] = "--checkpoint",
         arg_resume[] = "--resume";
    char *run[] = {exe, arg_run, path, arg_threads, threads, arg_trace, trace};
    char *limit[] = {arg_steps, steps};
    char *streaming[] = {arg_stream, stream};
    char *dump[] = {arg_dump, probe, arg_step, step, arg_dir, dir};
    char *dumps[] = {arg_list, list, arg_dir, dir};
    char *batching[] = {arg_batch, batch};
    char *stopping[] = {arg_stop, stop, arg_ckpt, ckpt};
    char *resuming[] = {arg_resume, ckpt};
    /* a rank configuration: the same command line, run by samebits-mpi
     * (beside self_exe) under mpirun, ranks not bound to cores so that each
     * can have its threads */
    char mpirun[] = SB_MPIRUN, over[] = "--oversubscribe", bind[] = "--bind-to",
         none[] = "none", np[] = "-np", ranks[16], mpi_exe[1100];
    char *job[] = {mpirun, over, bind, none, np, ranks, mpi_exe};
    bool ranked = r->c->run_ranks > 0;
    if (ranked) {
        const char *slash = strrchr(r->self_exe, '/');
        int dir_len = slash ? (int)(slash - r->self_exe) + 1 : 0;
        snprintf(ranks, sizeof ranks, "%d", r->c->run_ranks);
        if (snprintf(mpi_exe, sizeof mpi_exe, "%.*ssamebits-mpi", dir_len, r->self_exe) >=
            (int)sizeof mpi_exe) {
            sb_err_set(err, errlen, "%s: path too long", r->self_exe);
            return SB_ERR_USAGE;
        }
        run[0] = mpi_exe;
    }
    char *argv[sizeof job / sizeof job[0] + sizeof run / sizeof run[0] +
               sizeof limit / sizeof limit[0] + sizeof streaming / sizeof streaming[0] +
               sizeof dump / sizeof dump[0] + sizeof batching / sizeof batching[0] +
               sizeof stopping / sizeof stopping[0] + 1];
    size_t n = 0;
    if (ranked)
        n = args_append(argv, n, job, sizeof job / sizeof job[0] - 1);
    n = args_append(argv, n, run, sizeof run / sizeof run[0]);
    if (r->max_steps > 0)
        n = args_append(argv, n, limit, sizeof limit / sizeof limit[0]);
    if (r->stream_path)
        n = args_append(argv, n, streaming, sizeof streaming / sizeof streaming[0]);
    if (r->dump_probe)
        n = args_append(argv, n, dump, sizeof dump / sizeof dump[0]);
    else if (r->dump_list)
        n = args_append(argv, n, dumps, sizeof dumps / sizeof dumps[0]);
    if (r->c->run_batch > 0)
        n = args_append(argv, n, batching, sizeof batching / sizeof batching[0]);
    if (r->checkpoint && r->stop_at > 0)
        n = args_append(argv, n, stopping, sizeof stopping / sizeof stopping[0]);
    else if (r->checkpoint)
        n = args_append(argv, n, resuming, sizeof resuming / sizeof resuming[0]);
    argv[n] = NULL;

    unlink(r->trace_path);      /* a stale trace must not pass for this child's */
    for (int k = 1; ranked && k < r->c->run_ranks; k++) {
        char other[1100];
        snprintf(other, sizeof other, "%s.rank%d", r->trace_path, k);
        unlink(other);
    }
    if (r->stream_path)
        unlink(r->stream_path);
    sb_spawn_options so = {.threads = r->threads, .timeout_seconds = r->timeout_seconds,
                           .stderr_path = r->stderr_path, .own_group = ranked,
                           .mpi_as_root = ranked, .env = r->c->run_env,
                           .n_env = r->c->n_run_env};
    sb_status st = sb_spawn_with(argv, &so, cr);
    if (st != SB_OK)
        sb_err_set(err, errlen, "%s: cannot start: %s", r->self_exe,
                   cr->start_errno ? strerror(cr->start_errno) : sb_status_name(st));
    return st;
}

/* a line with no letter or digit: a rule of dashes around a launcher's
 * message (mpirun's boxes), which says nothing quoted alone */
static bool decoration(const char *line)
{
    for (; *line; line++)
        if (isalnum((unsigned char)*line))
            return false;
    return true;
}

void sb_child_stderr_line(char *out, size_t outlen, const char *path, bool first)
{
    out[0] = '\0';
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        size_t n = strlen(line);
        if (decoration(line))
            continue;
        if (n >= outlen)
            n = outlen - 1;     /* a long line is cut, not dropped */
        memcpy(out, line, n);
        out[n] = '\0';
        if (first)
            break;
    }
    fclose(f);
}

void sb_child_describe(char *out, size_t outlen, const sb_child_result *cr,
                       const char *stderr_path)
{
    char line[200];
    sb_child_stderr_line(line, sizeof line, stderr_path, false);
    const char *sep = line[0] ? ": " : "";
    switch (cr->end) {
    case SB_CHILD_EXITED:
        snprintf(out, outlen, "exited with status %d%s%s", cr->exit_code, sep, line);
        return;
    case SB_CHILD_SIGNALED:
        snprintf(out, outlen, "killed by signal %d (%s)%s%s", cr->signal, strsignal(cr->signal),
                 sep, line);
        return;
    case SB_CHILD_TIMED_OUT:
        /* milliseconds below a second: a timeout of 0.001 s is not "0.0 s" */
        snprintf(out, outlen, "timed out after %.*f s%s%s", cr->seconds < 1 ? 3 : 1,
                 cr->seconds, sep, line);
        return;
    case SB_CHILD_NO_CHECKPOINT:
        snprintf(out, outlen, "exited with status 0 and left no checkpoint (missing or "
                 "empty)%s%s", sep, line);
        return;
    }
}

sb_status sb_run_child(const sb_child_run *run, sb_child_result *cr, sb_trace *t, char *err,
                       size_t errlen)
{
    sb_status st = sb_child_spawn(run, cr, err, errlen);
    if (st != SB_OK)
        return st;
    if (cr->end == SB_CHILD_EXITED && cr->exit_code == 0) {
        if (sb_trace_read(t, run->trace_path, err, errlen) != SB_OK)
            return SB_ERR_INPUT;
        /* a producer's trace is of this case: its name, digest and family
         * are the case's, whatever the producer wrote (PRODUCERS.md) */
        if (run->c->kind == SB_CASE_COMMAND)
            sb_trace_header_name(&t->header, run->c);
        return SB_OK;
    }
    if (cr->end == SB_CHILD_EXITED && cr->exit_code == SB_EXIT_INPUT) {
        /* the child's own one-line message names the file and position */
        char line[200];
        sb_child_stderr_line(line, sizeof line, run->stderr_path, false);
        if (line[0])
            sb_err_set(err, errlen, "%s", line);
        else
            sb_child_describe(err, errlen, cr, run->stderr_path);
        return SB_ERR_INPUT;
    }
    sb_child_describe(err, errlen, cr, run->stderr_path);
    return SB_OK;
}

/* Copies what a child wrote on stderr to ours. */
static void stderr_forward(const char *stderr_path)
{
    FILE *f = fopen(stderr_path, "r");
    if (!f)
        return;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, stderr);
    fclose(f);
}

int sb_reference_run(const sb_case *c, const char *self_exe, const char *work_dir, sb_trace *t,
                     char *err, size_t errlen)
{
    char trace_path[1024], stderr_path[1024];
    if ((size_t)snprintf(trace_path, sizeof trace_path, "%s/%s.trace", work_dir, c->name) >=
            sizeof trace_path ||
        (size_t)snprintf(stderr_path, sizeof stderr_path, "%s/%s.stderr", work_dir, c->name) >=
            sizeof stderr_path) {
        sb_err_set(err, errlen, "%s: work directory path too long", work_dir);
        return SB_EXIT_INPUT;
    }
    sb_child_result cr;
    /* the child's stderr goes to a file, so that its message reaches the
     * user once, as err (its line, or how it died and its last line) */
    sb_child_run run = {.self_exe = self_exe, .c = c, .threads = c->reference_threads,
                        .timeout_seconds = c->timeout_seconds, .trace_path = trace_path,
                        .stderr_path = stderr_path};
    sb_status st = sb_run_child(&run, &cr, t, err, errlen);
    /* a run that succeeded may still have warned (a probe graph with inputs
     * from outside the run): those lines are the user's to see */
    if (st == SB_OK && cr.end == SB_CHILD_EXITED && cr.exit_code == 0)
        stderr_forward(stderr_path);
    unlink(trace_path);
    unlink(stderr_path);
    if (st != SB_OK)
        return SB_EXIT_INPUT;
    return cr.end == SB_CHILD_EXITED && cr.exit_code == 0 ? SB_EXIT_OK : SB_EXIT_CRASH;
}
