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

#include "judge/judge.h"
#include "run/child.h"
#include "sb_build_info.h"
#include "support/support.h"

/* Work files of one configuration: <work>/<case>.t<threads>.r<repeat>.*
 * (<case>.b<B>.t<threads>.r<repeat>.* on the batch axis) */
typedef struct run_paths {
    char trace[1024], stream[1024], err[1024], locate[1024];
} run_paths;

static bool run_paths_make(run_paths *p, const char *work_dir, const sb_case *c, int threads,
                           int repeat)
{
    char stem[900], batch[24] = "", ranks[24] = "";
    /* on the batch axis <case>.b<B>...; a rank configuration <case>.n<ranks>... */
    if (c->run_batch > 0)
        snprintf(batch, sizeof batch, ".b%d", c->run_batch);
    if (c->run_ranks > 0)
        snprintf(ranks, sizeof ranks, ".n%d", c->run_ranks);
    int n = snprintf(stem, sizeof stem, "%s/%s%s%s.t%d.r%d", work_dir, c->name, batch, ranks,
                     threads, repeat);
    if (n < 0 || (size_t)n >= sizeof stem)
        return false;
    snprintf(p->trace, sizeof p->trace, "%s.trace", stem);
    snprintf(p->stream, sizeof p->stream, "%s.stream", stem);
    snprintf(p->err, sizeof p->err, "%s.stderr", stem);
    snprintf(p->locate, sizeof p->locate, "%s.locate", stem);
    return true;
}

/* The line of the run about to start: which, how far, and an estimate of
 * the case's time left from the mean of its runs so far. */
static void progress_show(const sb_case *c, int threads, int repeat, int done, int total,
                          double started)
{
    double elapsed = sb_monotonic_seconds() - started;
    char in[32], left[48] = "estimating";
    sb_duration_human(in, sizeof in, elapsed);
    if (done > 0) {
        char d[24];
        sb_duration_human(d, sizeof d, elapsed / done * (total - done));
        snprintf(left, sizeof left, "about %s left", d);
    }
    fprintf(stderr, "\r\033[K%s: threads %d repeat %d (run %d of %d), %s in, %s", c->name,
            threads, repeat, done + 1, total, in, left);
    fflush(stderr);
}

static void progress_clear(void)
{
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* The judging of one case's sweep: its options and the reference re-runs
 * its locates share. */
typedef struct sweep_judge {
    const sb_case *c;
    const sb_trace *golden;
    const sb_sweep_options *o;
    int max_origins;
    double started;             /* monotonic seconds at the case's start, for the progress line */
    sb_locate_reference refs[SB_ORIGINS_LOCATE_MAX + 1];
} sweep_judge;

/* Locates the run's first max_origins origins, and its first divergence when
 * it is none, all in one pair of re-runs (<locate>/); a failure is noted in
 * the run's message (the divergences, with no elements, are then beyond
 * bound). The list keeps the first SB_ORIGINS_KEPT, the worst located in the
 * last place when it came after them. */
static void origins_locate(sweep_judge *j, sb_run_result *x, const sb_trace *t,
                           const run_paths *p, bool first_is_origin)
{
    sb_origins *g = &x->origins;
    int m = g->count < j->max_origins ? g->count : j->max_origins;
    sb_divergence *all = malloc(((size_t)m + 1) * sizeof *all);
    sb_divergence **ds = malloc(((size_t)m + 1) * sizeof *ds);
    char err[256] = "out of memory";
    sb_status st = all && ds ? SB_OK : SB_ERR_NOMEM;
    int n = 0;
    if (st == SB_OK) {
        sb_trace_origins_list_from_step(j->golden, t, x->resume_at, x->max_steps, all, m);
        for (; n < m; n++)
            ds[n] = &all[n];
        if (x->div.found && !x->div.structural && !first_is_origin)
            ds[n++] = &x->div;
    }
    if (st == SB_OK && n > 0)
        st = sb_locate_all(j->c, j->o->self_exe, x->threads, p->locate, j->refs,
                           SB_ORIGINS_LOCATE_MAX + 1, ds, n, err, sizeof err);
    if (st != SB_OK && x->message[0] == '\0')
        snprintf(x->message, sizeof x->message, "locate: %.240s", err);
    if (all) {
        g->located = m;
        int w = sb_divergences_worst(all, m);
        memcpy(g->list, all, (size_t)g->n * sizeof *all);
        g->worst = w < SB_ORIGINS_KEPT ? w : SB_ORIGINS_KEPT - 1;
        if (w >= SB_ORIGINS_KEPT)
            g->list[SB_ORIGINS_KEPT - 1] = all[w];
    }
    x->origins_capped = g->count > g->located;
    free(all);
    free(ds);
}

/* Compares a finished run with the golden (a truncated one with the
 * golden's first steps), finds its origins and, when `locate`, locates the
 * first max_origins of them (every one up to SB_ORIGINS_LOCATE_MAX) and the
 * first divergence when it is no origin; the verdict is the worst of those.
 * The locator's re-runs dump at the divergent steps and stop after the
 * last, inside the steps compared. */
static void run_judge(sweep_judge *j, sb_run_result *x, const sb_trace *t, const run_paths *p,
                      bool locate)
{
    /* a resumed run: the steps from its resume on */
    sb_trace_compare_from_step(j->golden, t, x->resume_at, x->max_steps, &x->div);
    sb_trace_origins_from_step(j->golden, t, x->resume_at, x->max_steps, &x->origins);
    sb_origins *g = &x->origins;
    bool first_is_origin = g->n > 0 && x->div.found && g->list[0].index == x->div.index;
    if (locate)
        origins_locate(j, x, t, p, first_is_origin);
    if (first_is_origin && g->located > 0)
        x->div = g->list[0];
    x->verdict = x->div.found ? sb_divergence_verdict(&x->div) : SB_VERDICT_IDENTICAL;
    if (sb_origins_worst(g)) {
        sb_verdict w = sb_divergence_verdict(sb_origins_worst(g));
        if (sb_verdict_rank(w) > sb_verdict_rank(x->verdict))
            x->verdict = w;
    }
    /* a truncated run's last metrics are of a partly done training */
    if (t->n_metrics > 0 && x->max_steps == 0) {
        x->metrics = t->metrics[t->n_metrics - 1];
        x->have_metrics = true;
    }
}

/* Judges the runs of one thread count (traces[i] NULL for a crash or a
 * timeout). Repeats that part make every run of the count nondeterministic,
 * whatever the golden says: the runs are compared with the golden but not
 * located, and the probe where the repeats part is. Repeats that agree are
 * one judgement: the first is judged and located, the others get its
 * divergence, origins and verdict. */
static void group_judge(sweep_judge *j, sb_run_result *x, const sb_trace *const *traces, int n)
{
    if (n == 0)
        return;
    run_paths p;
    run_paths_make(&p, j->o->work_dir, j->c, x[0].threads, x[0].repeat);
    if (sb_repeats_compare(x, traces, n, x[0].max_steps)) {
        int first = -1;     /* the run whose parting is the earliest */
        for (int i = 0; i < n; i++)
            if (x[i].repeats_with > 0 &&
                (first < 0 || x[i].repeats_part.index < x[first].repeats_part.index))
                first = i;
        char dir[1100], err[256];
        snprintf(dir, sizeof dir, "%s/repeats", p.locate);
        sb_divergence d = x[first].repeats_part;
        if (sb_repeats_locate(j->c, j->o->self_exe, x[0].threads, dir, &d, err, sizeof err) !=
            SB_OK)
            snprintf(x[first].message, sizeof x[first].message, "repeats: %.240s", err);
        for (int i = 0; i < n; i++) {
            if (!traces[i])
                continue;
            if (x[i].repeats_part.index == d.index) {
                x[i].repeats_part.elem = d.elem;
                x[i].repeats_part.have_elements = d.have_elements;
                x[i].repeats_part.reruns = d.reruns;
            }
            run_judge(j, &x[i], traces[i], &p, false);
            x[i].verdict = SB_VERDICT_NONDETERMINISTIC;
        }
        return;
    }
    int judged = -1;
    for (int i = 0; i < n; i++) {
        if (!traces[i])
            continue;
        if (judged < 0) {
            run_judge(j, &x[i], traces[i], &p, true);
            judged = i;
            continue;
        }
        x[i].div = x[judged].div;
        x[i].origins = x[judged].origins;
        x[i].origins_capped = x[judged].origins_capped;
        x[i].verdict = x[judged].verdict;
        if (traces[i]->n_metrics > 0 && x[i].max_steps == 0) {
            x[i].metrics = traces[i]->metrics[traces[i]->n_metrics - 1];
            x[i].have_metrics = true;
        }
    }
}

/* Every rank applied the same update to the same weights, so every rank's
 * trace must be rank 0's (t), record for record: a rank that parts from it
 * makes the run a disagreement, its message saying where, whatever the
 * golden says. A rank trace that does not read stops the sweep. */
static sb_status ranks_agree(sb_run_result *x, const sb_case *c, const sb_trace *t,
                             const char *trace_path, bool keep, char *err, size_t errlen)
{
    for (int k = 1; k < c->run_ranks; k++) {
        char path[1100];
        snprintf(path, sizeof path, "%s.rank%d", trace_path, k);
        sb_trace other;
        sb_trace_init(&other);
        sb_status st = sb_trace_read(&other, path, err, errlen);
        if (st == SB_OK) {
            sb_divergence d;
            sb_trace_compare(t, &other, &d);
            if (d.found && !x->ranks_disagree) {
                x->ranks_disagree = k;
                snprintf(x->message, sizeof x->message,
                         "ranks disagree: rank %d parts from rank 0 at step %lld %s", k,
                         (long long)d.step, d.probe);
            }
        }
        sb_trace_free(&other);
        if (!keep)
            unlink(path);
        if (st != SB_OK)
            return st;
    }
    return SB_OK;
}

/* One configuration's child; SB_ERR_INPUT (err filled) stops the sweep.
 * *t holds the trace of a run that finished (sb_trace_free it either way);
 * a crash or timeout is judged here. */
static sb_status run_one(sb_run_result *x, const sb_case *c, const sb_trace *golden,
                         const sb_sweep_options *o, double timeout, sb_trace *t, bool *finished,
                         char *err, size_t errlen)
{
    run_paths p;
    sb_trace_init(t);
    *finished = false;
    if (!run_paths_make(&p, o->work_dir, c, x->threads, x->repeat)) {
        sb_err_set(err, errlen, "%s: work directory path too long", o->work_dir);
        return SB_ERR_USAGE;
    }
    sb_child_result cr = {0};
    sb_child_run run = {.self_exe = o->self_exe, .c = c, .threads = x->threads,
                        .timeout_seconds = timeout, .max_steps = x->max_steps,
                        .trace_path = p.trace, .stream_path = p.stream, .stderr_path = p.err};
    sb_status st = sb_run_child(&run, &cr, t, x->message, sizeof x->message);
    x->seconds = cr.seconds;
    if (st != SB_OK) {
        sb_err_set(err, errlen, "%s (threads %d): %s", c->path, x->threads, x->message);
        return st;
    }
    if (cr.end == SB_CHILD_TIMED_OUT || cr.end == SB_CHILD_SIGNALED || cr.exit_code != 0) {
        x->verdict = cr.end == SB_CHILD_TIMED_OUT ? SB_VERDICT_TIMEOUT : SB_VERDICT_CRASH;
        sb_crash_judge(x, &cr, golden, p.stream, p.err);
    } else {
        *finished = true;
        if (c->run_ranks > 1)
            st = ranks_agree(x, c, t, p.trace, o->keep_traces, err, errlen);
    }
    if (!o->keep_traces)
        unlink(p.trace);
    /* a dead run's stream and stderr stay in the work directory, for the user */
    if (*finished) {
        unlink(p.stream);
        unlink(p.err);
    }
    return SB_OK;
}

/* The repeats of thread count `threads` this shard runs, each in its own
 * child, then judged together; *item counts the work items. */
static sb_status count_sweep(sweep_judge *j, sb_case_result *r, int threads, int repeats,
                             double timeout, int64_t max_steps, long *item, int total,
                             char *err, size_t errlen)
{
    const sb_sweep_options *o = j->o;
    sb_trace *t = calloc((size_t)repeats, sizeof *t);
    const sb_trace **done = calloc((size_t)repeats, sizeof *done);
    if (!t || !done) {
        free(t);
        free(done);
        return SB_ERR_NOMEM;
    }
    int first = r->n_runs, n = 0;
    sb_status st = SB_OK;
    for (int k = 1; k <= repeats && st == SB_OK; k++, (*item)++) {
        if (o->shard_count > 0 && *item % o->shard_count != o->shard_index)
            continue;
        sb_run_result *x = &r->runs[r->n_runs];
        x->threads = threads;
        x->repeat = k;
        const sb_case *c = j->c;
        x->axis = c->run_batch > 0 ? SB_AXIS_BATCH
                  : c->run_ranks > 0 ? SB_AXIS_RANKS
                  : c->run_resume_at > 0 ? SB_AXIS_RESUME : SB_AXIS_THREADS;
        x->batch = c->run_batch;
        x->ranks = c->run_ranks > 0 ? c->run_ranks : 1;
        x->resume_at = (int)c->run_resume_at;
        /* one rank is the golden's computation: its thread count's expectation;
         * so is a resumed run, unless the case says otherwise (resume_expect) */
        bool own = x->ranks > 1 || (x->resume_at > 0 && c->resume_expect);
        x->expected_set = x->ranks > 1 ? c->expect_ranks[x->ranks]
                          : own ? c->resume_expect : c->expect_set[threads];
        x->expected = own ? sb_verdict_set_first(x->expected_set) : c->expect[threads];
        x->max_steps = max_steps;
        if (o->progress)
            progress_show(j->c, threads, k, r->n_runs, total, j->started);
        bool finished;
        st = run_one(x, j->c, j->golden, o, timeout, &t[n], &finished, err, errlen);
        if (st != SB_OK) {
            sb_trace_free(&t[n]);
            break;
        }
        done[n] = finished ? &t[n] : NULL;
        n++;
        r->n_runs++;
    }
    if (st == SB_OK)
        group_judge(j, &r->runs[first], done, n);
    for (int i = first; i < r->n_runs; i++)
        if (r->runs[i].ranks_disagree > 0)
            r->runs[i].verdict = SB_VERDICT_NONDETERMINISTIC;
    /* the report names the member of the expected set each run matched */
    for (int i = first; i < r->n_runs; i++)
        if (r->runs[i].expected_set & SB_VERDICT_BIT(r->runs[i].verdict))
            r->runs[i].expected = r->runs[i].verdict;
    for (int i = 0; i < n; i++)
        sb_trace_free(&t[i]);
    free(t);
    free(done);
    return st;
}

/* The resume axis: every (resume step, threads) of the case (o->resume in
 * place of its [sweep] resume), each "resume at K, T threads" run through
 * run/resume.h's hook (c->run_resume_at on a copy of the case) and judged
 * from step K on. */
static sb_status resume_sweep(sweep_judge *j, sb_case_result *r, const int *threads,
                              int n_threads, double timeout, int64_t max_steps, long *item,
                              int total, char *err, size_t errlen)
{
    const sb_case *c = j->c;
    const int *steps = j->o->resume ? j->o->resume : c->resume;
    int n = j->o->resume ? j->o->n_resume : c->n_resume;
    const int64_t last = max_steps > 0 ? max_steps : sb_case_train_steps(c);
    for (int k = 0; k < n; k++)
        if (c->kind != SB_CASE_TRAIN || steps[k] >= last) {
            sb_err_set(err, errlen, "%s: resume at %d: a training case's own run stops and "
                       "resumes before its last step (%lld)", c->path, steps[k],
                       (long long)last);
            return SB_ERR_USAGE;
        }
    if (n == 0)
        return SB_OK;
    sb_case *at = malloc(sizeof *at);
    if (!at)
        return SB_ERR_NOMEM;
    *at = *c;
    j->c = at;
    sb_status st = SB_OK;
    for (int k = 0; k < n && st == SB_OK; k++) {
        at->run_resume_at = steps[k];
        for (int i = 0; i < n_threads && st == SB_OK; i++)
            st = count_sweep(j, r, threads[i], sb_sweep_repeats(c, j->o, threads[i]), timeout,
                             max_steps, item, total, err, errlen);
    }
    j->c = c;
    free(at);
    return st;
}

/* The resume configurations of c the sweep makes: every resume step (the
 * options' or the case's) at every thread count; 0 for a case of ranks. */
static int resume_configs(const sb_case *c, const sb_sweep_options *o, int n_ranks)
{
    return n_ranks > 0 ? 0 : o->resume ? o->n_resume : c->n_resume;
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
    double timeout = o->timeout_seconds > 0 ? o->timeout_seconds : c->timeout_seconds;
    /* only a case that would train longer is cut: kernel cases, and training
     * cases of no more steps, run and compare whole */
    int64_t max_steps = o->max_steps > 0 && sb_case_train_steps(c) > o->max_steps
                            ? o->max_steps : 0;
    if (!o->self_exe || !o->work_dir || n_threads <= 0) {
        sb_err_set(err, errlen, "%s: nothing to sweep (no thread counts)", c->path);
        return SB_ERR_USAGE;
    }
    const int *ranks = o->ranks ? o->ranks : c->ranks;
    int n_ranks = c->n_ranks == 0 ? 0 : o->ranks ? o->n_ranks : c->n_ranks;
    if (o->ranks && c->n_ranks == 0) {
        sb_err_set(err, errlen, "%s: --ranks needs a [parallel] case (data-parallel training)",
                   c->path);
        return SB_ERR_USAGE;
    }
    if (n_ranks > 0 && !SB_HAVE_MPI) {
        sb_err_set(err, errlen, "%s: the rank axis: samebits was built without MPI (meson "
                   "-Dmpi=enabled; apt-get install openmpi-bin libopenmpi-dev)", c->path);
        return SB_ERR_NO_MPI;
    }
    /* each count once: two runs at one count would write the same work files */
    bool seen[SB_MAX_THREADS + 1] = {false};
    int total = 0;
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
        total += sb_sweep_repeats(c, o, threads[i]);
    }
    if (n_ranks > 0)
        total *= n_ranks;
    total *= 1 + resume_configs(c, o, n_ranks);
    r->runs = calloc((size_t)total, sizeof *r->runs);
    if (!r->runs)
        return SB_ERR_NOMEM;

    sb_status st = SB_OK;
    /* the case's runs share the reference re-runs */
    sweep_judge *j = calloc(1, sizeof *j);
    if (!j)
        return SB_ERR_NOMEM;
    *j = (sweep_judge){.c = c, .golden = golden, .o = o, .started = sb_monotonic_seconds(),
                       .max_origins = o->max_origins > 0 ? o->max_origins
                                                         : SB_ORIGINS_LOCATE_MAX};
    long item = o->shard_offset;
    if (n_ranks == 0) {
        for (int i = 0; i < n_threads && st == SB_OK; i++)
            st = count_sweep(j, r, threads[i], sb_sweep_repeats(c, o, threads[i]), timeout,
                             max_steps, &item, total, err, errlen);
        if (st == SB_OK)
            st = resume_sweep(j, r, threads, n_threads, timeout, max_steps, &item, total, err,
                              errlen);
    }
    /* a [parallel] case: every (ranks, threads), each an mpirun job */
    sb_case *at = n_ranks > 0 ? malloc(sizeof *at) : NULL;
    if (n_ranks > 0 && !at)
        st = SB_ERR_NOMEM;
    for (int k = 0; k < n_ranks && st == SB_OK; k++) {
        *at = *c;
        at->run_ranks = ranks[k];
        j->c = at;
        for (int i = 0; i < n_threads && st == SB_OK; i++)
            st = count_sweep(j, r, threads[i], sb_sweep_repeats(c, o, threads[i]), timeout,
                             max_steps, &item, total, err, errlen);
    }
    free(at);
    free(j);
    for (int i = 0; i < r->n_runs; i++)
        if (sb_run_outcome(&r->runs[i]) == SB_OUTCOME_NOT_AS_EXPECTED)
            r->as_expected = false;
    if (o->progress)
        progress_clear();
    return st;
}

int sb_sweep_repeats(const sb_case *c, const sb_sweep_options *o, int threads)
{
    if (o->repeats > 0)
        return o->repeats;
    int at = threads >= 1 && threads <= SB_MAX_THREADS ? c->repeats_at[threads] : 0;
    return at > 0 ? at : c->repeats > 0 ? c->repeats : 1;
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
            else if (x->verdict == SB_VERDICT_NONDETERMINISTIC && rc != SB_EXIT_CRASH)
                rc = SB_EXIT_NONDETERMINISTIC;
            else if (rc == SB_EXIT_OK)
                rc = SB_EXIT_UNEXPECTED;
        }
    return rc;
}
