/* The text report: a compact table per case, then one line per case. */
#include <inttypes.h>

#include "samebits.h"

static void text_divergence(char *out, size_t len, const sb_run_result *r)
{
    const sb_divergence *d = &r->div;
    if (d->found)
        snprintf(out, len, "step %" PRId64 " %s (%s)%s%s", d->step, d->probe, d->op,
                 d->structural ? " structural" : "",
                 d->nondeterministic ? " not repeatable" : "");
    else if (r->message[0]) {
        snprintf(out, len, "%s", r->message);
        /* one row per run: a multi-line message is folded */
        for (char *c = out; *c; c++)
            if (*c == '\n' || *c == '\r' || *c == '\t')
                *c = ' ';
    } else
        snprintf(out, len, "-");
}

static void text_row(FILE *f, const sb_case_result *cr, const sb_run_result *r)
{
    char where[320], counts[48] = "-", abs_s[16] = "-", ulp_s[16] = "-", ratio_s[16] = "-";
    char expected[24];
    text_divergence(where, sizeof where, r);
    snprintf(expected, sizeof expected, "%s%s", sb_verdict_name(r->expected),
             r->verdict == r->expected ? "" : " *");
    const sb_divergence *d = &r->div;
    if (d->found && d->have_elements) {
        snprintf(counts, sizeof counts, "%zu/%zu", d->elem.differing, d->elem.total);
        snprintf(abs_s, sizeof abs_s, "%.3g", d->elem.max_abs);
        snprintf(ulp_s, sizeof ulp_s, "%.6g", d->elem.max_ulp);
        snprintf(ratio_s, sizeof ratio_s, "%.3g", d->elem.bound_ratio);
    }
    fprintf(f, "%7d %6d  %-12s  %-14s  %-44s  %-7s  %-15s  %-9s  %-7s  %-11s", r->threads,
            r->repeat, sb_verdict_name(r->verdict), expected, where,
            d->found ? (d->inputs_identical ? "y" : "n") : "-", counts, abs_s, ulp_s, ratio_s);
    if (cr->c->kind == SB_CASE_TRAIN) {
        if (r->have_metrics)
            fprintf(f, "  %9.4f  %8.4f", r->metrics.test_loss, r->metrics.test_accuracy);
        else
            fprintf(f, "  %9s  %8s", "-", "-");
    }
    fprintf(f, "  %7.2f\n", r->seconds);
}

static void text_case(FILE *f, const sb_case_result *cr)
{
    const sb_case *c = cr->c;
    SB_ASSERT(c != NULL);
    bool train = c->kind == SB_CASE_TRAIN;
    fprintf(f, "case %s (%s, %s, reference %d thread%s)\n", c->name, train ? "train" : "kernel",
            sb_family_name(c->family), c->reference_threads, c->reference_threads == 1 ? "" : "s");
    fprintf(f, "%7s %6s  %-12s  %-14s  %-44s  %-7s  %-15s  %-9s  %-7s  %-11s", "threads", "repeat",
            "verdict", "expected", "first divergence", "inputs=", "differing/total",
            "max abs", "max ULP", "bound ratio");
    if (train)
        fprintf(f, "  %9s  %8s", "test loss", "test acc");
    fprintf(f, "  %7s\n", "seconds");
    bool mismatch = false;
    for (int i = 0; i < cr->n_runs; i++) {
        text_row(f, cr, &cr->runs[i]);
        mismatch |= cr->runs[i].verdict != cr->runs[i].expected;
    }
    if (mismatch)
        fputs("* verdict differs from the expected one\n", f);
    fputc('\n', f);
}

void sb_report_text(FILE *f, const sb_case_result *r, int n)
{
    for (int i = 0; i < n; i++)
        text_case(f, &r[i]);
    for (int i = 0; i < n; i++) {
        int off = 0;
        for (int j = 0; j < r[i].n_runs; j++)
            off += r[i].runs[j].verdict != r[i].runs[j].expected;
        if (r[i].as_expected && off == 0)
            fprintf(f, "%s: as expected\n", r[i].c->name);
        else
            fprintf(f, "%s: NOT as expected (%d of %d runs)\n", r[i].c->name, off, r[i].n_runs);
    }
}
