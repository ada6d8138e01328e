/* The JSON report; its schema is documented in harness/REPORTS.md. */
#include <inttypes.h>
#include <math.h>

#include "report_file.h"

#define SB_REPORT_JSON_VERSION 1

/* A JSON string: quotes, backslashes and control characters escaped,
 * well-formed UTF-8 kept, any other byte replaced by U+FFFD so the file
 * always parses. */
static void json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        size_t len = sb_utf8_len(p);
        if (len == 0) {
            fputs("\\ufffd", f);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
            p++;
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p);
            p++;
        } else {
            fwrite(p, 1, len, f);
            p += len;
        }
    }
    fputc('"', f);
}

/* JSON has no inf or NaN: they are written as the strings "inf", "-inf"
 * and "nan". */
static void json_number(FILE *f, double x)
{
    if (isnan(x))
        fputs("\"nan\"", f);
    else if (isinf(x))
        fputs(x > 0 ? "\"inf\"" : "\"-inf\"", f);
    else
        fprintf(f, "%.17g", x);
}

static void json_divergence(FILE *f, const sb_divergence *d)
{
    if (!d->found) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"index\": %zu, \"step\": %" PRId64 ", \"probe\": ", d->index, d->step);
    json_string(f, d->probe);
    fputs(", \"op\": ", f);
    json_string(f, d->op);
    fprintf(f, ", \"inputs_identical\": %s, \"structural\": %s, \"nondeterministic\": %s",
            d->inputs_identical ? "true" : "false", d->structural ? "true" : "false",
            d->nondeterministic ? "true" : "false");
    if (!d->have_elements) {
        fputs(", \"differing\": null, \"total\": null, \"max_abs\": null, \"max_rel\": null,"
              " \"max_ulp\": null, \"bound_ratio\": null, \"first_index\": null,"
              " \"n_ranges\": null, \"ranges\": null}", f);
        return;
    }
    const sb_elem_diff *e = &d->elem;
    fprintf(f, ", \"differing\": %zu, \"total\": %zu, \"max_abs\": ", e->differing, e->total);
    json_number(f, e->max_abs);
    fputs(", \"max_rel\": ", f);
    json_number(f, e->max_rel);
    fputs(", \"max_ulp\": ", f);
    json_number(f, e->max_ulp);
    fputs(", \"bound_ratio\": ", f);
    json_number(f, e->bound_ratio);
    if (e->differing > 0)
        fprintf(f, ", \"first_index\": %zu", e->first_index);
    else
        fputs(", \"first_index\": null", f);
    fprintf(f, ", \"nonfinite\": [%zu, %zu], \"n_ranges\": %zu, \"ranges\": [", e->nonfinite_a,
            e->nonfinite_b, e->n_ranges);
    for (size_t i = 0; i < e->n_ranges && i < 8; i++)
        fprintf(f, "%s[%zu, %zu]", i ? ", " : "", e->ranges[i][0], e->ranges[i][1]);
    fputs("]}", f);
}

static void json_run(FILE *f, const sb_run_result *r)
{
    sb_outcome o = sb_run_outcome(r);
    fprintf(f, "        {\"threads\": %d, \"repeat\": %d, \"verdict\": \"%s\", \"expected\": \"%s\","
               " \"as_expected\": %s, \"not_reached\": %s,\n         \"truncated\": ",
            r->threads, r->repeat, sb_verdict_name(r->verdict), sb_verdict_name(r->expected),
            o == SB_OUTCOME_AS_EXPECTED ? "true" : "false",
            o == SB_OUTCOME_NOT_REACHED ? "true" : "false");
    if (r->max_steps > 0)
        fprintf(f, "{\"max_steps\": %" PRId64 "}", r->max_steps);
    else
        fputs("null", f);
    fputs(", \"first_divergence\": ", f);
    json_divergence(f, &r->div);
    fputs(",\n         \"metrics\": ", f);
    if (r->have_metrics) {
        fprintf(f, "{\"epoch\": %d, \"steps\": %" PRId64 ", \"train_loss\": ", r->metrics.epoch,
                r->metrics.steps);
        json_number(f, r->metrics.train_loss);
        fputs(", \"test_loss\": ", f);
        json_number(f, r->metrics.test_loss);
        fputs(", \"test_accuracy\": ", f);
        json_number(f, r->metrics.test_accuracy);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(", \"seconds\": ", f);
    json_number(f, r->seconds);
    fputs(", \"message\": ", f);
    json_string(f, r->message);
    fputc('}', f);
}

static void json_case(FILE *f, const sb_case_result *cr)
{
    const sb_case *c = cr->c;
    SB_ASSERT(c != NULL);
    fputs("    {\"name\": ", f);
    json_string(f, c->name);
    fputs(", \"path\": ", f);
    json_string(f, c->path);
    fprintf(f, ", \"kind\": \"%s\", \"family\": \"%s\", \"reference_threads\": %d,"
               " \"as_expected\": %s,\n      \"runs\": [\n",
            c->kind == SB_CASE_TRAIN ? "train" : "kernel", sb_family_name(c->family),
            c->reference_threads, cr->as_expected ? "true" : "false");
    for (int i = 0; i < cr->n_runs; i++) {
        json_run(f, &cr->runs[i]);
        fputs(i + 1 < cr->n_runs ? ",\n" : "\n", f);
    }
    fputs("      ]}", f);
}

sb_status sb_report_json(const char *path, const sb_case_result *r, int n)
{
    sb_report_file rf;
    sb_status st = sb_report_file_open(&rf, path);
    if (st != SB_OK)
        return st;
    FILE *f = rf.f;
    fprintf(f, "{\"format_version\": %d,\n \"cases\": [\n", SB_REPORT_JSON_VERSION);
    for (int i = 0; i < n; i++) {
        json_case(f, &r[i]);
        fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs(" ]}\n", f);
    return sb_report_file_commit(&rf);
}
