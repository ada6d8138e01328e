/* The JSON report, written and read back: its schema (harness/REPORTS.md)
 * lives in this file alone. `samebits report --merge` reads the shards'
 * reports with sb_report_json_read and writes the merged one with
 * sb_report_json, as the sweep does. */
#include <stdlib.h>
#include <string.h>

#include "report_file.h"
#include "support/support.h"

#define SB_REPORT_JSON_VERSION 1

/* ---- writing -------------------------------------------------------------------- */

/* The element diff's keys, added to the divergence object o. */
static bool elements_add(json_t *o, const sb_elem_diff *e)
{
    json_t *ranges = json_array();
    for (size_t i = 0; ranges && i < e->n_ranges && i < 8; i++)
        ranges = sb_json_append(ranges, json_pack("[I, I]", (json_int_t)e->ranges[i][0],
                                                  (json_int_t)e->ranges[i][1]));
    json_t *first = e->differing > 0 ? json_integer((json_int_t)e->first_index) : json_null();
    json_t *precision = e->precision_tested
        ? json_pack("{s:o, s:I, s:o, s:o, s:o}", "ratio", sb_json_number(e->precision_ratio),
                    "index", (json_int_t)e->precision_index,
                    "run_error", sb_json_number(e->precision_run_err),
                    "golden_error", sb_json_number(e->precision_golden_err),
                    "threshold", sb_json_number(e->precision_threshold))
        : json_null();
    return sb_json_keys_add(
        o, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:[I, I], s:I, s:o, s:o}",
                     "differing", (json_int_t)e->differing, "total", (json_int_t)e->total,
                     "max_abs", sb_json_number(e->max_abs), "max_rel", sb_json_number(e->max_rel),
                     "max_ulp", sb_json_number(e->max_ulp),
                     "bound_ratio", e->bounded ? sb_json_number(e->bound_ratio) : json_null(),
                     "first_index", first,
                     "nonfinite", (json_int_t)e->nonfinite_a, (json_int_t)e->nonfinite_b,
                     "n_ranges", (json_int_t)e->n_ranges, "ranges", ranges,
                     "precision", precision));
}

/* "differing" through "ranges" are null when the locator had no elements. */
static json_t *divergence_json(const sb_divergence *d)
{
    if (!d->found)
        return json_null();
    json_t *o = json_pack("{s:I, s:I, s:o, s:o, s:s, s:b, s:b, s:b, s:b, s:i}",
                          "index", (json_int_t)d->index, "step", (json_int_t)d->step,
                          "probe", sb_json_string(d->probe), "op", sb_json_string(d->op),
                          "verdict", sb_verdict_name(sb_divergence_verdict(d)),
                          "inputs_identical", d->inputs_identical,
                          "structural", d->structural, "nondeterministic", d->nondeterministic,
                          "reference_unreproduced", d->reference_unreproduced,
                          "reruns", d->reruns);
    bool ok = d->have_elements
        ? elements_add(o, &d->elem)
        : sb_json_keys_add(o, json_pack("{s:n, s:n, s:n, s:n, s:n, s:n, s:n, s:n, s:n, s:n}",
                                        "differing", "total", "max_abs", "max_rel", "max_ulp",
                                        "bound_ratio", "first_index", "n_ranges", "ranges",
                                        "precision"));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The run's origins, the worst of them, and where its repeats part. */
static json_t *origins_json(const sb_run_result *r)
{
    const sb_origins *g = &r->origins;
    json_t *list = json_array();
    for (int i = 0; list && i < g->n; i++)
        list = sb_json_append(list, divergence_json(&g->list[i]));
    const sb_divergence *w = sb_origins_worst(g);
    json_t *worst = w ? divergence_json(w) : json_null();
    return json_pack("{s:o, s:i, s:i, s:b, s:o, s:o, s:i}", "origins", list,
                     "origins_count", g->count, "origins_located", g->located,
                     "origins_capped", r->origins_capped, "worst", worst,
                     "repeats_part", r->repeats_with > 0 ? divergence_json(&r->repeats_part)
                                                         : json_null(),
                     "repeats_with", r->repeats_with);
}

/* Every verdict the run's configuration accepts, in sb_verdict order. */
static json_t *expected_set_json(const sb_run_result *r)
{
    sb_verdict_set set = r->expected_set ? r->expected_set : SB_VERDICT_BIT(r->expected);
    json_t *list = json_array();
    for (int v = 0; list && v < SB_VERDICT_COUNT; v++)
        if (set & SB_VERDICT_BIT(v))
            list = sb_json_append(list, json_string(sb_verdict_name((sb_verdict)v)));
    return list;
}

static json_t *run_core_json(const sb_run_result *r)
{
    sb_outcome o = sb_run_outcome(r);
    json_t *truncated = r->max_steps > 0 ? json_pack("{s:I}", "max_steps", (json_int_t)r->max_steps)
                                         : json_null();
    json_t *metrics = !r->have_metrics
        ? json_null()
        : json_pack("{s:i, s:I, s:o, s:o, s:o}", "epoch", r->metrics.epoch,
                    "steps", (json_int_t)r->metrics.steps,
                    "train_loss", sb_json_number(r->metrics.train_loss),
                    "test_loss", sb_json_number(r->metrics.test_loss),
                    "test_accuracy", sb_json_number(r->metrics.test_accuracy));
    json_t *run = json_pack("{s:i, s:i, s:s, s:s, s:b, s:b, s:o, s:o, s:o, s:o, s:o}",
                            "threads", r->threads, "repeat", r->repeat,
                            "verdict", sb_verdict_name(r->verdict),
                            "expected", sb_verdict_name(r->expected),
                            "as_expected", o == SB_OUTCOME_AS_EXPECTED,
                            "not_reached", o == SB_OUTCOME_NOT_REACHED, "truncated", truncated,
                            "first_divergence", divergence_json(&r->div), "metrics", metrics,
                            "seconds", sb_json_number(r->seconds),
                            "message", sb_json_string(r->message));
    if (run && !sb_json_keys_add(run, json_pack("{s:o}", "expected_set",
                                                 expected_set_json(r)))) {
        json_decref(run);
        return NULL;
    }
    if (run && !sb_json_keys_add(run, origins_json(r))) {
        json_decref(run);
        return NULL;
    }
    return run;
}

static json_t *or_null(const char *s)
{
    return s[0] ? sb_json_string(s) : json_null();
}

json_t *sb_report_crash_json(const sb_crash_site *s)
{
    if (!s->how[0])
        return json_null();
    bool placed = s->streamed && (s->in_op || s->after[0]);
    return json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:I, s:o}", "how", sb_json_string(s->how),
                     "streamed", s->streamed,
                     "step", placed ? json_integer((json_int_t)s->step) : json_null(),
                     "op", or_null(s->op), "probe", or_null(s->probe),
                     "after", or_null(s->after), "records", (json_int_t)s->records,
                     "stderr", sb_json_string(s->stderr_line));
}

/* The keys of a run, then those that came later, after them. A run result
 * that never set ranks (0) is one process. */
static json_t *run_json(const sb_run_result *r)
{
    json_t *o = run_core_json(r);
    if (!sb_json_keys_add(o, json_pack("{s:o, s:s, s:i, s:i, s:i}", "crash",
                                       sb_report_crash_json(&r->crash),
                                       "axis", sb_axis_name(r->axis), "batch", r->batch,
                                       "ranks", r->ranks > 0 ? r->ranks : 1,
                                       "resume_at", r->resume_at))) {
        json_decref(o);
        return NULL;
    }
    /* the environment axes' values, only on a run that has them */
    json_t *env = r->n_env > 0 ? json_object() : NULL;
    for (int i = 0; env && i < r->n_env; i++) {
        size_t eq = strcspn(r->env[i], "=");
        char name[SB_ENV_NAME_CHARS];
        snprintf(name, sizeof name, "%.*s", (int)eq, r->env[i]);
        if (json_object_set_new(env, name, sb_json_string(r->env[i] + eq + (r->env[i][eq] != 0))))
            env = NULL;
    }
    if (r->n_env > 0 && (!env || json_object_set_new(o, "env", env) != 0)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *case_json(const sb_case_result *cr)
{
    const sb_case *c = cr->c;
    SB_ASSERT(c != NULL);
    json_t *runs = json_array();
    for (int i = 0; runs && i < cr->n_runs; i++)
        runs = sb_json_append(runs, run_json(&cr->runs[i]));
    return json_pack("{s:o, s:o, s:s, s:s, s:i, s:b, s:o}", "name", sb_json_string(c->name),
                     "path", sb_json_string(c->path),
                     "kind", sb_case_kind_name(c->kind),
                     "family", sb_case_family_label(c),
                     "reference_threads", c->reference_threads,
                     "as_expected", cr->as_expected, "runs", runs);
}

sb_status sb_report_json(const char *path, const sb_case_result *r, int n,
                         const sb_report_shard *shard)
{
    json_t *cases = json_array();
    for (int i = 0; cases && i < n; i++)
        cases = sb_json_append(cases, case_json(&r[i]));
    json_t *root = json_pack("{s:i, s:s, s:o}", "format_version", SB_REPORT_JSON_VERSION,
                             "sweep_id", sb_report_sweep_id(), "cases", cases);
    if (root && shard &&
        json_object_set_new(root, "shard", json_pack("{s:i, s:i}", "index", shard->index,
                                                      "count", shard->count)) != 0) {
        json_decref(root);
        root = NULL;
    }
    return sb_json_write(path, root);
}

/* ---- reading ---------------------------------------------------------------------- */

static bool get_size(const json_t *v, size_t *x)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *x = (size_t)json_integer_value(v);
    return true;
}

static bool get_i64(const json_t *obj, const char *key, int64_t *x)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return false;
    *x = (int64_t)json_integer_value(v);
    return true;
}

static bool get_int(const json_t *obj, const char *key, int *x)
{
    int64_t v;
    if (!get_i64(obj, key, &v) || v < INT32_MIN || v > INT32_MAX)
        return false;
    *x = (int)v;
    return true;
}

/* An int in lo..hi: a thread count read back must be one a sweep can have. */
static bool get_int_in(const json_t *obj, const char *key, int lo, int hi, int *x)
{
    return get_int(obj, key, x) && *x >= lo && *x <= hi;
}

static bool get_number(const json_t *obj, const char *key, double *x)
{
    return sb_json_number_read(json_object_get(obj, key), x);
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

static bool get_string(const json_t *obj, const char *key, char *out, size_t outlen)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (!s || strlen(s) >= outlen)
        return false;
    memcpy(out, s, strlen(s) + 1);
    return true;
}

static bool elements_read(sb_elem_diff *e, const json_t *o)
{
    const json_t *nonfinite = json_object_get(o, "nonfinite");
    const json_t *ranges = json_object_get(o, "ranges");
    const json_t *first = json_object_get(o, "first_index");
    if (!get_size(json_object_get(o, "differing"), &e->differing) ||
        !get_size(json_object_get(o, "total"), &e->total) ||
        !get_number(o, "max_abs", &e->max_abs) || !get_number(o, "max_rel", &e->max_rel) ||
        !get_number(o, "max_ulp", &e->max_ulp) ||
        !(json_is_null(json_object_get(o, "bound_ratio")) ||
          get_number(o, "bound_ratio", &e->bound_ratio)) ||
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
    /* absent in reports written before the precision test, null where it
     * did not apply */
    const json_t *precision = json_object_get(o, "precision");
    e->precision_tested = json_is_object(precision);
    if (e->precision_tested &&
        (!get_number(precision, "ratio", &e->precision_ratio) ||
         !get_size(json_object_get(precision, "index"), &e->precision_index) ||
         !get_number(precision, "run_error", &e->precision_run_err) ||
         !get_number(precision, "golden_error", &e->precision_golden_err) ||
         !get_number(precision, "threshold", &e->precision_threshold)))
        return false;
    /* as the element diff derives them, so a divergence read back has its
     * verdict: a null bound_ratio is no bound known */
    e->bounded = !json_is_null(json_object_get(o, "bound_ratio"));
    e->within_bound = e->bounded ? !(e->bound_ratio > 1.0) : e->differing == 0;
    return true;
}

static bool divergence_read(sb_divergence *d, const json_t *o)
{
    if (json_is_null(o))
        return true;
    d->found = true;
    if (!get_size(json_object_get(o, "index"), &d->index) || !get_i64(o, "step", &d->step) ||
        !get_string(o, "probe", d->probe, sizeof d->probe) ||
        !get_string(o, "op", d->op, sizeof d->op) ||
        !get_bool(o, "inputs_identical", &d->inputs_identical) ||
        !get_bool(o, "structural", &d->structural) ||
        !get_bool(o, "nondeterministic", &d->nondeterministic) ||
        !get_bool(o, "reference_unreproduced", &d->reference_unreproduced) ||
        !get_int(o, "reruns", &d->reruns))
        return false;
    d->have_elements = !json_is_null(json_object_get(o, "differing"));
    return !d->have_elements || elements_read(&d->elem, o);
}

static bool metrics_read(sb_run_result *r, const json_t *o)
{
    if (json_is_null(o))
        return true;
    r->have_metrics = true;
    return get_int(o, "epoch", &r->metrics.epoch) && get_i64(o, "steps", &r->metrics.steps) &&
           get_number(o, "train_loss", &r->metrics.train_loss) &&
           get_number(o, "test_loss", &r->metrics.test_loss) &&
           get_number(o, "test_accuracy", &r->metrics.test_accuracy);
}

/* "truncated": null or {"max_steps": N}; a report from before the key
 * existed has none (a whole run). */
static bool truncated_read(sb_run_result *r, const json_t *o)
{
    if (!o || json_is_null(o))
        return true;
    return get_i64(o, "max_steps", &r->max_steps) && r->max_steps >= 1;
}

/* "origins" (the first SB_ORIGINS_KEPT of them, the worst last when it came
 * later), their count, how many were located (all of them may be, more than
 * "origins" holds), "worst" (one of "origins", found again by its record index),
 * "repeats_part" and "repeats_with". */
static bool origins_read(sb_run_result *r, const json_t *o)
{
    sb_origins *g = &r->origins;
    const json_t *list = json_object_get(o, "origins");
    const json_t *worst = json_object_get(o, "worst");
    if (!json_is_array(list) || json_array_size(list) > SB_ORIGINS_KEPT ||
        !get_int(o, "origins_count", &g->count) || !get_int(o, "origins_located", &g->located) ||
        !get_bool(o, "origins_capped", &r->origins_capped) ||
        !get_int(o, "repeats_with", &r->repeats_with) || !worst)
        return false;
    g->n = (int)json_array_size(list);
    g->worst = -1;
    for (int i = 0; i < g->n; i++)
        if (!divergence_read(&g->list[i], json_array_get(list, i)) || !g->list[i].found)
            return false;
    size_t at;
    if (!json_is_null(worst)) {
        if (!get_size(json_object_get(worst, "index"), &at))
            return false;
        for (int i = 0; i < g->located && i < g->n && g->worst < 0; i++)
            if (g->list[i].index == at)
                g->worst = i;
        if (g->worst < 0)
            return false;
    }
    /* every origin may be located, more than the list holds */
    return g->located <= g->count && g->n <= g->count &&
           divergence_read(&r->repeats_part, json_object_get(o, "repeats_part")) &&
           r->repeats_part.found == (r->repeats_with > 0);
}

/* A string or null ("" then). */
static bool get_string_or_null(const json_t *obj, const char *key, char *out, size_t outlen)
{
    if (json_is_null(json_object_get(obj, key))) {
        out[0] = '\0';
        return true;
    }
    return get_string(obj, key, out, outlen);
}

/* "crash": null, or how and where the run died; a report from before the
 * key existed has none. */
static bool crash_read(sb_crash_site *s, const json_t *o)
{
    if (!o || json_is_null(o))
        return true;
    const json_t *step = json_object_get(o, "step");
    if (!get_string(o, "how", s->how, sizeof s->how) || !s->how[0] ||
        !get_bool(o, "streamed", &s->streamed) ||
        !(json_is_null(step) || get_i64(o, "step", &s->step)) ||
        !get_string_or_null(o, "op", s->op, sizeof s->op) ||
        !get_string_or_null(o, "probe", s->probe, sizeof s->probe) ||
        !get_string_or_null(o, "after", s->after, sizeof s->after) ||
        !get_size(json_object_get(o, "records"), &s->records) ||
        !get_string(o, "stderr", s->stderr_line, sizeof s->stderr_line))
        return false;
    s->in_op = s->op[0] != '\0';
    return true;
}

/* "expected_set": absent (a report of before sets: expected alone) or an
 * array of verdict names. */
static bool expected_set_read(sb_run_result *r, const json_t *list)
{
    if (!list)
        return true;
    if (!json_is_array(list) || json_array_size(list) == 0)
        return false;
    size_t i;
    const json_t *name;
    json_array_foreach(list, i, name) {
        sb_verdict v = json_is_string(name) ? sb_verdict_from_name(json_string_value(name))
                                            : SB_VERDICT_COUNT;
        if (v == SB_VERDICT_COUNT)
            return false;
        r->expected_set |= SB_VERDICT_BIT(v);
    }
    return true;
}

/* "axis", "batch", "ranks": absent in a report of before the axes (a
 * threads run of one process); else a known axis, a batch size >= 1 on the
 * batch axis and 0 off it, and at least one rank; "resume_at" (absent in a
 * report of before the resume axis: 0) a step >= 1 on the resume axis and
 * 0 off it. */
static bool axis_read(sb_run_result *r, const json_t *o)
{
    const json_t *axis = json_object_get(o, "axis");
    r->ranks = 1;
    if (!axis)
        return true;
    r->axis = json_is_string(axis) ? sb_axis_from_name(json_string_value(axis)) : SB_AXIS_COUNT;
    return r->axis != SB_AXIS_COUNT && get_int_in(o, "batch", 0, INT32_MAX, &r->batch) &&
           (r->batch >= 1) == (r->axis == SB_AXIS_BATCH) &&
           get_int_in(o, "ranks", 1, INT32_MAX, &r->ranks) &&
           (!json_object_get(o, "resume_at") ||
            get_int_in(o, "resume_at", 0, INT32_MAX, &r->resume_at)) &&
           (r->resume_at >= 1) == (r->axis == SB_AXIS_RESUME);
}

/* "env": absent on a run without environment axes; else an object of at
 * most SB_ENV_AXES_MAX variables, each a string. */
static bool env_read(sb_run_result *r, const json_t *o)
{
    const json_t *env = json_object_get(o, "env");
    if (!env)
        return true;
    if (!json_is_object(env) || json_object_size(env) > SB_ENV_AXES_MAX)
        return false;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)env, name, v) {
        if (!json_is_string(v) || strlen(name) >= SB_ENV_NAME_CHARS ||
            strlen(json_string_value(v)) >= SB_ENV_VALUE_CHARS)
            return false;
        snprintf(r->env[r->n_env], sizeof r->env[0], "%s=%s", name, json_string_value(v));
        r->n_env++;
    }
    return true;
}

static bool run_read(sb_run_result *r, const json_t *o)
{
    memset(r, 0, sizeof *r);
    return get_int_in(o, "threads", 1, SB_MAX_THREADS, &r->threads) &&
           axis_read(r, o) && env_read(r, o) &&
           get_int_in(o, "repeat", 1, INT32_MAX, &r->repeat) &&
           origins_read(r, o) &&
           get_verdict(o, "verdict", &r->verdict) && get_verdict(o, "expected", &r->expected) &&
           expected_set_read(r, json_object_get(o, "expected_set")) &&
           truncated_read(r, json_object_get(o, "truncated")) &&
           divergence_read(&r->div, json_object_get(o, "first_divergence")) &&
           metrics_read(r, json_object_get(o, "metrics")) &&
           get_number(o, "seconds", &r->seconds) &&
           get_string(o, "message", r->message, sizeof r->message) &&
           crash_read(&r->crash, json_object_get(o, "crash"));
}

/* The case's fields that the report holds. */
static bool case_read(sb_case *c, sb_case_result *cr, const json_t *o)
{
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const char *family = json_string_value(json_object_get(o, "family"));
    if (!get_string(o, "name", c->name, sizeof c->name) ||
        !get_string(o, "path", c->path, sizeof c->path) || !kind || !family ||
        !get_int_in(o, "reference_threads", 1, SB_MAX_THREADS, &c->reference_threads) ||
        !get_bool(o, "as_expected", &cr->as_expected) ||
        !json_is_array(json_object_get(o, "runs")))
        return false;
    if (!sb_case_kind_from_name(kind, &c->kind))
        return false;
    c->user = strcmp(family, "user") == 0;
    c->family = c->user ? SB_FAMILY_LOOSE : sb_family_from_name(family);
    return c->family != SB_FAMILY_COUNT;
}

/* "shard": absent (shard 1/1) or {"index": I, "count": N}, 1 <= I <= N. */
static bool shard_read(sb_report_shard *s, const json_t *o)
{
    s->index = s->count = 1;
    if (!o)
        return true;
    return get_int(o, "index", &s->index) && get_int(o, "count", &s->count) &&
           s->count >= 1 && s->count <= 100000 && s->index >= 1 && s->index <= s->count;
}

static sb_status cases_read(sb_report *rep, const json_t *cases, const char *path, char *err,
                            size_t errlen)
{
    size_t n = json_array_size(cases);
    rep->cases = calloc(n + 1, sizeof *rep->cases);
    rep->results = calloc(n + 1, sizeof *rep->results);
    if (!rep->cases || !rep->results)
        return SB_ERR_NOMEM;
    for (size_t k = 0; k < n; k++) {
        const json_t *co = json_array_get(cases, k);
        const json_t *runs = json_object_get(co, "runs");
        sb_case_result *cr = &rep->results[k];
        char where[64];
        snprintf(where, sizeof where, "cases[%zu]", k);
        rep->n = (int)k + 1;
        cr->c = &rep->cases[k];
        if (!case_read(&rep->cases[k], cr, co))
            return sb_err_expected(err, errlen, path, sb_at_key(where),
                                   "name, path, kind, family, reference_threads, as_expected "
                                   "and runs as in REPORTS.md");
        cr->runs = calloc(json_array_size(runs) + 1, sizeof *cr->runs);
        if (!cr->runs)
            return SB_ERR_NOMEM;
        for (size_t j = 0; j < json_array_size(runs); j++, cr->n_runs++) {
            snprintf(where, sizeof where, "cases[%zu].runs[%zu]", k, j);
            if (!run_read(&cr->runs[j], json_array_get(runs, j)))
                return sb_err_expected(err, errlen, path, sb_at_key(where),
                                       "a run object as in REPORTS.md");
        }
    }
    return SB_OK;
}

sb_status sb_report_json_read(sb_report *rep, const char *path, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    FILE *f = sb_input_open(path, "rb", err, errlen);
    if (!f)
        return SB_ERR_INPUT;
    json_error_t je;
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    if (!root) {
        sb_err_set(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return SB_ERR_INPUT;
    }
    const json_t *cases = json_object_get(root, "cases");
    sb_status st = SB_OK;
    if (json_integer_value(json_object_get(root, "format_version")) != SB_REPORT_JSON_VERSION)
        st = sb_err_expected(err, errlen, path, sb_at_key("format_version"),
                             "%d (a samebits JSON report)", SB_REPORT_JSON_VERSION);
    else if (!json_is_array(cases))
        st = sb_err_expected(err, errlen, path, sb_at_key("cases"), "an array");
    else if (!shard_read(&rep->shard, json_object_get(root, "shard")))
        st = sb_err_expected(err, errlen, path, sb_at_key("shard"),
                             "{\"index\": I, \"count\": N} with 1 <= I <= N");
    else
        st = cases_read(rep, cases, path, err, errlen);
    json_decref(root);
    if (st != SB_OK)
        sb_report_free(rep);
    return st;
}

void sb_report_free(sb_report *rep)
{
    for (int i = 0; rep->results && i < rep->n; i++)
        sb_case_result_free(&rep->results[i]);
    free(rep->results);
    free(rep->cases);
    memset(rep, 0, sizeof *rep);
}
