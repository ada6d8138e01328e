/* samebits report --merge: the JSON reports of the shards of one sweep
 * (`sweep --shard I/N --json FILE`) back into the report of the unsharded
 * sweep, with the text, JSON, JUnit and TAP writers of the sweep itself.
 *
 * The sweep hands its (case, configuration, repeat) items round-robin to the
 * shards, and every shard lists every case (with only its own runs), so the
 * unsharded order is recovered by walking the items of each case in turn and
 * taking item g from shard g mod N. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char report_usage[] =
    "usage: samebits report --merge FILE... [--json OUT] [--junit OUT] [--tap]\n"
    "\n"
    "Merges the JSON reports of the N shards of one sweep (`samebits sweep\n"
    "--shard I/N --json FILE`, every I from 1 to N once, in any order) into the\n"
    "report the unsharded sweep would have written, and prints its tables (on\n"
    "stderr with --tap, which puts TAP on stdout). A report without a shard\n"
    "mark counts as shard 1/1.\n"
    "exit status: as `samebits sweep` for the merged runs: 0 all as expected,\n"
    "             1 a verdict not expected, 2 usage or input error, 3 a crash or timeout\n";

/* ---- one shard ------------------------------------------------------------------ */

typedef struct shard {
    const char *path;
    sb_report rep;
    size_t *cursor;     /* per case: runs taken so far */
} shard;

/* An error naming the file and where in it. */
static bool bad(const char *path, const char *where, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", path, where, what);
    return false;
}

static bool shard_load(shard *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    char err[1024];
    if (sb_report_json_read(&s->rep, path, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    s->cursor = calloc((size_t)s->rep.n + 1, sizeof *s->cursor);
    return s->cursor != NULL;
}

static void shard_free(shard *s)
{
    sb_report_free(&s->rep);
    free(s->cursor);
}

/* ---- merging ------------------------------------------------------------------ */

/* Orders the shards by index and checks that they are the N shards of one
 * sweep: every index once, the same count, the same cases in the same order. */
static bool shards_check(shard *by_index, const shard *s, int n)
{
    int count = s[0].rep.shard.count;
    if (n != count) {
        fprintf(stderr, "%s: shard %d/%d: expected %d shard reports, got %d\n", s[0].path,
                s[0].rep.shard.index, count, count, n);
        return false;
    }
    for (int i = 0; i < n; i++) {
        const sb_report_shard *m = &s[i].rep.shard;
        if (m->count != count) {
            fprintf(stderr, "%s: shard %d/%d, but %s is shard %d/%d\n", s[i].path, m->index,
                    m->count, s[0].path, s[0].rep.shard.index, count);
            return false;
        }
        if (by_index[m->index - 1].path) {
            fprintf(stderr, "%s: shard %d/%d again (also %s)\n", s[i].path, m->index, count,
                    by_index[m->index - 1].path);
            return false;
        }
        by_index[m->index - 1] = s[i];
    }
    for (int i = 1; i < n; i++) {
        bool same = s[i].rep.n == s[0].rep.n;
        for (int k = 0; same && k < s[0].rep.n; k++)
            same = strcmp(s[i].rep.cases[k].path, s[0].rep.cases[k].path) == 0;
        if (!same) {
            fprintf(stderr, "%s: not the same cases as %s (every shard lists every case of "
                            "the sweep, in order)\n", s[i].path, s[0].path);
            return false;
        }
    }
    return true;
}

/* Case k of the merged report: item g of the flattened sweep is the next run
 * of shard g mod N. */
static bool case_merge(sb_case_result *r, shard *by_index, int n, int k, long *item)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)by_index[i].rep.results[k].n_runs;
    memset(r, 0, sizeof *r);
    r->c = &by_index[0].rep.cases[k];
    r->as_expected = true;
    r->runs = calloc(total + 1, sizeof *r->runs);
    if (!r->runs)
        return false;
    for (size_t j = 0; j < total; j++, (*item)++) {
        shard *s = &by_index[*item % n];
        const sb_case_result *from = &s->rep.results[k];
        if (s->cursor[k] >= (size_t)from->n_runs) {
            char where[64];
            snprintf(where, sizeof where, "cases[%d].runs[%zu]", k, s->cursor[k]);
            return bad(s->path, where, "missing: the shards are not the parts of one sweep");
        }
        r->runs[r->n_runs] = from->runs[s->cursor[k]++];
        if (sb_run_outcome(&r->runs[r->n_runs]) == SB_OUTCOME_NOT_AS_EXPECTED)
            r->as_expected = false;
        r->n_runs++;
    }
    return true;
}

typedef struct report_args {
    const char **files;
    int n_files;
    const char *json, *junit;
    bool tap, merge;
} report_args;

static bool report_parse(report_args *a, int argc, char **argv, int *rc)
{
    const sb_option options[] = {
        {"--json", &a->json, NULL}, {"--junit", &a->junit, NULL},
        {"--tap", NULL, &a->tap},   {"--merge", NULL, &a->merge},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "report", .usage = report_usage, .options = options,
                  .positional = a->files, .min_positional = 1, .max_positional = argc};
    bool go = cli_line_parse(&l, argc, argv, rc);
    a->n_files = l.n_positional;
    if (go && !a->merge) {
        cli_usage_error("report", "needs --merge (the one thing it does)");
        *rc = SB_EXIT_INPUT;
        return false;
    }
    /* the reports' paths before any shard is read */
    const char *outputs[] = {a->json, a->junit};
    if (go && !cli_outputs_writable("report", outputs, 2)) {
        *rc = SB_EXIT_INPUT;
        return false;
    }
    return go;
}

/* Loads and merges; n_cases and *results are set even on failure so that
 * the caller frees what was made. */
static bool merge(const report_args *a, shard *s, shard *by_index, sb_case_result **results,
                  int *n_cases)
{
    *n_cases = 0;
    for (int i = 0; i < a->n_files; i++)
        if (!shard_load(&s[i], a->files[i]))
            return false;
    if (!shards_check(by_index, s, a->n_files))
        return false;
    int n = by_index[0].rep.n;
    *results = calloc((size_t)n + 1, sizeof **results);
    if (!*results)
        return false;
    long item = 0;
    for (int k = 0; k < n; k++) {
        bool ok = case_merge(&(*results)[k], by_index, a->n_files, k, &item);
        *n_cases = k + 1;
        if (!ok)
            return false;
    }
    for (int i = 0; i < a->n_files; i++)
        for (int k = 0; k < n; k++)
            if (s[i].cursor[k] != (size_t)s[i].rep.results[k].n_runs)
                return bad(s[i].path, "runs", "more runs than its shard of the sweep has");
    return true;
}

int cli_report(int argc, char **argv)
{
    report_args a;
    memset(&a, 0, sizeof a);
    a.files = calloc((size_t)argc, sizeof *a.files);
    if (!a.files)
        return SB_EXIT_INPUT;
    int rc;
    if (!report_parse(&a, argc, argv, &rc)) {
        free(a.files);
        return rc;
    }
    shard *s = calloc((size_t)a.n_files, sizeof *s);
    shard *by_index = calloc((size_t)a.n_files, sizeof *by_index);
    sb_case_result *results = NULL;
    int n_cases = 0;
    bool ok = s && by_index && merge(&a, s, by_index, &results, &n_cases);
    if (ok) {
        sb_report_text(a.tap ? stderr : stdout, results, n_cases);
        if (a.json && sb_report_json(a.json, results, n_cases, NULL) != SB_OK) {
            fprintf(stderr, "samebits report: the JSON report: %s\n", sb_report_error());
            ok = false;
        }
        if (a.junit && sb_report_junit(a.junit, results, n_cases) != SB_OK) {
            fprintf(stderr, "samebits report: the JUnit report: %s\n", sb_report_error());
            ok = false;
        }
        if (a.tap)
            sb_report_tap(stdout, results, n_cases);
    }
    rc = sb_sweep_exit(results, ok ? n_cases : 0, !ok);
    /* the merged cases are the first shard's: results go before the shards */
    for (int i = 0; i < n_cases; i++)
        sb_case_result_free(&results[i]);
    free(results);
    for (int i = 0; s && i < a.n_files; i++)
        shard_free(&s[i]);
    free(by_index);
    free(s);
    free(a.files);
    return rc;
}
