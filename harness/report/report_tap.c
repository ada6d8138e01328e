/* TAP version 13, as meson's `protocol : 'tap'` reads it: the plan, one
 * line per run, and diagnostics under each failure. */
#include <inttypes.h>

#include "sb_harness.h"

/* Names go into a test line, where '#' would start a directive and a
 * newline would end the line. */
static void tap_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '#')
            fputs("\\#", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void tap_diagnostics(FILE *f, const sb_run_result *r)
{
    const sb_divergence *d = &r->div;
    if (d->found) {
        fprintf(f, "# first divergence: step %" PRId64 " ", d->step);
        tap_text(f, d->probe);
        fputs(" (", f);
        tap_text(f, d->op);
        fprintf(f, "), inputs identical %s%s%s\n", d->inputs_identical ? "y" : "n",
                d->structural ? ", structural" : "",
                d->nondeterministic ? ", re-runs did not reproduce it" : "");
        if (d->have_elements) {
            char bound[384];
            sb_elem_bound_text(bound, sizeof bound, &d->elem);
            fprintf(f, "# %zu of %zu elements differ, max abs %.3g, max ULP %.3g, %s\n",
                    d->elem.differing, d->elem.total, d->elem.max_abs, d->elem.max_ulp, bound);
        }
    }
    const sb_origins *g = &r->origins;
    const sb_divergence *w = sb_origins_worst(g);
    if (w) {
        fprintf(f, "# origins %d, located %d%s; worst step %" PRId64 " ", g->count, g->located,
                r->origins_capped ? " (cap hit)" : "", w->step);
        tap_text(f, w->probe);
        fprintf(f, " %s\n", sb_verdict_name(sb_divergence_verdict(w)));
    }
    const sb_divergence *u = sb_run_unbounded_at(r);
    if (u) {
        char why[512];
        sb_unbounded_text(why, sizeof why, u);
        fputs("# unbounded: ", f);
        tap_text(f, why);
        fputc('\n', f);
    }
    if (r->repeats_with > 0) {
        fprintf(f, "# parts from repeat %d at step %" PRId64 " ", r->repeats_with,
                r->repeats_part.step);
        tap_text(f, r->repeats_part.probe);
        fputc('\n', f);
    }
    if (r->message[0]) {
        fputs("# ", f);
        tap_text(f, r->message);
        fputc('\n', f);
    }
    if (r->crash.how[0]) {
        char where[640];
        sb_crash_describe(where, sizeof where, &r->crash);
        fputs("# ", f);
        tap_text(f, where);
        fputc('\n', f);
    }
}

void sb_report_tap(FILE *f, const sb_case_result *r, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        total += r[i].n_runs;
    fprintf(f, "TAP version 13\n1..%d\n", total);
    int number = 0;
    for (int i = 0; i < n; i++) {
        SB_ASSERT(r[i].c != NULL);
        for (int j = 0; j < r[i].n_runs; j++) {
            const sb_run_result *run = &r[i].runs[j];
            sb_outcome o = sb_run_outcome(run);
            bool ok = o != SB_OUTCOME_NOT_AS_EXPECTED;
            fprintf(f, "%s %d - ", ok ? "ok" : "not ok", ++number);
            tap_text(f, r[i].c->name);
            char config[96];
            sb_run_config_name(run, config, sizeof config);
            fprintf(f, " %s repeat=%d: %s", config, run->repeat, sb_verdict_name(run->verdict));
            const char *plural = run->max_steps == 1 ? "" : "s";
            if (o == SB_OUTCOME_NOT_REACHED)
                fprintf(f, " # SKIP expected %s, not reached in the first %" PRId64 " step%s",
                        sb_verdict_name(run->expected), run->max_steps, plural);
            else if (run->max_steps > 0)
                fprintf(f, " (first %" PRId64 " step%s)", run->max_steps, plural);
            if (!ok)
                fprintf(f, " (expected %s)", sb_verdict_name(run->expected));
            fputc('\n', f);
            if (!ok)
                tap_diagnostics(f, run);
        }
    }
}
