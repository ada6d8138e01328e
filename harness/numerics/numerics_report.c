/* Reports of the numerics mode: a text table per case and a JSON file.
 * The layout of both is in NUMERICS.md. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "numerics.h"
#include "report/report_file.h"

/* ---- text ------------------------------------------------------------------ */

static void text_probe(FILE *f, const sb_numerics_probe *q)
{
    fprintf(f, "  %5" PRId64 "  %-24s %-18s %9zu  %9.3g  %9.3g  %9.3g  %9.3g%s\n", q->step, q->name,
            q->op, q->count, q->max_abs, q->max_rel, q->max_ulp, q->ratio,
            q->ratio > 1.0 ? "  BEYOND BOUND" : "");
}

void sb_numerics_report_text(FILE *f, const sb_numerics_case_report *cr, bool all_probes)
{
    const sb_numerics_result *r = cr->r;
    const sb_numerics_case *nc = cr->nc;
    fprintf(f, "numerics %s: family %s, %d thread%s%s%s\n", cr->c->name, sb_family_name(r->family),
            cr->threads, cr->threads == 1 ? "" : "s", nc->mutant[0] ? ", mutant " : "", nc->mutant);
    fprintf(f, "  %zu probes checked, %zu beyond bound, %zu not evaluated\n", r->n_probes,
            r->n_beyond, r->n_unchecked);
    fprintf(f, "  %5s  %-24s %-18s %9s  %9s  %9s  %9s  %9s\n", "step", "probe", "op", "elements",
            "max_abs", "max_rel", "max_ulp", "ratio");
    /* the worst probe of each step, or all of them */
    for (size_t i = 0; i < r->n_probes; i++) {
        const sb_numerics_probe *q = &r->probes[i];
        bool show = all_probes || q->ratio > 1.0;
        if (!show) {
            size_t worst = i;
            for (size_t j = 0; j < r->n_probes; j++)
                if (r->probes[j].step == q->step && r->probes[j].ratio > r->probes[worst].ratio)
                    worst = j;
            show = worst == i;
        }
        if (show)
            text_probe(f, q);
    }
    if (r->first_beyond >= 0) {
        const sb_numerics_probe *q = &r->probes[r->first_beyond];
        fprintf(f, "  first beyond bound: step %" PRId64 " %s (op %s) element %zu: got %.9g, "
                   "expected %.17g, bound %.3g, ratio %.3g\n    inputs: %s\n",
                q->step, q->name, q->op, q->worst, (double)q->got, q->expect, q->bound, q->ratio,
                q->inputs);
    }
    const sb_numerics_nonfinite *nf = &r->nonfinite;
    if (nf->found) {
        fprintf(f, "  first non-finite: step %" PRId64 " %s (op %s) element %zu = %g", nf->step,
                nf->name, nf->op, nf->index, (double)nf->value);
        if (nf->have_expect)
            fprintf(f, ", expected %.17g", nf->expect);
        fprintf(f, "\n    inputs: %s\n", nf->inputs);
    }
    const sb_numerics_golden *g = cr->g;
    if (!g->compared)
        fprintf(f, "  golden: not compared (%s)\n", g->why);
    else if (!g->div.found)
        fprintf(f, "  golden: identical\n");
    else
        fprintf(f, "  golden: differs from step %" PRId64 " %s (%s)\n", g->div.step, g->div.probe,
                g->div.op);
    const sb_numerics_finding found = sb_numerics_finding_of(r);
    fprintf(f, "  finding: %s%s%s, expected %s%s%s: %s\n", sb_numerics_finding_name(found),
            found != SB_FINDING_CLEAN ? " at " : "", sb_numerics_finding_probe(r),
            sb_numerics_finding_name(nc->expect), nc->expect_probe[0] ? " at " : "",
            nc->expect_probe, cr->as_expected ? "as expected" : "NOT AS EXPECTED");
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* JSON has no infinities or NaN: those are the strings "inf", "-inf", "nan". */
static void json_number(FILE *f, double v)
{
    if (isnan(v))
        fputs("\"nan\"", f);
    else if (isinf(v))
        fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
    else
        fprintf(f, "%.17g", v);
}

static void json_key_number(FILE *f, const char *key, double v, const char *after)
{
    fprintf(f, "\"%s\": ", key);
    json_number(f, v);
    fputs(after, f);
}

static void json_probe(FILE *f, const sb_numerics_probe *q)
{
    fprintf(f, "{\"step\": %" PRId64 ", \"probe\": ", q->step);
    json_string(f, q->name);
    fputs(", \"op\": ", f);
    json_string(f, q->op);
    fprintf(f, ", \"elements\": %zu, ", q->count);
    json_key_number(f, "max_abs", q->max_abs, ", ");
    json_key_number(f, "max_rel", q->max_rel, ", ");
    json_key_number(f, "max_ulp", q->max_ulp, ", ");
    json_key_number(f, "ratio", q->ratio, ", ");
    fprintf(f, "\"worst\": {\"index\": %zu, ", q->worst);
    json_key_number(f, "got", (double)q->got, ", ");
    json_key_number(f, "expected", q->expect, ", ");
    json_key_number(f, "bound", q->bound, "");
    if (q->ratio > 1.0) {
        fputs(", \"inputs\": ", f);
        json_string(f, q->inputs);
    }
    fputs("}}", f);
}

static void json_case(FILE *f, const sb_numerics_case_report *cr)
{
    const sb_numerics_result *r = cr->r;
    fputs("    {\"case\": ", f);
    json_string(f, cr->c->name);
    fputs(", \"path\": ", f);
    json_string(f, cr->c->path);
    fputs(", \"family\": ", f);
    json_string(f, sb_family_name(r->family));
    fprintf(f, ", \"threads\": %d, \"mutant\": ", cr->threads);
    if (cr->nc->mutant[0])
        json_string(f, cr->nc->mutant);
    else
        fputs("null", f);
    fputs(",\n     \"finding\": ", f);
    json_string(f, sb_numerics_finding_name(sb_numerics_finding_of(r)));
    fputs(", \"finding_probe\": ", f);
    json_string(f, sb_numerics_finding_probe(r));
    fputs(", \"expect\": ", f);
    json_string(f, sb_numerics_finding_name(cr->nc->expect));
    fputs(", \"expect_probe\": ", f);
    json_string(f, cr->nc->expect_probe);
    fprintf(f, ", \"as_expected\": %s,\n     \"checked\": %zu, \"beyond_bound\": %zu, "
               "\"not_evaluated\": %zu,\n     \"golden\": ",
            cr->as_expected ? "true" : "false", r->n_probes, r->n_beyond, r->n_unchecked);
    const sb_numerics_golden *g = cr->g;
    if (!g->compared) {
        fputs("{\"compared\": false, \"why\": ", f);
        json_string(f, g->why);
        fputs("}", f);
    } else {
        fprintf(f, "{\"compared\": true, \"identical\": %s", g->div.found ? "false" : "true");
        if (g->div.found) {
            fprintf(f, ", \"step\": %" PRId64 ", \"probe\": ", g->div.step);
            json_string(f, g->div.probe);
        }
        fputs("}", f);
    }
    fputs(",\n     \"nonfinite\": ", f);
    const sb_numerics_nonfinite *nf = &r->nonfinite;
    if (!nf->found) {
        fputs("null", f);
    } else {
        fprintf(f, "{\"step\": %" PRId64 ", \"probe\": ", nf->step);
        json_string(f, nf->name);
        fputs(", \"op\": ", f);
        json_string(f, nf->op);
        fprintf(f, ", \"index\": %zu, ", nf->index);
        json_key_number(f, "value", (double)nf->value, ", ");
        fputs("\"expected\": ", f);
        if (nf->have_expect)
            json_number(f, nf->expect);
        else
            fputs("null", f);
        fputs(", \"inputs\": ", f);
        json_string(f, nf->inputs);
        fputs("}", f);
    }
    fputs(",\n     \"probes\": [", f);
    for (size_t i = 0; i < r->n_probes; i++) {
        fputs(i ? ",\n       " : "\n       ", f);
        json_probe(f, &r->probes[i]);
    }
    fputs("]}", f);
}

sb_status sb_numerics_report_json(const char *path, const sb_numerics_case_report *cr, int n)
{
    sb_report_file rf;
    sb_status st = sb_report_file_open(&rf, path);
    if (st != SB_OK)
        return st;
    fputs("{\"samebits_numerics\": 1,\n  \"cases\": [\n", rf.f);
    for (int i = 0; i < n; i++) {
        json_case(rf.f, &cr[i]);
        fputs(i + 1 < n ? ",\n" : "\n", rf.f);
    }
    fputs("  ]}\n", rf.f);
    return sb_report_file_commit(&rf);
}
