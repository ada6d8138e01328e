/* The text report: a compact table per case, then one line per case. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

static bool run_died(const sb_run_result *r)
{
    return r->verdict == SB_VERDICT_CRASH || r->verdict == SB_VERDICT_TIMEOUT;
}

/* One row per run: a multi-line text is folded. */
static void fold(char *s)
{
    for (char *c = s; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
}

static void text_divergence(char *out, size_t len, const sb_run_result *r)
{
    const sb_divergence *d = &r->div;
    if (run_died(r) && r->crash.how[0]) {
        const sb_crash_site *s = &r->crash;
        if (s->in_op)
            snprintf(out, len, "died at step %lld in %s", (long long)s->step, s->op);
        else if (s->after[0])
            snprintf(out, len, "died after %s", s->after);
        else
            snprintf(out, len, "%s", s->how);
    } else if (d->found)
        snprintf(out, len, "step %" PRId64 " %s (%s)%s%s%s", d->step, d->probe, d->op,
                 d->structural ? " structural" : "",
                 d->nondeterministic ? " not reproduced" : "",
                 d->reference_unreproduced ? " reference not reproduced" : "");
    else if (r->message[0]) {
        snprintf(out, len, "%s", r->message);
        fold(out);
    } else
        snprintf(out, len, "-");
}

/* Under a dead run's row: how and where it died, its first stderr line, and
 * the divergence its partial trace already had. */
static void text_crash_lines(FILE *f, const sb_run_result *r)
{
    char line[640];
    sb_crash_describe(line, sizeof line, &r->crash);
    fold(line);
    fprintf(f, "%16s%s\n", "", line);
    if (r->crash.stderr_line[0]) {
        snprintf(line, sizeof line, "%s", r->crash.stderr_line);
        fold(line);
        fprintf(f, "%16sstderr: %s\n", "", line);
    }
    const sb_divergence *d = &r->div;
    if (d->found)
        fprintf(f, "%16sdiverged before: step %lld %s (%s), inputs identical %s%s\n", "",
                (long long)d->step, d->probe, d->op, d->inputs_identical ? "y" : "n",
                d->structural ? ", structural" : "");
}

/* The table's columns: the header, the narrowest width (what the table has
 * always had, so short cells keep the usual layout) and the alignment. A
 * column widens to its longest cell, so a long first divergence ("...
 * reference not reproduced") never shifts the columns after it. */
enum { COL_AXIS, COL_THREADS, COL_REPEAT, COL_VERDICT, COL_EXPECTED, COL_WHERE, COL_INPUTS, COL_COUNTS,
       COL_ABS, COL_ULP, COL_RATIO, COL_LOSS, COL_ACC, COL_SECONDS, COL_COUNT };

static const struct {
    const char *header;
    int min_width;
    bool right;
} columns[COL_COUNT] = {
    [COL_AXIS] = {"axis", 4, false},
    [COL_THREADS] = {"threads", 7, true},      [COL_REPEAT] = {"repeat", 6, true},
    [COL_VERDICT] = {"verdict", 12, false},    [COL_EXPECTED] = {"expected", 14, false},
    [COL_WHERE] = {"first divergence", 44, false}, [COL_INPUTS] = {"inputs=", 7, false},
    [COL_COUNTS] = {"differing/total", 15, false}, [COL_ABS] = {"max abs", 9, false},
    [COL_ULP] = {"max ULP", 7, false},         [COL_RATIO] = {"bound ratio", 11, false},
    [COL_LOSS] = {"test loss", 9, true},       [COL_ACC] = {"test acc", 8, true},
    [COL_SECONDS] = {"seconds", 7, true},
};

typedef struct text_cells {
    char c[COL_COUNT][320];
} text_cells;

static void text_cells_fill(text_cells *t, const sb_case_result *cr, const sb_run_result *r)
{
    for (int k = 0; k < COL_COUNT; k++)
        snprintf(t->c[k], sizeof t->c[k], "-");
    static const char *const marks[] = {[SB_OUTCOME_AS_EXPECTED] = "",
                                        [SB_OUTCOME_NOT_AS_EXPECTED] = " *",
                                        [SB_OUTCOME_NOT_REACHED] = " ?"};
    sb_outcome o = sb_run_outcome(r);
    char set[96];
    sb_run_expected_name(r, set, sizeof set);
    if (r->axis == SB_AXIS_THREADS)
        snprintf(t->c[COL_AXIS], sizeof t->c[0], "threads");
    else if (r->axis == SB_AXIS_RESUME)
        snprintf(t->c[COL_AXIS], sizeof t->c[0], "resume at %d", r->resume_at);
    else
        snprintf(t->c[COL_AXIS], sizeof t->c[0], "%s %d", sb_axis_name(r->axis),
                 r->axis == SB_AXIS_BATCH ? r->batch : r->ranks);
    snprintf(t->c[COL_THREADS], sizeof t->c[0], "%d", r->threads);
    snprintf(t->c[COL_REPEAT], sizeof t->c[0], "%d", r->repeat);
    snprintf(t->c[COL_VERDICT], sizeof t->c[0], "%s", sb_verdict_name(r->verdict));
    snprintf(t->c[COL_EXPECTED], sizeof t->c[0], "%s%s", set, marks[o]);
    text_divergence(t->c[COL_WHERE], sizeof t->c[0], r);
    const sb_divergence *d = &r->div;
    if (d->found)
        snprintf(t->c[COL_INPUTS], sizeof t->c[0], "%s", d->inputs_identical ? "y" : "n");
    if (d->found && d->have_elements) {
        snprintf(t->c[COL_COUNTS], sizeof t->c[0], "%zu/%zu", d->elem.differing, d->elem.total);
        snprintf(t->c[COL_ABS], sizeof t->c[0], "%.3g", d->elem.max_abs);
        snprintf(t->c[COL_ULP], sizeof t->c[0], "%.6g", d->elem.max_ulp);
        if (d->elem.bounded)
            snprintf(t->c[COL_RATIO], sizeof t->c[0], "%.3g", d->elem.bound_ratio);
        else
            snprintf(t->c[COL_RATIO], sizeof t->c[0], "no bound");
    }
    if (cr->c->kind == SB_CASE_TRAIN && r->have_metrics) {
        snprintf(t->c[COL_LOSS], sizeof t->c[0], "%.4f", r->metrics.test_loss);
        snprintf(t->c[COL_ACC], sizeof t->c[0], "%.4f", r->metrics.test_accuracy);
    }
    sb_seconds_cell(t->c[COL_SECONDS], sizeof t->c[0], r->seconds);
}

/* Some run of the case is on another axis than threads. */
static bool case_has_axes(const sb_case_result *cr)
{
    for (int i = 0; i < cr->n_runs; i++)
        if (cr->runs[i].axis != SB_AXIS_THREADS)
            return true;
    return false;
}

/* The axis column only where some run is off the threads axis: a thread
 * sweep's table is as it has always been. */
static bool column_shown(const sb_case_result *cr, int k)
{
    if (k == COL_AXIS)
        return case_has_axes(cr);
    return cr->c->kind == SB_CASE_TRAIN || (k != COL_LOSS && k != COL_ACC);
}

/* One line of the table: cells[k] padded to width[k], one space between
 * threads and repeat and two between the others, no trailing space. */
static void text_line(FILE *f, const sb_case_result *cr, const char *const *cells,
                      const int *width)
{
    bool first = true;
    for (int k = 0; k < COL_COUNT; k++) {
        if (!column_shown(cr, k))
            continue;
        if (!first)
            fputs(k == COL_REPEAT ? " " : "  ", f);
        first = false;
        fprintf(f, columns[k].right ? "%*s" : "%-*s", width[k], cells[k]);
    }
    fputc('\n', f);
}

static void text_table(FILE *f, const sb_case_result *cr)
{
    text_cells *rows = calloc((size_t)cr->n_runs + 1, sizeof *rows);
    SB_ASSERT(rows != NULL);
    int width[COL_COUNT];
    for (int k = 0; k < COL_COUNT; k++)
        width[k] = columns[k].min_width;
    for (int i = 0; i < cr->n_runs; i++) {
        text_cells_fill(&rows[i], cr, &cr->runs[i]);
        for (int k = 0; k < COL_COUNT; k++)
            if ((int)strlen(rows[i].c[k]) > width[k])
                width[k] = (int)strlen(rows[i].c[k]);
    }
    const char *cells[COL_COUNT];
    for (int k = 0; k < COL_COUNT; k++)
        cells[k] = columns[k].header;
    text_line(f, cr, cells, width);
    for (int i = 0; i < cr->n_runs; i++) {
        for (int k = 0; k < COL_COUNT; k++)
            cells[k] = rows[i].c[k];
        text_line(f, cr, cells, width);
        const sb_run_result *r = &cr->runs[i];
        if (run_died(r) && r->crash.how[0])
            text_crash_lines(f, r);
    }
    free(rows);
}

/* One divergence on a line of its own: where, its verdict, its elements. */
static void text_where(FILE *f, const char *what, const sb_divergence *d, bool located)
{
    fprintf(f, "%s step %" PRId64 " %s (%s) %s", what, d->step, d->probe, d->op,
            located ? sb_verdict_name(sb_divergence_verdict(d)) : "not located");
    if (d->have_elements) {
        char bound[64];
        sb_elem_bound_text(bound, sizeof bound, &d->elem);
        fprintf(f, ", %zu/%zu differ, max abs %.3g, %s", d->elem.differing, d->elem.total,
                d->elem.max_abs, bound);
    }
}

/* "threads 2", "batch 16 threads 1": the run's configuration in a note. */
static void text_config(char *out, size_t len, const sb_run_result *r)
{
    sb_run_config_name(r, out, len);
    for (char *c = out; *c; c++)
        if (*c == '=')
            *c = ' ';
}

/* Below the table, for the runs whose row does not tell it all: more than
 * one origin, an origin the row's first divergence is not, origins left
 * unlocated by the cap, an unbounded verdict (the op with no bound), and
 * repeats that part. */
static void text_notes(FILE *f, const sb_case_result *cr)
{
    for (int i = 0; i < cr->n_runs; i++) {
        const sb_run_result *r = &cr->runs[i];
        const sb_origins *g = &r->origins;
        bool first_only = g->count == 1 && r->div.found && g->list[0].index == r->div.index;
        char config[96];
        text_config(config, sizeof config, r);
        if (g->count > 0 && !first_only) {
            fprintf(f, "%s repeat %d: %d origin%s, %d located%s", config, r->repeat,
                    g->count, g->count == 1 ? "" : "s", g->located,
                    r->origins_capped ? " (cap hit: --max-origins)"
                    : r->repeats_with > 0 ? " (the repeats part)" : "");
            text_where(f, "; first", &g->list[0], g->located > 0);
            if (sb_origins_worst(g))
                text_where(f, "; worst", sb_origins_worst(g), true);
            fputc('\n', f);
        }
        const sb_divergence *u = sb_run_unbounded_at(r);
        if (u) {
            char why[512];
            sb_unbounded_text(why, sizeof why, u);
            fprintf(f, "%s repeat %d: unbounded: %s\n", config, r->repeat, why);
        }
        if (r->repeats_with > 0) {
            fprintf(f, "%s repeat %d parts from repeat %d:", config, r->repeat,
                    r->repeats_with);
            text_where(f, "", &r->repeats_part, r->repeats_part.have_elements);
            if (!r->repeats_part.have_elements && r->repeats_part.reruns > 0)
                fprintf(f, " (no two of %d re-runs parted there)", r->repeats_part.reruns);
            else if (!r->repeats_part.have_elements)
                fputs(" (another pair of repeats was re-run)", f);
            fputc('\n', f);
        }
    }
}

/* Below the table, once per set of more than one verdict that some run
 * accepts: its row's "expected" names the member it matched. */
static void text_sets(FILE *f, const sb_case_result *cr)
{
    for (int i = 0; i < cr->n_runs; i++) {
        sb_verdict_set s = cr->runs[i].expected_set;
        bool seen = (s & (s - 1)) == 0;    /* one member or none: nothing to say */
        for (int j = 0; j < i && !seen; j++)
            seen = cr->runs[j].expected_set == s;
        if (seen)
            continue;
        char name[96];
        sb_verdict_set_name(s, name, sizeof name);
        fprintf(f, "expected %s at threads", name);
        for (int j = i; j < cr->n_runs; j++)
            if (cr->runs[j].expected_set == s && cr->runs[j].repeat == 1)
                fprintf(f, " %d", cr->runs[j].threads);
        fputs(": \"expected\" names the member each run matched\n", f);
    }
}

/* The step limit of a case's runs (a sweep gives them all the same); 0 for none. */
static int64_t case_max_steps(const sb_case_result *cr)
{
    return cr->n_runs > 0 ? cr->runs[0].max_steps : 0;
}

static void text_case(FILE *f, const sb_case_result *cr)
{
    const sb_case *c = cr->c;
    SB_ASSERT(c != NULL);
    fprintf(f, "case %s (%s, %s, reference %d thread%s", c->name, sb_case_kind_name(c->kind),
            sb_case_family_label(c), c->reference_threads, c->reference_threads == 1 ? "" : "s");
    if (case_max_steps(cr) > 0)
        fprintf(f, ", truncated: first %" PRId64 " step%s compared, no metrics",
                case_max_steps(cr), case_max_steps(cr) == 1 ? "" : "s");
    if (c->n_batch > 0 && case_has_axes(cr))
        fprintf(f, ", batch reference %d at the same thread count", c->batch_sizes[0]);
    fputs(")\n", f);
    int counts[SB_OUTCOME_NOT_REACHED + 1] = {0};
    for (int i = 0; i < cr->n_runs; i++)
        counts[sb_run_outcome(&cr->runs[i])]++;
    text_table(f, cr);
    text_notes(f, cr);
    text_sets(f, cr);
    if (counts[SB_OUTCOME_NOT_AS_EXPECTED] > 0)
        fputs("* verdict differs from the expected one\n", f);
    if (counts[SB_OUTCOME_NOT_REACHED] > 0)
        fprintf(f, "? not reached: no divergence in the first %" PRId64 " step%s, where the "
                   "case expects one (it may come later)\n",
                case_max_steps(cr), case_max_steps(cr) == 1 ? "" : "s");
    fputc('\n', f);
}

void sb_report_text(FILE *f, const sb_case_result *r, int n)
{
    for (int i = 0; i < n; i++)
        text_case(f, &r[i]);
    for (int i = 0; i < n; i++) {
        int off = 0, unreached = 0;
        for (int j = 0; j < r[i].n_runs; j++) {
            sb_outcome o = sb_run_outcome(&r[i].runs[j]);
            off += o == SB_OUTCOME_NOT_AS_EXPECTED;
            unreached += o == SB_OUTCOME_NOT_REACHED;
        }
        if (r[i].as_expected && off == 0)
            fprintf(f, "%s: as expected", r[i].c->name);
        else
            fprintf(f, "%s: NOT as expected (%d of %d runs)", r[i].c->name, off, r[i].n_runs);
        if (case_max_steps(&r[i]) > 0)
            fprintf(f, " in the first %" PRId64 " step%s", case_max_steps(&r[i]),
                    case_max_steps(&r[i]) == 1 ? "" : "s");
        if (unreached > 0)
            fprintf(f, "; %d of %d runs not reached", unreached, r[i].n_runs);
        fputc('\n', f);
    }
}
