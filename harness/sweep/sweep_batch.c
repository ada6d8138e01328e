/* The batch axis of a case: its samples at every batch size against the
 * reference size, at each of its batch thread counts (sb_sweep_batch,
 * samebits.h). Each size is a case of its own for sb_sweep_case: the
 * case's computation replaced by `run --batch B` at one thread count, the
 * golden replaced by the reference size's trace at that count, so the
 * comparison, the origins, the locator and the verdicts are the thread
 * sweep's. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/child.h"
#include "support/support.h"

/* Appends the n runs of add to r. */
static sb_status runs_append(sb_case_result *r, const sb_run_result *add, int n)
{
    sb_run_result *runs = realloc(r->runs, (size_t)(r->n_runs + n + 1) * sizeof *runs);
    if (!runs)
        return SB_ERR_NOMEM;
    memcpy(runs + r->n_runs, add, (size_t)n * sizeof *add);
    r->runs = runs;
    r->n_runs += n;
    return SB_OK;
}

/* The case a size B runs as, at T threads against the reference size. */
static void size_case(sb_case *b, const sb_case *c, int k, int threads)
{
    *b = *c;
    b->run_batch = c->batch_sizes[k];
    b->reference_batch = c->batch_sizes[0];
    b->reference_threads = threads;
    b->threads[0] = threads;
    b->n_threads = 1;
    b->repeats = 1;
    b->repeats_at[threads] = 0;
    b->expect_set[threads] = c->batch_expect[k];
    b->expect[threads] = sb_verdict_set_first(c->batch_expect[k]);
}

/* A size that could not be compared: the reference run at T died. */
static sb_run_result reference_died(const sb_case *c, int k, int threads, const char *how)
{
    sb_run_result x = {.threads = threads, .repeat = 1, .axis = SB_AXIS_BATCH,
                       .batch = c->batch_sizes[k], .ranks = 1, .verdict = SB_VERDICT_CRASH,
                       .expected_set = c->batch_expect[k]};
    x.expected = sb_verdict_set_first(x.expected_set);
    snprintf(x.message, sizeof x.message, "reference batch %d: %.200s", c->batch_sizes[0], how);
    snprintf(x.crash.how, sizeof x.crash.how, "reference run %.80s", how);
    return x;
}

/* The trace of the reference size at T threads into *ref; *died set (and
 * how) when the child crashed or timed out. */
static sb_status reference_run(const sb_case *c, const sb_sweep_options *o, int threads,
                               sb_case *scratch, sb_trace *ref, bool *died, char *how,
                               size_t howlen, char *err, size_t errlen)
{
    *scratch = *c;
    scratch->run_batch = c->batch_sizes[0];
    char trace[1100], log[1100];
    snprintf(trace, sizeof trace, "%s/%s.b%d.t%d.reference.trace", o->work_dir, c->name,
             c->batch_sizes[0], threads);
    snprintf(log, sizeof log, "%s/%s.b%d.t%d.reference.stderr", o->work_dir, c->name,
             c->batch_sizes[0], threads);
    double timeout = o->timeout_seconds > 0 ? o->timeout_seconds : c->timeout_seconds;
    sb_child_result cr = {0};
    sb_child_run run = {.self_exe = o->self_exe, .c = scratch, .threads = threads,
                        .timeout_seconds = timeout, .trace_path = trace, .stderr_path = log};
    sb_status st = sb_run_child(&run, &cr, ref, how, howlen);
    if (st != SB_OK) {
        sb_err_set(err, errlen, "%s (batch %d, threads %d): %s", c->path, c->batch_sizes[0],
                   threads, how);
        return st;
    }
    *died = cr.end != SB_CHILD_EXITED || cr.exit_code != 0;
    if (!o->keep_traces)
        unlink(trace);
    if (!*died)
        unlink(log);
    return SB_OK;
}

/* Every size but the reference at T threads. */
static sb_status batch_threads_sweep(const sb_case *c, const sb_sweep_options *o, int threads,
                                     sb_case *scratch, sb_case_result *r, char *err,
                                     size_t errlen)
{
    sb_trace ref;
    sb_trace_init(&ref);
    bool died = false;
    char how[256] = "";
    sb_status st = reference_run(c, o, threads, scratch, &ref, &died, how, sizeof how, err,
                                 errlen);
    sb_sweep_options so = *o;
    so.threads = NULL;
    so.repeats = 0;
    so.max_steps = 0;
    so.shard_count = 0;
    for (int k = 1; st == SB_OK && k < c->n_batch; k++) {
        if (died) {
            sb_run_result x = reference_died(c, k, threads, how);
            st = runs_append(r, &x, 1);
            continue;
        }
        size_case(scratch, c, k, threads);
        sb_case_result sub;
        st = sb_sweep_case(scratch, &ref, &so, &sub, err, errlen);
        if (st == SB_OK)
            st = runs_append(r, sub.runs, sub.n_runs);
        sb_case_result_free(&sub);
    }
    sb_trace_free(&ref);
    return st;
}

sb_status sb_sweep_batch(const sb_case *c, const sb_sweep_options *o, sb_case_result *r,
                         char *err, size_t errlen)
{
    if (c->n_batch < 2) {
        sb_err_set(err, errlen, "%s: the batch axis needs two batch sizes or more (the first "
                   "is the reference)", c->path);
        return SB_ERR_USAGE;
    }
    SB_ASSERT(r->c == c);
    /* the sizes' cases, one at a time (an sb_case is large for the stack) */
    sb_case *scratch = malloc(sizeof *scratch);
    if (!scratch)
        return SB_ERR_NOMEM;
    sb_status st = SB_OK;
    for (int i = 0; i < c->n_batch_threads && st == SB_OK; i++)
        st = batch_threads_sweep(c, o, c->batch_threads[i], scratch, r, err, errlen);
    free(scratch);
    for (int i = 0; i < r->n_runs; i++)
        if (sb_run_outcome(&r->runs[i]) == SB_OUTCOME_NOT_AS_EXPECTED)
            r->as_expected = false;
    return st;
}
