/* samebits mutants: sweep each mutant case (the det kernels with one
 * deliberately broken kernel, kernels/mutants/) against the golden of the
 * clean case it mutates, and score what the harness found: was the fault
 * detected, localised to the right op, and classified with the expected
 * verdict at every thread count? */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "report/report_file.h"

static const char mutants_usage[] =
    "usage: samebits mutants CASE... [--json FILE] [--tap] [--data-dir DIR] [--work-dir DIR]\n"
    "\n"
    "Sweeps each mutant case (one with [case] mutant = NAME) at its thread counts and\n"
    "repeats against the golden of the clean case it mutates, and scores the harness:\n"
    "  detected    some run diverges from the golden ([expect] detected, default yes)\n"
    "  localised   every divergent run's first divergent probe (for a nondeterministic\n"
    "              run, the first probe where its repeats part, a repeat with the\n"
    "              golden's bits having none; for a run that\n"
    "              crashed or timed out before diverging, the op it died in) is in\n"
    "              the expected op ([expect] op, default the op the mutant replaces),\n"
    "              and at the expected probe and step when the case names them\n"
    "              ([expect] probe, step)\n"
    "  classified  every run's verdict is the one [sweep] expect / expect.T names\n"
    "              (nondeterministic: the repeats of that thread count must part),\n"
    "              and on the batch axis of a case with [invariance] the one its\n"
    "              expect / expect.B names\n"
    "Prints a table per mutant (on stderr with --tap, which puts TAP on stdout, three\n"
    "test lines per mutant) and the score: detected n/N, localised n/N, classified n/N.\n"
    "exit status: 0 every score N/N, 1 a mutant missed, 2 usage or input error\n";

typedef struct mutants_args {
    cli_batch b;
    const char *json;
    bool tap;
} mutants_args;

/* What the harness found for one mutant case. */
typedef struct mutant_score {
    bool found;             /* some run diverged, crashed or timed out */
    bool detected;          /* found, as the case expects */
    bool localised;         /* every divergent run's first divergence (or the op it died
                             * in) is in the expected op */
    bool classified;        /* every run's verdict is the expected one */
    int n_runs, n_divergent, n_in_op, n_as_expected;
    const sb_run_result *first;   /* the divergent run with the earliest divergence */
    const sb_run_result *died;    /* the first run that died in an op, none diverged before */
} mutant_score;

static bool mutants_parse(void *args, int argc, char **argv, int *rc)
{
    mutants_args *a = args;
    const sb_option options[] = {
        {"--json", &a->json, NULL},         {"--data-dir", &a->b.data_dir, NULL},
        {"--work-dir", &a->b.work_dir, NULL}, {"--tap", NULL, &a->tap},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "mutants", .usage = mutants_usage, .options = options,
                  .positional = a->b.paths, .min_positional = 1, .max_positional = argc};
    bool go = cli_line_parse(&l, argc, argv, rc);
    a->b.n_paths = l.n_positional;
    if (go && !cli_outputs_writable("mutants", &a->json, 1)) {
        *rc = SB_EXIT_INPUT;
        return false;
    }
    return go;
}

/* Where a run's fault shows: for a nondeterministic run, the probe where its
 * repeats part (it may even match the golden); for any other, its first
 * divergence from the golden. */
static const sb_divergence *run_divergence(const sb_run_result *x)
{
    if (x->verdict == SB_VERDICT_NONDETERMINISTIC && x->repeats_with > 0)
        return &x->repeats_part;
    return &x->div;
}

/* The op a run shows the fault in: that divergence's, or for a run that
 * died with no divergence before, the op it died in (its trace stream
 * says); NULL when neither is known. */
static const char *run_fault_op(const sb_run_result *x)
{
    const sb_divergence *d = run_divergence(x);
    if (d->found)
        return d->op;
    return x->crash.in_op ? x->crash.op : NULL;
}

/* Where a mutant case's divergence must be: an op of the kernel list, for
 * a rank mutant the combined gradients, for a resume mutant (a fault of no
 * op) whatever made its [expect] probe: "" (any). */
static const char *expect_op_name(const sb_case *c)
{
    if (c->expect_op == SB_OP_COUNT && sb_resume_mutant_find(c->mutant) >= 0)
        return "";
    return c->expect_op == SB_OP_COUNT ? SB_ALLREDUCE_OP : sb_op_name(c->expect_op);
}

/* The divergence is at the probe and step the case expects ([expect] probe
 * and step), or it expects none. */
static bool at_expected_probe(const sb_case *c, const sb_divergence *d)
{
    if (c->expect_probe[0] == '\0' && c->expect_step < 0)
        return true;
    return d->found && (c->expect_probe[0] == '\0' || strcmp(d->probe, c->expect_probe) == 0) &&
           (c->expect_step < 0 || d->step == c->expect_step);
}

/* Where the case expects the divergence, for the reports: "op", or "op at
 * step S probe P" with what [expect] names. */
static void expect_where(const sb_case *c, char *out, size_t len)
{
    const char *op = expect_op_name(c);
    int n = snprintf(out, len, "%s", op[0] ? op : "the restored run");
    if (c->expect_step >= 0 && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, " at step %" PRId64, c->expect_step);
    if (c->expect_probe[0] && n >= 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, " probe %s", c->expect_probe);
}

/* What the mutant replaces and its fault. */
static void mutant_what(const sb_case *c, const char **replaces, const char **fault)
{
    int m = sb_mutant_find(c->mutant);
    if (m >= 0) {
        *replaces = sb_op_name(sb_mutant_op(m));
        *fault = sb_mutant_fault(m);
        return;
    }
    m = sb_resume_mutant_find(c->mutant);
    if (m >= 0) {
        *replaces = "the restore of a checkpoint";
        *fault = sb_resume_mutant_fault(m);
        return;
    }
    m = sb_rank_mutant_find(c->mutant);
    SB_ASSERT(m >= 0);   /* the case loader checked the name */
    *replaces = "the det gradient combine";
    *fault = sb_rank_mutant_fault(m);
}

static void score_case(mutant_score *s, const sb_case_result *r)
{
    const sb_case *c = r->c;
    memset(s, 0, sizeof *s);
    s->n_runs = r->n_runs;
    const char *op = expect_op_name(c);
    for (int i = 0; i < r->n_runs; i++) {
        const sb_run_result *x = &r->runs[i];
        s->n_as_expected += x->verdict == x->expected;
        if (x->verdict == SB_VERDICT_IDENTICAL)
            continue;
        const sb_divergence *d = run_divergence(x);
        const char *at = run_fault_op(x);
        /* A repeat of a nondeterministic configuration with the golden's bits
         * and its first repeat's has no divergence of its own to localise:
         * where the repeats part is in the ones that parted. */
        if (x->verdict == SB_VERDICT_NONDETERMINISTIC && !at)
            continue;
        s->n_divergent++;
        if (at && (op[0] == '\0' || strcmp(at, op) == 0) && at_expected_probe(c, d))
            s->n_in_op++;
        if (!d->found && x->crash.in_op && !s->died)
            s->died = x;
        const sb_divergence *f = s->first ? run_divergence(s->first) : NULL;
        if (d->found && (!f || d->step < f->step || (d->step == f->step && d->index < f->index)))
            s->first = x;
    }
    s->found = s->n_divergent > 0;
    s->detected = s->found == c->expect_detected;
    /* a mutant expected to go unseen has nothing to localise */
    s->localised = c->expect_detected ? s->found && s->n_in_op == s->n_divergent : !s->found;
    s->classified = r->n_runs > 0 && s->n_as_expected == r->n_runs;
}

/* The seed report's table (threads, test loss, test accuracy), for training
 * cases, so the mutant's effect on training shows at a glance. */
static void seed_table(FILE *f, const sb_case_result *r)
{
    /* a rank case's runs differ by their rank count too, a resume case's by
     * the step they resumed at (-: the run that never stopped) */
    bool ranked = r->c->n_ranks > 0, resumed = false;
    for (int i = 0; i < r->n_runs; i++)
        resumed = resumed || r->runs[i].resume_at > 0;
    if (ranked)
        fprintf(f, "%5s ", "ranks");
    if (resumed)
        fprintf(f, "%6s ", "resume");
    fprintf(f, "%7s %6s  %9s  %13s\n", "threads", "repeat", "test loss", "test accuracy");
    for (int i = 0; i < r->n_runs; i++) {
        const sb_run_result *x = &r->runs[i];
        if (ranked)
            fprintf(f, "%5d ", x->ranks);
        if (resumed && x->resume_at > 0)
            fprintf(f, "%6d ", x->resume_at);
        else if (resumed)
            fprintf(f, "%6s ", "-");
        if (x->have_metrics)
            fprintf(f, "%7d %6d  %9.4f  %13.4f\n", x->threads, x->repeat, x->metrics.test_loss,
                    x->metrics.test_accuracy);
        else
            fprintf(f, "%7d %6d  %9s  %13s\n", x->threads, x->repeat, "-", "-");
    }
}

static const char *yes_no(bool b)
{
    return b ? "yes" : "NO";
}

static void score_print(FILE *f, const sb_case_result *r, const mutant_score *s)
{
    const sb_case *c = r->c;
    fprintf(f, "%s: detected %s", c->name, yes_no(s->detected));
    if (!c->expect_detected)
        fputs(" (expected unseen)", f);
    char where[256];
    expect_where(c, where, sizeof where);
    fprintf(f, ", localised %s (%d of %d divergent runs in %s", yes_no(s->localised),
            s->n_in_op, s->n_divergent, where);
    if (s->first) {
        const sb_divergence *d = run_divergence(s->first);
        char at[64];
        if (s->first->axis == SB_AXIS_THREADS)
            snprintf(at, sizeof at, "%d thread%s", s->first->threads,
                     s->first->threads == 1 ? "" : "s");
        else
            sb_run_config_name(s->first, at, sizeof at);
        fprintf(f, "; first divergence step %" PRId64 " %s in %s at %s%s", d->step, d->probe,
                d->op, at, d == &s->first->repeats_part ? ", between repeats" : "");
    } else if (s->died) {
        fprintf(f, "; died at step %" PRId64 " in %s at %d thread%s", s->died->crash.step,
                s->died->crash.op, s->died->threads, s->died->threads == 1 ? "" : "s");
    }
    fprintf(f, "), classified %s (%d of %d runs as expected)\n\n", yes_no(s->classified),
            s->n_as_expected, s->n_runs);
}

static void mutant_header(FILE *f, const sb_case *c)
{
    const char *replaces, *fault;
    mutant_what(c, &replaces, &fault);
    fprintf(f, "mutant %s replaces %s: %s\n", c->mutant, replaces, fault);
}

/* Loads a mutant case and its golden and sweeps it; false on an input error. */
static bool sweep_mutant(void *args, const char *path, sb_case *c, sb_case_result *r)
{
    const mutants_args *a = args;
    FILE *table = a->tap ? stderr : stdout;
    if (!cli_case_load(c, path))
        return false;
    if (c->mutant[0] == '\0') {
        fprintf(stderr, "%s: expected a mutant case ([case] mutant = NAME)\n", path);
        return false;
    }
    if (!cli_case_sweep(r, c, &a->b.o))
        return false;
    mutant_header(table, c);
    sb_report_text(table, r, 1);
    if (c->kind == SB_CASE_TRAIN)
        seed_table(table, r);
    fflush(table);
    return true;
}

/* ---- TAP and JSON ------------------------------------------------------------ */

static void tap_line(FILE *f, int *n, bool ok, const char *name, const char *what)
{
    fprintf(f, "%s %d - %s: %s\n", ok ? "ok" : "not ok", ++*n, name, what);
}

static void tap_write(FILE *f, const sb_case_result *r, const mutant_score *s, int n,
                      const char *score)
{
    fprintf(f, "TAP version 13\n1..%d\n", 3 * n);
    int k = 0;
    for (int i = 0; i < n; i++) {
        char what[320], where[256];
        const char *name = r[i].c->name;
        tap_line(f, &k, s[i].detected, name, r[i].c->expect_detected ? "detected" : "unseen");
        expect_where(r[i].c, where, sizeof where);
        snprintf(what, sizeof what, "localised to %s (%d of %d divergent runs)", where,
                 s[i].n_in_op, s[i].n_divergent);
        tap_line(f, &k, s[i].localised, name, what);
        snprintf(what, sizeof what, "classified (%d of %d runs as expected)", s[i].n_as_expected,
                 s[i].n_runs);
        tap_line(f, &k, s[i].classified, name, what);
    }
    fprintf(f, "# %s\n", score);
}

static json_t *run_json(const sb_run_result *x)
{
    json_t *o = json_pack("{s:i, s:i, s:s, s:i, s:s, s:s}", "threads", x->threads,
                          "repeat", x->repeat, "axis", sb_axis_name(x->axis), "batch", x->batch,
                          "verdict", sb_verdict_name(x->verdict),
                          "expected", sb_verdict_name(x->expected));
    bool ok = o != NULL;
    if (ok && x->div.found)
        ok = sb_json_keys_add(o, json_pack("{s:I, s:o, s:o}", "step", (json_int_t)x->div.step,
                                           "probe", sb_json_string(x->div.probe),
                                           "op", sb_json_string(x->div.op)));
    if (ok && x->crash.how[0])
        ok = sb_json_keys_add(o, json_pack("{s:o}", "crash", sb_report_crash_json(&x->crash)));
    if (ok && x->have_metrics)
        ok = sb_json_keys_add(o, json_pack("{s:o, s:o}",
                                           "test_loss", sb_json_number(x->metrics.test_loss),
                                           "test_accuracy",
                                           sb_json_number(x->metrics.test_accuracy)));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *mutant_json(const sb_case_result *r, const mutant_score *s)
{
    const sb_case *c = r->c;
    const char *replaces, *fault;
    mutant_what(c, &replaces, &fault);
    json_t *runs = json_array();
    for (int i = 0; runs && i < r->n_runs; i++)
        runs = sb_json_append(runs, run_json(&r->runs[i]));
    return json_pack("{s:o, s:o, s:s, s:o, s:b, s:s, s:b, s:b, s:b, s:o}",
                     "case", sb_json_string(c->path), "mutant", sb_json_string(c->mutant),
                     "op", replaces, "fault", sb_json_string(fault),
                     "expect_detected", c->expect_detected, "expect_op", expect_op_name(c),
                     "detected", s->detected, "localised", s->localised,
                     "classified", s->classified, "runs", runs);
}

/* The mutation score as JSON (CLI.md, mutants). */
static bool json_write(const char *path, const sb_case_result *r, const mutant_score *s, int n,
                       const int counts[3])
{
    json_t *mutants = json_array();
    for (int i = 0; mutants && i < n; i++)
        mutants = sb_json_append(mutants, mutant_json(&r[i], &s[i]));
    json_t *root = json_pack("{s:o, s:{s:i, s:i, s:i, s:i}}", "mutants", mutants, "score",
                             "mutants", n, "detected", counts[0], "localised", counts[1],
                             "classified", counts[2]);
    return sb_json_write(path, root) == SB_OK;
}

/* ---- the command -------------------------------------------------------------- */

/* Scores every swept case, prints the score line and the reports; the exit
 * status. */
static int mutants_report(const mutants_args *a, const sb_case_result *r, int n,
                          bool input_error, FILE *table)
{
    mutant_score *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    if (!s)
        return SB_EXIT_INPUT;
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        score_case(&s[i], &r[i]);
        score_print(table, &r[i], &s[i]);
        counts[0] += s[i].detected;
        counts[1] += s[i].localised;
        counts[2] += s[i].classified;
    }
    char score[160];
    snprintf(score, sizeof score, "mutation score: detected %d/%d, localised %d/%d, "
             "classified %d/%d", counts[0], n, counts[1], n, counts[2], n);
    if (n > 0)
        fprintf(table, "%s\n", score);
    fflush(table);
    if (a->tap)
        tap_write(stdout, r, s, n, score);
    if (a->json && !json_write(a->json, r, s, n, counts)) {
        fprintf(stderr, "samebits mutants: the JSON report: %s\n", sb_report_error());
        input_error = true;
    }
    free(s);
    if (input_error)
        return SB_EXIT_INPUT;
    return counts[0] == n && counts[1] == n && counts[2] == n ? SB_EXIT_OK : SB_EXIT_UNEXPECTED;
}

int cli_mutants(int argc, char **argv)
{
    mutants_args a;
    memset(&a, 0, sizeof a);
    int rc;
    if (!cli_batch_open(&a.b, "mutants", mutants_parse, &a, argc, argv, &rc))
        return rc;
    cli_batch *b = &a.b;
    bool input_error = !cli_batch_run(b, sweep_mutant, &a);
    rc = mutants_report(&a, b->results, b->n_done, input_error, a.tap ? stderr : stdout);
    /* the rank mutants' cases said why they could not run */
    if (cli_no_mpi())
        rc = SB_EXIT_NO_MPI;

    /* the work directory (dumps, failed runs' stderr) stays when a mutant
     * was missed: it is what the user looks at next */
    cli_batch_close(b, rc, "work files");
    return rc;
}
