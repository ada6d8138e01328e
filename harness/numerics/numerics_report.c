/* Reports of the numerics mode: a text table per case and a JSON file.
 * The layout of both is in NUMERICS.md. */
#include <inttypes.h>
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
                q->step, q->name, q->op, q->worst, q->got, q->expect, q->bound, q->ratio,
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

static json_t *probe_json(const sb_numerics_probe *q)
{
    json_t *worst = json_pack("{s:I, s:o, s:o, s:o}", "index", (json_int_t)q->worst,
                              "got", sb_json_number(q->got),
                              "expected", sb_json_number(q->expect),
                              "bound", sb_json_number(q->bound));
    /* the inputs of the worst element only when it is beyond its bound */
    if (worst && q->ratio > 1.0 &&
        json_object_set_new(worst, "inputs", sb_json_string(q->inputs)) != 0) {
        json_decref(worst);
        worst = NULL;
    }
    return json_pack("{s:I, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o}", "step", (json_int_t)q->step,
                     "probe", sb_json_string(q->name), "op", sb_json_string(q->op),
                     "elements", (json_int_t)q->count, "max_abs", sb_json_number(q->max_abs),
                     "max_rel", sb_json_number(q->max_rel), "max_ulp", sb_json_number(q->max_ulp),
                     "ratio", sb_json_number(q->ratio), "worst", worst);
}

static json_t *golden_json(const sb_numerics_golden *g)
{
    if (!g->compared)
        return json_pack("{s:b, s:o}", "compared", false, "why", sb_json_string(g->why));
    if (!g->div.found)
        return json_pack("{s:b, s:b}", "compared", true, "identical", true);
    return json_pack("{s:b, s:b, s:I, s:o}", "compared", true, "identical", false,
                     "step", (json_int_t)g->div.step, "probe", sb_json_string(g->div.probe));
}

static json_t *nonfinite_json(const sb_numerics_nonfinite *nf)
{
    if (!nf->found)
        return json_null();
    return json_pack("{s:I, s:o, s:o, s:I, s:o, s:o, s:o}", "step", (json_int_t)nf->step,
                     "probe", sb_json_string(nf->name), "op", sb_json_string(nf->op),
                     "index", (json_int_t)nf->index, "value", sb_json_number((double)nf->value),
                     "expected", nf->have_expect ? sb_json_number(nf->expect) : json_null(),
                     "inputs", sb_json_string(nf->inputs));
}

static json_t *case_json(const sb_numerics_case_report *cr)
{
    const sb_numerics_result *r = cr->r;
    json_t *probes = json_array();
    for (size_t i = 0; probes && i < r->n_probes; i++)
        probes = sb_json_append(probes, probe_json(&r->probes[i]));
    return json_pack("{s:o, s:o, s:s, s:i, s:o, s:s, s:o, s:s, s:o, s:b, s:I, s:I, s:I, s:o, "
                     "s:o, s:o}",
                     "case", sb_json_string(cr->c->name), "path", sb_json_string(cr->c->path),
                     "family", sb_family_name(r->family), "threads", cr->threads,
                     "mutant", cr->nc->mutant[0] ? sb_json_string(cr->nc->mutant) : json_null(),
                     "finding", sb_numerics_finding_name(sb_numerics_finding_of(r)),
                     "finding_probe", sb_json_string(sb_numerics_finding_probe(r)),
                     "expect", sb_numerics_finding_name(cr->nc->expect),
                     "expect_probe", sb_json_string(cr->nc->expect_probe),
                     "as_expected", cr->as_expected, "checked", (json_int_t)r->n_probes,
                     "beyond_bound", (json_int_t)r->n_beyond,
                     "not_evaluated", (json_int_t)r->n_unchecked, "golden", golden_json(cr->g),
                     "nonfinite", nonfinite_json(&r->nonfinite), "probes", probes);
}

sb_status sb_numerics_report_json(const char *path, const sb_numerics_case_report *cr, int n)
{
    json_t *cases = json_array();
    for (int i = 0; cases && i < n; i++)
        cases = sb_json_append(cases, case_json(&cr[i]));
    return sb_json_write(path, json_pack("{s:i, s:o}", "samebits_numerics", 1, "cases", cases));
}
