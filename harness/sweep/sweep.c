/* Every configuration of a case (sweep/config.h: a point on the axes the
 * case and the command line ask for), each in its own process, in one loop.
 *
 * A child per configuration, so that a crash, a hang or an OpenMP pool of one
 * configuration cannot touch the next. Each child writes its trace to the
 * work directory; the sweep compares it with its reference (the golden; for
 * a point of the batch axis, the reference size's trace at its threads),
 * sends a divergence to the locator, and judges the verdict against the
 * case's expectation. The exit status of a sweep is decided here too, for
 * the command and for a user's program alike. */
#include <string.h>
#include <unistd.h>

#include "judge/judge.h"
#include "run/child.h"
#include "run/resume.h"
#include "support/support.h"
#include "sweep/config.h"

/* Work files of one configuration: <stem>.* (sb_config_stem) */
typedef struct run_paths {
    char trace[1024], stream[1024], err[1024], locate[1024];
} run_paths;

static bool run_paths_make(run_paths *p, const char *work_dir, const sb_case *c,
                           const sb_run_result *x)
{
    char stem[900];
    if (!sb_config_stem(stem, sizeof stem, work_dir, c->name, x))
        return false;
    snprintf(p->trace, sizeof p->trace, "%s.trace", stem);
    snprintf(p->stream, sizeof p->stream, "%s.stream", stem);
    snprintf(p->err, sizeof p->err, "%s.stderr", stem);
    snprintf(p->locate, sizeof p->locate, "%s.locate", stem);
    return true;
}

/* The line of the run about to start: which, how far, and an estimate of
 * the case's time left from the mean of its runs so far. */
static void progress_show(const sb_case *c, const sb_run_result *x, int done, int total,
                          double started)
{
    char config[256];
    sb_run_config_name(x, config, sizeof config);
    double elapsed = sb_monotonic_seconds() - started;
    char in[32], left[48] = "estimating";
    sb_duration_human(in, sizeof in, elapsed);
    if (done > 0) {
        char d[24];
        sb_duration_human(d, sizeof d, elapsed / done * (total - done));
        snprintf(left, sizeof left, "about %s left", d);
    }
    fprintf(stderr, "\r\033[K%s: %s repeat %d (run %d of %d), %s in, %s", c->name, config,
            x->repeat, done + 1, total, in, left);
    fflush(stderr);
}

static void progress_clear(void)
{
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* The judging of one case's sweep: its options and the reference re-runs
 * its locates share; c and golden are those of the configuration judged
 * (the case its children run, and the trace it is compared with). */
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

/* Judges the runs of one configuration (traces[i] NULL for a crash or a
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
    run_paths_make(&p, j->o->work_dir, j->c, &x[0]);
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
    if (!run_paths_make(&p, o->work_dir, c, x)) {
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
        char config[256];
        sb_run_config_name(x, config, sizeof config);
        /* a child's line that names the case already (a user's kernel) names it once */
        const size_t n = strlen(c->path);
        const char *why = x->message;
        if (strncmp(why, c->path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
            why += n + 2;
        sb_err_set(err, errlen, "%s (%s): %s", c->path, config, why);
        return st;
    }
    if (cr.end != SB_CHILD_EXITED || cr.exit_code != 0) {
        x->verdict = cr.end == SB_CHILD_TIMED_OUT ? SB_VERDICT_TIMEOUT : SB_VERDICT_CRASH;
        sb_crash_judge(x, &cr, golden, p.stream, p.err);
    } else {
        *finished = true;
        if (x->resume_at > 0 && golden) {
            char config[256], where[800];
            sb_run_config_name(x, config, sizeof config);
            snprintf(where, sizeof where, "%s (%s)", c->path, config);
            sb_resume_names_warn(c, where, golden, t, x->resume_at, stderr);
        }
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

/* The reference traces of the batch axis's points: the reference size's
 * run at a point's threads and environment, made once each. */
typedef struct batch_ref {
    int threads;
    sb_env_setting env[SB_ENV_AXES_MAX];
    int n_env;
    sb_trace t;
    bool died;
    char how[256];
} batch_ref;

typedef struct batch_refs {
    batch_ref *list;
    int n;
} batch_refs;

/* The reference of batch point x, run now when it is the first to need it. */
static sb_status batch_ref_get(batch_refs *b, const sb_case *c, const sb_sweep_options *o,
                               const sb_run_result *x, sb_case *scratch, batch_ref **out,
                               char *err, size_t errlen)
{
    for (int i = 0; i < b->n; i++)
        if (b->list[i].threads == x->threads && b->list[i].n_env == x->n_env &&
            memcmp(b->list[i].env, x->env, sizeof x->env) == 0) {
            *out = &b->list[i];
            return SB_OK;
        }
    batch_ref *more = realloc(b->list, (size_t)(b->n + 1) * sizeof *more);
    if (!more)
        return SB_ERR_NOMEM;
    b->list = more;
    batch_ref *r = &b->list[b->n];
    memset(r, 0, sizeof *r);
    r->threads = x->threads;
    r->n_env = x->n_env;
    memcpy(r->env, x->env, sizeof x->env);
    sb_trace_init(&r->t);
    b->n++;
    *out = r;
    sb_config_batch_reference(scratch, c, x);
    sb_run_result at = *x;
    at.batch = c->batch_sizes[0];
    at.repeat = 1;
    char stem[900], trace[1100], log[1100];
    if (!sb_config_stem(stem, sizeof stem, o->work_dir, c->name, &at)) {
        sb_err_set(err, errlen, "%s: work directory path too long", o->work_dir);
        return SB_ERR_USAGE;
    }
    snprintf(trace, sizeof trace, "%s.reference.trace", stem);
    snprintf(log, sizeof log, "%s.reference.stderr", stem);
    double timeout = o->timeout_seconds > 0 ? o->timeout_seconds : c->timeout_seconds;
    sb_child_result cr = {0};
    sb_child_run run = {.self_exe = o->self_exe, .c = scratch, .threads = x->threads,
                        .timeout_seconds = timeout, .trace_path = trace, .stderr_path = log};
    sb_status st = sb_run_child(&run, &cr, &r->t, r->how, sizeof r->how);
    if (st != SB_OK) {
        sb_err_set(err, errlen, "%s (batch %d, threads %d): %s", c->path, c->batch_sizes[0],
                   x->threads, r->how);
        return st;
    }
    r->died = cr.end != SB_CHILD_EXITED || cr.exit_code != 0;
    if (!o->keep_traces)
        unlink(trace);
    if (!r->died)
        unlink(log);
    return SB_OK;
}

static void batch_refs_free(batch_refs *b)
{
    for (int i = 0; i < b->n; i++)
        sb_trace_free(&b->list[i].t);
    free(b->list);
}

/* A batch point that could not be compared: its reference run died. */
static void reference_died(sb_run_result *x, const sb_case *c, const batch_ref *ref)
{
    x->verdict = SB_VERDICT_CRASH;
    snprintf(x->message, sizeof x->message, "reference batch %d: %.200s", c->batch_sizes[0],
             ref->how);
    snprintf(x->crash.how, sizeof x->crash.how, "reference run %.80s", ref->how);
}

/* The runs of one configuration so far, judged together when it ends. */
typedef struct group {
    int first;                  /* its first run in r->runs */
    int n;
    sb_trace *t;                /* [n] traces */
    const sb_trace **done;      /* [n] t[i], or NULL for a run that did not finish */
} group;

/* Judges the group's runs and empties it. */
static void group_close(sweep_judge *j, sb_case_result *r, group *g, bool judge)
{
    if (judge && g->n > 0)
        group_judge(j, &r->runs[g->first], g->done, g->n);
    for (int i = g->first; i < r->n_runs; i++)
        if (r->runs[i].ranks_disagree > 0)
            r->runs[i].verdict = SB_VERDICT_NONDETERMINISTIC;
    /* the report names the member of the expected set each run matched */
    for (int i = g->first; i < r->n_runs; i++)
        if (r->runs[i].expected_set & SB_VERDICT_BIT(r->runs[i].verdict))
            r->runs[i].expected = r->runs[i].verdict;
    for (int i = 0; i < g->n; i++)
        sb_trace_free(&g->t[i]);
    g->n = 0;
    g->first = r->n_runs;
}

/* The one loop: every point of the space this shard runs, a configuration's
 * repeats judged together when it ends. */
static sb_status points_sweep(sweep_judge *j, sb_case_result *r, const sb_config *pts, int n,
                              sb_case *at, sb_case *scratch, group *g, batch_refs *refs,
                              char *err, size_t errlen)
{
    const sb_sweep_options *o = j->o;
    const sb_case *c = r->c;
    double timeout = o->timeout_seconds > 0 ? o->timeout_seconds : c->timeout_seconds;
    /* only a case that would train longer is cut: kernel cases, and training
     * cases of no more steps, run and compare whole; the batch axis whole */
    int64_t max_steps = o->max_steps > 0 && sb_case_train_steps(c) > o->max_steps
                            ? o->max_steps : 0;
    const sb_trace *golden = j->golden;
    const batch_ref *ref = NULL;
    int current = -1;
    long item = o->shard_offset;
    sb_status st = SB_OK;
    for (int i = 0; i < n && st == SB_OK; i++, item++) {
        if (o->shard_count > 0 && item % o->shard_count != o->shard_index)
            continue;
        const sb_run_result *p = &pts[i].x;
        if (pts[i].group != current) {
            group_close(j, r, g, true);
            current = pts[i].group;
            sb_config_case(at, c, p);
            const sb_trace *against = golden;
            if (p->batch > 0) {
                batch_ref *b;
                st = batch_ref_get(refs, c, o, p, scratch, &b, err, errlen);
                if (st != SB_OK)
                    break;
                ref = b;
                against = &b->t;
            }
            /* the locator's reference re-runs are of this reference */
            if (against != j->golden || p->batch > 0)
                memset(j->refs, 0, sizeof j->refs);
            j->c = at;
            j->golden = against;
        }
        sb_run_result *x = &r->runs[r->n_runs];
        *x = *p;
        x->max_steps = p->batch > 0 ? 0 : max_steps;
        if (p->batch > 0 && ref->died) {
            reference_died(x, c, ref);
            r->n_runs++;
            g->first = r->n_runs;
            continue;
        }
        if (o->progress)
            progress_show(c, x, r->n_runs, n, j->started);
        bool finished;
        st = run_one(x, at, j->golden, o, timeout, &g->t[g->n], &finished, err, errlen);
        if (st != SB_OK) {
            sb_trace_free(&g->t[g->n]);
            break;
        }
        g->done[g->n] = finished ? &g->t[g->n] : NULL;
        g->n++;
        r->n_runs++;
    }
    group_close(j, r, g, st == SB_OK);
    return st;
}

sb_status sb_sweep_case(const sb_case *c, const sb_trace *golden,
                        const sb_sweep_options *o, sb_case_result *r,
                        char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->as_expected = true;
    if (!o->self_exe || !o->work_dir) {
        sb_err_set(err, errlen, "%s: nothing to sweep (no program to run)", c->path);
        return SB_ERR_USAGE;
    }
    sb_config *pts;
    int n;
    sb_status st = sb_configs_make(c, o, golden, &pts, &n, err, errlen);
    if (st != SB_OK)
        return st;
    /* the case's runs share the reference re-runs; two cases (an sb_case is
     * large for the stack): the point's, and its batch reference's */
    sweep_judge *j = calloc(1, sizeof *j);
    sb_case *at = malloc(2 * sizeof *at);
    group g = {.t = calloc((size_t)n, sizeof *g.t), .done = calloc((size_t)n, sizeof *g.done)};
    r->runs = calloc((size_t)n, sizeof *r->runs);
    batch_refs refs = {0};
    if (!j || !at || !g.t || !g.done || !r->runs)
        st = SB_ERR_NOMEM;
    if (st == SB_OK) {
        *j = (sweep_judge){.c = c, .golden = golden, .o = o, .started = sb_monotonic_seconds(),
                           .max_origins = o->max_origins > 0 ? o->max_origins
                                                             : SB_ORIGINS_LOCATE_MAX};
        st = points_sweep(j, r, pts, n, &at[0], &at[1], &g, &refs, err, errlen);
    }
    batch_refs_free(&refs);
    free(g.t);
    free(g.done);
    free(at);
    free(j);
    free(pts);
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
