/* Every (threads, repeat) of a case, each in its own process.
 *
 * A child per configuration, so that a crash, a hang or an OpenMP pool of one
 * configuration cannot touch the next. Each child writes its trace to the
 * work directory; the sweep compares it with the golden, sends a divergence
 * to the locator, and judges the verdict against the case's expectation.
 * The exit status of a sweep is decided here too, for the command and for
 * a user's program alike. */
#include <string.h>
#include <unistd.h>

#include "samebits.h"
#include "support/support.h"

/* Work files of one configuration: <work>/<case>.t<threads>.r<repeat>.* */
typedef struct run_paths {
    char trace[1024], stream[1024], err[1024], locate[1024];
} run_paths;

static bool run_paths_make(run_paths *p, const char *work_dir, const char *name, int threads,
                           int repeat)
{
    char stem[900];
    int n = snprintf(stem, sizeof stem, "%s/%s.t%d.r%d", work_dir, name, threads, repeat);
    if (n < 0 || (size_t)n >= sizeof stem)
        return false;
    snprintf(p->trace, sizeof p->trace, "%s.trace", stem);
    snprintf(p->stream, sizeof p->stream, "%s.stream", stem);
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
        sb_err_set(err, errlen, "%s: work directory path too long", o->work_dir);
        return SB_ERR_USAGE;
    }
    sb_trace t;
    sb_trace_init(&t);
    sb_child_result cr = {0};
    sb_status st = sb_run_child(c, o->self_exe, x->threads, timeout, x->max_steps, p.trace,
                                p.stream, p.err, &cr, &t, x->message, sizeof x->message);
    x->seconds = cr.seconds;
    if (st != SB_OK) {
        sb_err_set(err, errlen, "%s (threads %d): %s", c->path, x->threads, x->message);
        sb_trace_free(&t);
        return st;
    }
    bool died = cr.end == SB_CHILD_TIMED_OUT || cr.end == SB_CHILD_SIGNALED ||
                cr.exit_code != 0;
    if (died) {
        x->verdict = cr.end == SB_CHILD_TIMED_OUT ? SB_VERDICT_TIMEOUT : SB_VERDICT_CRASH;
        sb_crash_judge(x, &cr, golden, p.stream, p.err);
    } else {
        run_judge(x, c, golden, &t, o, &p, reference);
    }
    sb_trace_free(&t);
    if (!o->keep_traces)
        unlink(p.trace);
    /* a dead run's stream stays beside its stderr, for the user */
    if (!died)
        unlink(p.stream);
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
        sb_err_set(err, errlen, "%s: nothing to sweep (no thread counts)", c->path);
        return SB_ERR_USAGE;
    }
    /* each count once: two runs at one count would write the same work files */
    bool seen[SB_MAX_THREADS + 1] = {false};
    for (int i = 0; i < n_threads; i++) {
        if (threads[i] < 1 || threads[i] > SB_MAX_THREADS) {
            sb_err_set(err, errlen, "%s: thread count %d is outside 1..%d", c->path, threads[i],
                       SB_MAX_THREADS);
            return SB_ERR_USAGE;
        }
        if (seen[threads[i]]) {
            sb_err_set(err, errlen, "%s: thread count %d is listed twice", c->path, threads[i]);
            return SB_ERR_USAGE;
        }
        seen[threads[i]] = true;
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

int sb_sweep_exit(const sb_case_result *r, int n, bool input_error)
{
    if (input_error)
        return SB_EXIT_INPUT;
    int rc = SB_EXIT_OK;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < r[i].n_runs; j++) {
            const sb_run_result *x = &r[i].runs[j];
            if (sb_run_outcome(x) != SB_OUTCOME_NOT_AS_EXPECTED)
                continue;
            if (x->verdict == SB_VERDICT_CRASH || x->verdict == SB_VERDICT_TIMEOUT)
                rc = SB_EXIT_CRASH;
            else if (rc == SB_EXIT_OK)
                rc = SB_EXIT_UNEXPECTED;
        }
    return rc;
}
