/* Every (threads, repeat) of a case, each in its own process.
 *
 * A child per configuration, so that a crash, a hang or an OpenMP pool of one
 * configuration cannot touch the next. Each child writes its trace to the
 * work directory; the sweep compares it with the golden, sends a divergence
 * to the locator, and judges the verdict against the case's expectation. */
#include <string.h>
#include <unistd.h>

#include "samebits.h"

/* The last non-empty line of a file, for a failed child's message. */
static void last_line(char *out, size_t outlen, const char *path)
{
    out[0] = '\0';
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        size_t n = strlen(line);
        if (n == 0)
            continue;
        if (n >= outlen)
            n = outlen - 1;     /* a long last line is cut, not dropped */
        memcpy(out, line, n);
        out[n] = '\0';
    }
    fclose(f);
}

sb_status sb_run_child(const sb_case *c, const char *self_exe, int threads,
                       double timeout_seconds, int64_t max_steps, const char *trace_path,
                       const char *stderr_path, sb_child_result *cr, sb_trace *t,
                       char *err, size_t errlen)
{
    char threads_arg[16], steps_arg[24];
    snprintf(threads_arg, sizeof threads_arg, "%d", threads);
    snprintf(steps_arg, sizeof steps_arg, "%lld", (long long)max_steps);
    /* argv is char *const[]: posix_spawn copies the strings and never writes
     * them, but the type wants them writable, hence the copies */
    char exe[1024], path[sizeof c->path], trace[1024];
    char arg_run[] = "run", arg_threads[] = "--threads", arg_trace[] = "--trace",
         arg_steps[] = "--max-steps";
    if ((size_t)snprintf(exe, sizeof exe, "%s", self_exe) >= sizeof exe ||
        (size_t)snprintf(trace, sizeof trace, "%s", trace_path) >= sizeof trace) {
        snprintf(err, errlen, "%s: path too long", trace_path);
        return SB_ERR_USAGE;
    }
    snprintf(path, sizeof path, "%s", c->path);
    /* without a limit the argument list ends before --max-steps */
    char *argv[] = {exe, arg_run, path, arg_threads, threads_arg, arg_trace, trace,
                    max_steps > 0 ? arg_steps : NULL, steps_arg, NULL};

    unlink(trace_path);     /* a stale trace must not pass for this child's */
    sb_spawn_options so = {.threads = threads, .timeout_seconds = timeout_seconds,
                           .stderr_path = stderr_path};
    sb_status st = sb_spawn_with(argv, &so, cr);
    if (st != SB_OK) {
        snprintf(err, errlen, "%s: cannot start (%s)", self_exe, sb_status_name(st));
        return st;
    }
    if (cr->end == SB_CHILD_EXITED && cr->exit_code == 0)
        return sb_trace_read(t, trace_path, err, errlen) == SB_OK ? SB_OK : SB_ERR_INPUT;

    char line[200];
    last_line(line, sizeof line, stderr_path);
    switch (cr->end) {
    case SB_CHILD_EXITED:
        snprintf(err, errlen, "exited with status %d%s%s", cr->exit_code,
                 line[0] ? ": " : "", line);
        break;
    case SB_CHILD_SIGNALED:
        snprintf(err, errlen, "killed by signal %d (%s)%s%s", cr->signal,
                 strsignal(cr->signal), line[0] ? ": " : "", line);
        break;
    case SB_CHILD_TIMED_OUT:
        snprintf(err, errlen, "timed out after %.1f s%s%s", cr->seconds,
                 line[0] ? ": " : "", line);
        break;
    }
    if (cr->end == SB_CHILD_EXITED && cr->exit_code == SB_EXIT_INPUT) {
        /* the child's own one-line message names the file and position */
        if (line[0])
            snprintf(err, errlen, "%s", line);
        return SB_ERR_INPUT;
    }
    return SB_OK;
}

/* Work files of one configuration: <work>/<case>.t<threads>.r<repeat>.* */
typedef struct run_paths {
    char trace[1024], err[1024], locate[1024];
} run_paths;

static bool run_paths_make(run_paths *p, const char *work_dir, const char *name, int threads,
                           int repeat)
{
    char stem[900];
    int n = snprintf(stem, sizeof stem, "%s/%s.t%d.r%d", work_dir, name, threads, repeat);
    if (n < 0 || (size_t)n >= sizeof stem)
        return false;
    snprintf(p->trace, sizeof p->trace, "%s.trace", stem);
    snprintf(p->err, sizeof p->err, "%s.stderr", stem);
    snprintf(p->locate, sizeof p->locate, "%s.locate", stem);
    return true;
}

static void progress_show(const sb_case *c, int threads, int repeat, int done, int total)
{
    fprintf(stderr, "\r\033[K%s: threads %d repeat %d (%d/%d)", c->name, threads, repeat,
            done + 1, total);
    fflush(stderr);
}

static void progress_clear(void)
{
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* Compares a finished run with the golden (a truncated one with the
 * golden's first steps) and locates a divergence. The locator's re-runs
 * dump at the divergent step and stop after it, inside the steps compared. */
static void run_judge(sb_run_result *x, const sb_case *c, const sb_trace *golden,
                      const sb_trace *t, const sb_sweep_options *o, const run_paths *p,
                      sb_locate_reference *reference)
{
    if (x->max_steps > 0)
        sb_trace_compare_steps(golden, t, x->max_steps, &x->div);
    else
        sb_trace_compare(golden, t, &x->div);
    if (x->div.found && !x->div.structural) {
        char err[256];
        if (sb_locate(c, o->self_exe, x->threads, p->locate, reference, &x->div, err,
                      sizeof err) != SB_OK)
            snprintf(x->message, sizeof x->message, "locate: %.240s", err);
    }
    x->verdict = x->div.found ? sb_divergence_verdict(&x->div) : SB_VERDICT_IDENTICAL;
    /* a truncated run's last metrics are of a partly done training */
    if (t->n_metrics > 0 && x->max_steps == 0) {
        x->metrics = t->metrics[t->n_metrics - 1];
        x->have_metrics = true;
    }
}

/* One configuration; SB_ERR_INPUT (err filled) stops the sweep. */
static sb_status run_one(sb_run_result *x, const sb_case *c, const sb_trace *golden,
                         const sb_sweep_options *o, double timeout,
                         sb_locate_reference *reference, char *err, size_t errlen)
{
    run_paths p;
    if (!run_paths_make(&p, o->work_dir, c->name, x->threads, x->repeat)) {
        snprintf(err, errlen, "%s: work directory path too long", o->work_dir);
        return SB_ERR_USAGE;
    }
    sb_trace t;
    sb_trace_init(&t);
    sb_child_result cr = {0};
    sb_status st = sb_run_child(c, o->self_exe, x->threads, timeout, x->max_steps, p.trace,
                                p.err, &cr, &t, x->message, sizeof x->message);
    x->seconds = cr.seconds;
    if (st != SB_OK) {
        snprintf(err, errlen, "%s (threads %d): %s", c->path, x->threads, x->message);
        sb_trace_free(&t);
        return st;
    }
    if (cr.end == SB_CHILD_TIMED_OUT)
        x->verdict = SB_VERDICT_TIMEOUT;
    else if (cr.end == SB_CHILD_SIGNALED || cr.exit_code != 0)
        x->verdict = SB_VERDICT_CRASH;
    else
        run_judge(x, c, golden, &t, o, &p, reference);
    sb_trace_free(&t);
    if (!o->keep_traces)
        unlink(p.trace);
    /* a failed child's stderr stays in the work directory for the user */
    if (x->verdict != SB_VERDICT_CRASH && x->verdict != SB_VERDICT_TIMEOUT)
        unlink(p.err);
    return SB_OK;
}

sb_status sb_sweep_case(const sb_case *c, const sb_trace *golden,
                        const sb_sweep_options *o, sb_case_result *r,
                        char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->as_expected = true;
    const int *threads = o->threads ? o->threads : c->threads;
    int n_threads = o->threads ? o->n_threads : c->n_threads;
    int repeats = o->repeats > 0 ? o->repeats : c->repeats > 0 ? c->repeats : 1;
    double timeout = o->timeout_seconds > 0 ? o->timeout_seconds : c->timeout_seconds;
    /* only a case that would train longer is cut: kernel cases, and training
     * cases of no more steps, run and compare whole */
    int64_t max_steps = o->max_steps > 0 && sb_case_train_steps(c) > o->max_steps
                            ? o->max_steps : 0;
    if (!o->self_exe || !o->work_dir || n_threads <= 0) {
        snprintf(err, errlen, "%s: nothing to sweep (no thread counts)", c->path);
        return SB_ERR_USAGE;
    }
    for (int i = 0; i < n_threads; i++)
        if (threads[i] < 1 || threads[i] > SB_MAX_THREADS) {
            snprintf(err, errlen, "%s: thread count %d is outside 1..%d", c->path, threads[i],
                     SB_MAX_THREADS);
            return SB_ERR_USAGE;
        }
    int total = n_threads * repeats;
    r->runs = calloc((size_t)total, sizeof *r->runs);
    if (!r->runs)
        return SB_ERR_NOMEM;

    sb_status st = SB_OK;
    sb_locate_reference reference = {0};   /* the case's runs share it */
    long item = o->shard_offset;
    for (int i = 0; i < n_threads && st == SB_OK; i++)
        for (int k = 1; k <= repeats && st == SB_OK; k++, item++) {
            if (o->shard_count > 0 && item % o->shard_count != o->shard_index)
                continue;
            sb_run_result *x = &r->runs[r->n_runs];
            x->threads = threads[i];
            x->repeat = k;
            x->expected = c->expect[threads[i]];
            x->max_steps = max_steps;
            if (o->progress)
                progress_show(c, x->threads, k, r->n_runs, total);
            st = run_one(x, c, golden, o, timeout, &reference, err, errlen);
            if (st != SB_OK)
                break;
            r->n_runs++;
            if (sb_run_outcome(x) == SB_OUTCOME_NOT_AS_EXPECTED)
                r->as_expected = false;
        }
    if (o->progress)
        progress_clear();
    return st;
}

void sb_case_result_free(sb_case_result *r)
{
    free(r->runs);
    r->runs = NULL;
    r->n_runs = 0;
}
