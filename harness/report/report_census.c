/* The census of a sweep: for every output probe of the case (every golden
 * record made by an op, not a source), one mark per column, built from the
 * sweep's results and the run traces it kept (sb_sweep_options.keep_traces).
 * A column is a thread count, or a thread count with the environment axes'
 * values of a point ("1 ONEDNN_MAX_CPU_ISA=AVX2"): the same computation as
 * the golden's, where the batch, ranks and resume axes are other
 * computations.
 *
 * A cell is the worst mark over the repeats of its column:
 *   =  every repeat has the golden's bits
 *   d  differs, but downstream of another origin (its op's inputs moved)
 *   R  an origin, located, within its reordering bound
 *   U  an origin, located, that differs in an op with no known bound
 *   ?  an origin the locator did not reach (more origins than it locates)
 *   B  beyond bound (or the trace's structure differs there)
 *   N  the repeats of the count disagree on this probe, or the locator's
 *      re-runs did not reproduce it
 *   X  the run crashed or timed out (no trace) */
#include <string.h>
#include <unistd.h>

#include "report/report_file.h"
#include "support/support.h"
#include "sweep/config.h"

static const char census_marks[] = "=dRU?BNX";

static int mark_rank(char m)
{
    const char *at = strchr(census_marks, m);
    SB_ASSERT(m != '\0' && at != NULL);
    return (int)(at - census_marks);
}

static void cell_worsen(char *cell, char m)
{
    if (*cell == '\0' || mark_rank(m) > mark_rank(*cell))
        *cell = m;
}

static const sb_divergence *origin_at(const sb_run_result *r, size_t index, bool *located)
{
    for (int i = 0; i < r->origins.n; i++)
        if (r->origins.list[i].index == index) {
            *located = i < r->origins.located;
            return &r->origins.list[i];
        }
    return NULL;
}

/* The mark of golden record `index` in one run whose trace is t (NULL:
 * it died, or its trace could not be read). */
static char run_mark(const sb_run_result *r, const sb_trace *golden, const sb_trace *t,
                     size_t index, sb_census_row *row)
{
    if (!t)
        return 'X';
    const sb_record *g = &golden->records[index];
    if (index >= t->n_records || strcmp(t->records[index].name, g->name) != 0)
        return 'B';
    if (sb_hash_equal(&t->records[index].hash, &g->hash))
        return '=';
    bool located = false;
    const sb_divergence *d = origin_at(r, index, &located);
    if (!d)
        return 'd';
    if (!located)
        return '?';
    if (d->have_elements) {
        if (d->elem.bounded && (!row->bounded || d->elem.bound_ratio > row->worst_bound_ratio))
            row->worst_bound_ratio = d->elem.bound_ratio;
        row->bounded |= d->elem.bounded;
        if (d->elem.max_ulp > row->max_ulp)
            row->max_ulp = d->elem.max_ulp;
        row->measured = true;
    }
    switch (sb_divergence_verdict(d)) {
    case SB_VERDICT_IDENTICAL: return '=';
    case SB_VERDICT_REORDERING: return 'R';
    case SB_VERDICT_UNBOUNDED: return 'U';
    case SB_VERDICT_NONDETERMINISTIC: return 'N';
    case SB_VERDICT_BEYOND_BOUND:
    case SB_VERDICT_CRASH:
    case SB_VERDICT_TIMEOUT:
    case SB_VERDICT_COUNT:
        break;
    }
    return 'B';
}

/* The trace a run left in work_dir (sweep/config.c names it), or NULL. */
static sb_trace *run_trace_read(const sb_census *cs, const sb_run_result *r,
                                const char *work_dir)
{
    if (r->verdict == SB_VERDICT_CRASH || r->verdict == SB_VERDICT_TIMEOUT)
        return NULL;
    char stem[1100], path[1200], err[256];
    if (!sb_config_stem(stem, sizeof stem, work_dir, cs->c->name, r))
        return NULL;
    snprintf(path, sizeof path, "%s.trace", stem);
    sb_trace *t = malloc(sizeof *t);
    if (t && sb_trace_read(t, path, err, sizeof err) == SB_OK)
        return t;
    free(t);
    return NULL;
}

static void trace_drop(sb_trace *t)
{
    if (t)
        sb_trace_free(t);
    free(t);
}

/* Two repeats' records at index disagree: both read, and their hashes differ. */
static bool repeats_part_at(const sb_trace *a, const sb_trace *b, size_t index)
{
    return a && b && index < a->n_records && index < b->n_records &&
           !sb_hash_equal(&a->records[index].hash, &b->records[index].hash);
}

/* x is a point the census has a column for: not on the batch, ranks or
 * resume axis. */
static bool in_census(const sb_run_result *x)
{
    return x->axis == SB_AXIS_THREADS;
}

/* The column of x among cs's, or -1. */
static int column_of(const sb_census *cs, const sb_run_result *x)
{
    for (int k = 0; k < cs->n_columns; k++) {
        const sb_run_result *y = cs->columns[k];
        bool same = y->threads == x->threads && y->n_env == x->n_env;
        for (int e = 0; same && e < x->n_env; e++)
            same = strcmp(y->env[e], x->env[e]) == 0;
        if (same)
            return k;
    }
    return -1;
}

/* "2", or "1 ONEDNN_MAX_CPU_ISA=AVX2": the column's threads and environment. */
static void column_label(char *out, size_t len, const sb_run_result *x)
{
    size_t at = (size_t)snprintf(out, len, "%d", x->threads);
    for (int e = 0; e < x->n_env && at < len; e++)
        at += (size_t)snprintf(out + at, len - at, " %s", x->env[e]);
}

/* An output (made by an op, not a source) of a step the sweep compared
 * (steps > 0: the first `steps` only). */
static bool is_row(const sb_record *rec, int64_t steps)
{
    return rec->n_inputs > 0 && (steps == 0 || rec->step < steps);
}

sb_status sb_census_build(sb_census *cs, const sb_case_result *r, const sb_trace *golden,
                          const char *work_dir)
{
    memset(cs, 0, sizeof *cs);
    cs->c = r->c;
    /* a run on the batch or the ranks axis is another computation than the
     * golden's, and has a row of the sweep's table, not a column here */
    for (int i = 0; i < r->n_runs; i++)
        if (in_census(&r->runs[i]) && column_of(cs, &r->runs[i]) < 0 &&
            cs->n_columns < SB_CENSUS_COLUMNS)
            cs->columns[cs->n_columns++] = &r->runs[i];
    /* a truncated sweep compared the golden's first steps only */
    int64_t steps = r->n_runs > 0 ? r->runs[0].max_steps : 0;
    for (size_t i = 0; i < golden->n_records; i++)
        cs->n_rows += is_row(&golden->records[i], steps);
    cs->rows = calloc(cs->n_rows ? (size_t)cs->n_rows : 1, sizeof *cs->rows);
    sb_trace **traces = calloc(r->n_runs ? (size_t)r->n_runs : 1, sizeof *traces);
    if (!cs->rows || !traces) {
        free(traces);
        sb_census_free(cs);
        return SB_ERR_NOMEM;
    }
    for (int i = 0; i < r->n_runs; i++)
        traces[i] = in_census(&r->runs[i]) ? run_trace_read(cs, &r->runs[i], work_dir) : NULL;
    int row_i = 0;
    for (size_t g = 0; g < golden->n_records; g++) {
        const sb_record *rec = &golden->records[g];
        if (!is_row(rec, steps))
            continue;
        sb_census_row *row = &cs->rows[row_i++];
        row->step = rec->step;
        snprintf(row->probe, sizeof row->probe, "%s", rec->name);
        snprintf(row->op, sizeof row->op, "%s", rec->op);
        for (int i = 0; i < r->n_runs; i++) {
            const sb_run_result *x = &r->runs[i];
            int k = in_census(x) ? column_of(cs, x) : -1;
            if (k < 0)
                continue;
            char *cell = &row->cell[k];
            cell_worsen(cell, run_mark(x, golden, traces[i], g, row));
            for (int j = 0; j < i; j++)
                if (in_census(&r->runs[j]) && column_of(cs, &r->runs[j]) == k &&
                    repeats_part_at(traces[i], traces[j], g))
                    cell_worsen(cell, 'N');
        }
    }
    for (int i = 0; i < r->n_runs; i++)
        trace_drop(traces[i]);
    free(traces);
    return SB_OK;
}

void sb_census_free(sb_census *cs)
{
    free(cs->rows);
    cs->rows = NULL;
    cs->n_rows = 0;
}

void sb_census_remove_traces(const sb_case_result *r, const char *work_dir)
{
    for (int i = 0; i < r->n_runs; i++) {
        char stem[1100], path[1200];
        if (!sb_config_stem(stem, sizeof stem, work_dir, r->c->name, &r->runs[i]))
            continue;
        snprintf(path, sizeof path, "%s.trace", stem);
        unlink(path);
    }
}

static const char *cell_text(const sb_census_row *row, int column)
{
    static const char *const texts[] = {"=", "d", "R", "U", "?", "B", "N", "X"};
    char m = row->cell[column];
    return m ? texts[mark_rank(m)] : "-";
}

/* "conv2.bwd.dW", or "step 3 conv2.bwd.dW" past step 0 */
static void row_label(char *out, size_t len, const sb_census_row *row)
{
    if (row->step > 0)
        snprintf(out, len, "step %lld %s", (long long)row->step, row->probe);
    else
        snprintf(out, len, "%s", row->probe);
}

/* ratios to 3 significant digits, ULPs (whole numbers) to 15; "-" where
 * not known */
static void number_text(char *out, size_t len, bool known, double x, int digits)
{
    if (known)
        snprintf(out, len, "%.*g", digits, x);
    else
        snprintf(out, len, "-");
}

#define SB_CENSUS_LEGEND                                                                  \
    "= the reference's bits, R reordering (within bound), U unbounded (no bound known), " \
    "B beyond bound, N nondeterministic (the repeats differ), "                           \
    "d differs downstream of another output, "                                            \
    "? not located, X crash or timeout"

void sb_census_text(FILE *f, const sb_census *cs)
{
    fprintf(f, "census %s (%s, reference %d thread%s)\n", cs->c->name,
            sb_case_family_label(cs->c), cs->c->reference_threads,
            cs->c->reference_threads == 1 ? "" : "s");
    int width = 5;
    char label[160];
    for (int i = 0; i < cs->n_rows; i++) {
        row_label(label, sizeof label, &cs->rows[i]);
        if ((int)strlen(label) > width)
            width = (int)strlen(label);
    }
    fprintf(f, "%-*s  %-20s", width, "probe", "op");
    int cw[SB_CENSUS_COLUMNS];
    for (int k = 0; k < cs->n_columns; k++) {
        char col[400];
        column_label(col, sizeof col, cs->columns[k]);
        cw[k] = strlen(col) > 3 ? (int)strlen(col) : 3;
        fprintf(f, " %*s", cw[k], col);
    }
    fprintf(f, "  %-11s  %s\n", "worst ratio", "max ULP");
    for (int i = 0; i < cs->n_rows; i++) {
        const sb_census_row *row = &cs->rows[i];
        char ratio[24], ulp[24];
        row_label(label, sizeof label, row);
        number_text(ratio, sizeof ratio, row->bounded, row->worst_bound_ratio, 3);
        number_text(ulp, sizeof ulp, row->measured, row->max_ulp, 15);
        fprintf(f, "%-*s  %-20s", width, label, row->op);
        for (int k = 0; k < cs->n_columns; k++)
            fprintf(f, " %*s", cw[k], cell_text(row, k));
        fprintf(f, "  %-11s  %s\n", ratio, ulp);
    }
    fputs(SB_CENSUS_LEGEND "\n\n", f);
}

void sb_census_markdown(FILE *f, const sb_census *cs)
{
    fprintf(f, "| %s (%s) | op |", cs->c->name, sb_case_family_label(cs->c));
    for (int k = 0; k < cs->n_columns; k++) {
        char col[400];
        column_label(col, sizeof col, cs->columns[k]);
        fprintf(f, " %s |", col);
    }
    fputs(" worst bound ratio | max ULP |\n|---|---|", f);
    for (int k = 0; k < cs->n_columns; k++)
        fputs("---|", f);
    fputs("---|---|\n", f);
    for (int i = 0; i < cs->n_rows; i++) {
        const sb_census_row *row = &cs->rows[i];
        char label[160], ratio[24], ulp[24];
        row_label(label, sizeof label, row);
        number_text(ratio, sizeof ratio, row->bounded, row->worst_bound_ratio, 3);
        number_text(ulp, sizeof ulp, row->measured, row->max_ulp, 15);
        fprintf(f, "| `%s` | %s |", label, row->op);
        for (int k = 0; k < cs->n_columns; k++)
            fprintf(f, " %s |", cell_text(row, k));
        fprintf(f, " %s | %s |\n", ratio, ulp);
    }
    fputc('\n', f);
}

static json_t *row_json(const sb_census *cs, const sb_census_row *row)
{
    json_t *cells = json_object();
    for (int k = 0; cells && k < cs->n_columns; k++) {
        char key[400];
        column_label(key, sizeof key, cs->columns[k]);
        if (json_object_set_new(cells, key, json_string(cell_text(row, k))) != 0) {
            json_decref(cells);
            cells = NULL;
        }
    }
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "step", (json_int_t)row->step,
                     "probe", sb_json_string(row->probe), "op", sb_json_string(row->op),
                     "cells", cells,
                     "worst_bound_ratio",
                     row->bounded ? sb_json_number(row->worst_bound_ratio) : json_null(),
                     "max_ulp", row->measured ? sb_json_number(row->max_ulp) : json_null());
}

static json_t *census_json(const sb_census *cs)
{
    /* "threads": the columns without environment; "columns": every
     * column's key in "cells" */
    json_t *threads = json_array(), *columns = json_array(), *rows = json_array();
    for (int k = 0; k < cs->n_columns; k++) {
        char key[400];
        column_label(key, sizeof key, cs->columns[k]);
        if (threads && cs->columns[k]->n_env == 0)
            threads = sb_json_append(threads, json_integer(cs->columns[k]->threads));
        if (columns)
            columns = sb_json_append(columns, sb_json_string(key));
    }
    for (int i = 0; rows && i < cs->n_rows; i++)
        rows = sb_json_append(rows, row_json(cs, &cs->rows[i]));
    return json_pack("{s:o, s:s, s:i, s:o, s:o, s:o}", "name", sb_json_string(cs->c->name),
                     "family", sb_case_family_label(cs->c),
                     "reference_threads", cs->c->reference_threads, "threads", threads,
                     "columns", columns, "rows", rows);
}

sb_status sb_census_markdown_file(const char *path, const sb_census *cs, int n)
{
    sb_report_file rf;
    sb_status st = sb_report_file_open(&rf, path);
    if (st != SB_OK)
        return st;
    fprintf(rf.f, "<!-- samebits sweep_id %s -->\n\n", sb_report_sweep_id());
    for (int i = 0; i < n; i++)
        sb_census_markdown(rf.f, &cs[i]);
    return sb_report_file_commit(&rf);
}

sb_status sb_census_json(const char *path, const sb_census *cs, int n)
{
    json_t *list = json_array();
    for (int i = 0; list && i < n; i++)
        list = sb_json_append(list, census_json(&cs[i]));
    return sb_json_write(path, json_pack("{s:i, s:s, s:o}", "census_format_version", 1,
                                         "sweep_id", sb_report_sweep_id(), "censuses", list));
}
