/* samebits report --merge: the JSON reports of the shards of one sweep
 * (`sweep --shard I/N --json FILE`) back into the report of the unsharded
 * sweep, with the text, JSON, JUnit and TAP writers of the sweep itself.
 *
 * The sweep hands its (case, threads, repeat) items round-robin to the
 * shards, and every shard lists every case (with only its own runs), so the
 * unsharded order is recovered by walking the items of each case in turn and
 * taking item g from shard g mod N. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "report/report_file.h"

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

#define REPORT_FORMAT_VERSION 1

bool cli_report_mark_shard(const char *path, int index, int count)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root || !json_is_object(root)) {
        fprintf(stderr, "%s:%d: cannot mark as shard: %s\n", path, je.line, je.text);
        json_decref(root);
        return false;
    }
    json_object_set_new(root, "shard", json_pack("{s:i, s:i}", "index", index, "count", count));
    sb_report_file rf;
    bool ok = sb_report_file_open(&rf, path) == SB_OK;
    if (ok) {
        /* 17 significant digits: every double reads back to the same bits */
        json_dumpf(root, rf.f, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        fputc('\n', rf.f);
        ok = sb_report_file_commit(&rf) == SB_OK;
    }
    if (!ok)
        fprintf(stderr, "%s: cannot write the JSON report\n", path);
    json_decref(root);
    return ok;
}

/* ---- reading one shard ------------------------------------------------------ */

typedef struct shard {
    const char *path;
    json_t *root;
    json_t *cases;      /* array */
    int index, count;   /* 1-based index */
    size_t *cursor;     /* per case: runs taken so far */
} shard;

/* An error naming the file and where in it. */
static bool bad(const char *path, const char *where, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", path, where, what);
    return false;
}

/* A number field: a JSON number, or "inf", "-inf", "nan" (REPORTS.md). */
static bool get_number(const json_t *v, double *x)
{
    if (json_is_number(v)) {
        *x = json_number_value(v);
        return true;
    }
    const char *s = json_string_value(v);
    if (!s)
        return false;
    if (strcmp(s, "inf") == 0)
        *x = (double)INFINITY;
    else if (strcmp(s, "-inf") == 0)
        *x = -(double)INFINITY;
    else if (strcmp(s, "nan") == 0)
        *x = (double)NAN;
    else
        return false;
    return true;
}

static bool get_size(const json_t *v, size_t *x)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *x = (size_t)json_integer_value(v);
    return true;
}

static bool get_bool(const json_t *obj, const char *key, bool *x)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_boolean(v))
        return false;
    *x = json_is_true(v);
    return true;
}

static bool get_verdict(const json_t *obj, const char *key, sb_verdict *v)
{
    const char *s = json_string_value(json_object_get(obj, key));
    *v = s ? sb_verdict_from_name(s) : SB_VERDICT_COUNT;
    return *v != SB_VERDICT_COUNT;
}

static bool copy_string(char *out, size_t outlen, const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || strlen(s) >= outlen)
        return false;
    memcpy(out, s, strlen(s) + 1);
    return true;
}

static bool elem_read(sb_elem_diff *e, const json_t *o)
{
    const json_t *nonfinite = json_object_get(o, "nonfinite");
    const json_t *ranges = json_object_get(o, "ranges");
    const json_t *first = json_object_get(o, "first_index");
    if (!get_size(json_object_get(o, "differing"), &e->differing) ||
        !get_size(json_object_get(o, "total"), &e->total) ||
        !get_number(json_object_get(o, "max_abs"), &e->max_abs) ||
        !get_number(json_object_get(o, "max_rel"), &e->max_rel) ||
        !get_number(json_object_get(o, "max_ulp"), &e->max_ulp) ||
        !get_number(json_object_get(o, "bound_ratio"), &e->bound_ratio) ||
        !(json_is_null(first) || get_size(first, &e->first_index)) ||
        json_array_size(nonfinite) != 2 ||
        !get_size(json_array_get(nonfinite, 0), &e->nonfinite_a) ||
        !get_size(json_array_get(nonfinite, 1), &e->nonfinite_b) ||
        !get_size(json_object_get(o, "n_ranges"), &e->n_ranges) || !json_is_array(ranges) ||
        json_array_size(ranges) > 8)
        return false;
    for (size_t i = 0; i < json_array_size(ranges); i++) {
        const json_t *r = json_array_get(ranges, i);
        if (json_array_size(r) != 2 || !get_size(json_array_get(r, 0), &e->ranges[i][0]) ||
            !get_size(json_array_get(r, 1), &e->ranges[i][1]))
            return false;
    }
    return true;
}

static bool divergence_read(sb_divergence *d, const json_t *o)
{
    if (json_is_null(o))
        return true;
    json_int_t step = json_integer_value(json_object_get(o, "step"));
    d->found = true;
    d->step = (int64_t)step;
    if (!get_size(json_object_get(o, "index"), &d->index) ||
        !json_is_integer(json_object_get(o, "step")) ||
        !copy_string(d->probe, sizeof d->probe, json_object_get(o, "probe")) ||
        !copy_string(d->op, sizeof d->op, json_object_get(o, "op")) ||
        !get_bool(o, "inputs_identical", &d->inputs_identical) ||
        !get_bool(o, "structural", &d->structural) ||
        !get_bool(o, "nondeterministic", &d->nondeterministic))
        return false;
    /* "differing" through "ranges" are null when the locator had no elements */
    d->have_elements = !json_is_null(json_object_get(o, "differing"));
    return !d->have_elements || elem_read(&d->elem, o);
}

static bool metrics_read(sb_run_result *r, const json_t *o)
{
    if (json_is_null(o))
        return true;
    r->have_metrics = true;
    const json_t *epoch = json_object_get(o, "epoch"), *steps = json_object_get(o, "steps");
    r->metrics.epoch = (int)json_integer_value(epoch);
    r->metrics.steps = (int64_t)json_integer_value(steps);
    return json_is_integer(epoch) && json_is_integer(steps) &&
           get_number(json_object_get(o, "train_loss"), &r->metrics.train_loss) &&
           get_number(json_object_get(o, "test_loss"), &r->metrics.test_loss) &&
           get_number(json_object_get(o, "test_accuracy"), &r->metrics.test_accuracy);
}

/* "truncated": null or {"max_steps": N}; a report from before the key
 * existed has none (a whole run). */
static bool truncated_read(sb_run_result *r, const json_t *o)
{
    if (!o || json_is_null(o))
        return true;
    const json_t *n = json_object_get(o, "max_steps");
    if (!json_is_integer(n) || json_integer_value(n) < 1)
        return false;
    r->max_steps = (int64_t)json_integer_value(n);
    return true;
}

static bool run_read(sb_run_result *r, const json_t *o)
{
    const json_t *threads = json_object_get(o, "threads"), *repeat = json_object_get(o, "repeat");
    memset(r, 0, sizeof *r);
    r->threads = (int)json_integer_value(threads);
    r->repeat = (int)json_integer_value(repeat);
    return json_is_integer(threads) && json_is_integer(repeat) &&
           get_verdict(o, "verdict", &r->verdict) && get_verdict(o, "expected", &r->expected) &&
           truncated_read(r, json_object_get(o, "truncated")) &&
           divergence_read(&r->div, json_object_get(o, "first_divergence")) &&
           metrics_read(r, json_object_get(o, "metrics")) &&
           get_number(json_object_get(o, "seconds"), &r->seconds) &&
           copy_string(r->message, sizeof r->message, json_object_get(o, "message"));
}

/* The case's fields that the report writers print. */
static bool case_read(sb_case *c, const json_t *o)
{
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const char *family = json_string_value(json_object_get(o, "family"));
    const json_t *ref = json_object_get(o, "reference_threads");
    if (!copy_string(c->name, sizeof c->name, json_object_get(o, "name")) ||
        !copy_string(c->path, sizeof c->path, json_object_get(o, "path")) || !kind ||
        !family || !json_is_integer(ref) || !json_is_array(json_object_get(o, "runs")))
        return false;
    if (strcmp(kind, "train") != 0 && strcmp(kind, "kernel") != 0)
        return false;
    c->kind = strcmp(kind, "train") == 0 ? SB_CASE_TRAIN : SB_CASE_KERNEL;
    c->family = sb_family_from_name(family);
    c->reference_threads = (int)json_integer_value(ref);
    return c->family != SB_FAMILY_COUNT;
}

static bool shard_load(shard *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    json_error_t je;
    s->root = json_load_file(path, 0, &je);
    if (!s->root) {
        fprintf(stderr, "%s:%d:%d: %s\n", path, je.line, je.column, je.text);
        return false;
    }
    const json_t *version = json_object_get(s->root, "format_version");
    if (json_integer_value(version) != REPORT_FORMAT_VERSION)
        return bad(path, "format_version", "expected 1 (a samebits JSON report)");
    s->cases = json_object_get(s->root, "cases");
    if (!json_is_array(s->cases))
        return bad(path, "cases", "expected an array");
    const json_t *mark = json_object_get(s->root, "shard");
    s->index = s->count = 1;
    if (mark) {
        const json_t *i = json_object_get(mark, "index"), *n = json_object_get(mark, "count");
        if (!json_is_integer(i) || !json_is_integer(n) || json_integer_value(n) < 1 ||
            json_integer_value(i) < 1 || json_integer_value(i) > json_integer_value(n) ||
            json_integer_value(n) > 100000)
            return bad(path, "shard", "expected {\"index\": I, \"count\": N} with 1 <= I <= N");
        s->index = (int)json_integer_value(i);
        s->count = (int)json_integer_value(n);
    }
    s->cursor = calloc(json_array_size(s->cases) + 1, sizeof *s->cursor);
    return s->cursor != NULL;
}

static void shard_free(shard *s)
{
    json_decref(s->root);
    free(s->cursor);
}

/* ---- merging ------------------------------------------------------------------ */

/* Orders the shards by index and checks that they are the N shards of one
 * sweep: every index once, the same count, the same cases in the same order. */
static bool shards_check(shard *by_index, const shard *s, int n)
{
    int count = s[0].count;
    if (n != count) {
        fprintf(stderr, "%s: shard %d/%d: expected %d shard reports, got %d\n", s[0].path,
                s[0].index, count, count, n);
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (s[i].count != count) {
            fprintf(stderr, "%s: shard %d/%d, but %s is shard %d/%d\n", s[i].path, s[i].index,
                    s[i].count, s[0].path, s[0].index, count);
            return false;
        }
        if (by_index[s[i].index - 1].path) {
            fprintf(stderr, "%s: shard %d/%d again (also %s)\n", s[i].path, s[i].index, count,
                    by_index[s[i].index - 1].path);
            return false;
        }
        by_index[s[i].index - 1] = s[i];
    }
    size_t n_cases = json_array_size(s[0].cases);
    for (int i = 1; i < n; i++) {
        bool same = json_array_size(s[i].cases) == n_cases;
        for (size_t k = 0; same && k < n_cases; k++)
            same = json_equal(json_object_get(json_array_get(s[i].cases, k), "path"),
                              json_object_get(json_array_get(s[0].cases, k), "path"));
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
static bool case_merge(sb_case_result *r, sb_case *c, shard *by_index, int n, size_t k,
                       long *item)
{
    const json_t *co = json_array_get(by_index[0].cases, k);
    char where[64];
    snprintf(where, sizeof where, "cases[%zu]", k);
    if (!case_read(c, co))
        return bad(by_index[0].path, where, "expected name, path, kind, family, "
                   "reference_threads and runs as in REPORTS.md");
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += json_array_size(json_object_get(json_array_get(by_index[i].cases, k), "runs"));
    memset(r, 0, sizeof *r);
    r->c = c;
    r->as_expected = true;
    r->runs = calloc(total + 1, sizeof *r->runs);
    if (!r->runs)
        return false;
    for (size_t j = 0; j < total; j++, (*item)++) {
        shard *s = &by_index[*item % n];
        const json_t *runs = json_object_get(json_array_get(s->cases, k), "runs");
        snprintf(where, sizeof where, "cases[%zu].runs[%zu]", k, s->cursor[k]);
        if (s->cursor[k] >= json_array_size(runs))
            return bad(s->path, where, "missing: the shards are not the parts of one sweep");
        if (!run_read(&r->runs[r->n_runs], json_array_get(runs, s->cursor[k]++)))
            return bad(s->path, where, "expected a run object as in REPORTS.md");
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

static int report_parse(report_args *a, int argc, char **argv)
{
    const sb_option options[] = {
        {"--json", &a->json, NULL}, {"--junit", &a->junit, NULL},
        {"--tap", NULL, &a->tap},   {"--merge", NULL, &a->merge},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "report", .usage = report_usage, .options = options,
                  .positional = a->files, .min_positional = 1, .max_positional = argc};
    int rc = cli_line_parse(&l, argc, argv);
    a->n_files = l.n_positional;
    if (rc == SB_EXIT_OK && !a->merge) {
        fputs(report_usage, stderr);
        return SB_EXIT_INPUT;
    }
    return rc;
}

/* Loads and merges; n_cases and the arrays are set even on failure so that
 * the caller frees what was made. */
static bool merge(const report_args *a, shard *s, shard *by_index, sb_case **cases,
                  sb_case_result **results, int *n_cases)
{
    *n_cases = 0;
    for (int i = 0; i < a->n_files; i++)
        if (!shard_load(&s[i], a->files[i]))
            return false;
    if (!shards_check(by_index, s, a->n_files))
        return false;
    size_t n = json_array_size(by_index[0].cases);
    *cases = calloc(n + 1, sizeof **cases);
    *results = calloc(n + 1, sizeof **results);
    if (!*cases || !*results)
        return false;
    long item = 0;
    for (size_t k = 0; k < n; k++) {
        bool ok = case_merge(&(*results)[k], &(*cases)[k], by_index, a->n_files, k, &item);
        *n_cases = (int)k + 1;
        if (!ok)
            return false;
    }
    for (int i = 0; i < a->n_files; i++)
        for (size_t k = 0; k < n; k++)
            if (s[i].cursor[k] !=
                json_array_size(json_object_get(json_array_get(s[i].cases, k), "runs")))
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
    int rc = report_parse(&a, argc, argv);
    if (rc != SB_EXIT_OK) {
        free(a.files);
        return rc < 0 ? SB_EXIT_OK : rc;
    }
    shard *s = calloc((size_t)a.n_files, sizeof *s);
    shard *by_index = calloc((size_t)a.n_files, sizeof *by_index);
    sb_case *cases = NULL;
    sb_case_result *results = NULL;
    int n_cases = 0;
    bool ok = s && by_index && merge(&a, s, by_index, &cases, &results, &n_cases);
    if (ok) {
        sb_report_text(a.tap ? stderr : stdout, results, n_cases);
        if (a.json && sb_report_json(a.json, results, n_cases) != SB_OK) {
            fprintf(stderr, "%s: cannot write the JSON report\n", a.json);
            ok = false;
        }
        if (a.junit && sb_report_junit(a.junit, results, n_cases) != SB_OK) {
            fprintf(stderr, "%s: cannot write the JUnit report\n", a.junit);
            ok = false;
        }
        if (a.tap)
            sb_report_tap(stdout, results, n_cases);
    }
    rc = sb_sweep_exit(results, ok ? n_cases : 0, !ok);
    for (int i = 0; i < n_cases; i++)
        sb_case_result_free(&results[i]);
    for (int i = 0; s && i < a.n_files; i++)
        shard_free(&s[i]);
    free(results);
    free(cases);
    free(by_index);
    free(s);
    free(a.files);
    return rc;
}
