/* The JUnit XML report: one testsuite per case, one testcase per run. A run
 * not as expected is a <failure> (its type the verdict), or an <error> when
 * it crashed or timed out; the divergence details go to <system-out>, how a
 * dead run died to <system-err>. Elements and attributes are those both the
 * Jenkins JUnit schema kept in harness/report/schema/ and GitLab's reader
 * take, children of a testcase in that schema's order. */
#include <inttypes.h>
#include <stdarg.h>

#include "report_file.h"

/* Text for an attribute or element: markup characters as entities,
 * characters XML 1.0 forbids (most controls) and malformed UTF-8 as
 * U+FFFD, so the file always parses. */
static void xml_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t len = sb_utf8_len(p);
        if (len == 0 || (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')) {
            fputs("\xef\xbf\xbd", f);
            p++;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        /* newlines in attributes would be normalised to spaces by a reader */
        case '\n': fputs("&#10;", f); break;
        case '\r': fputs("&#13;", f); break;
        case '\t': fputs("&#9;", f); break;
        default: fwrite(p, 1, len, f); break;
        }
        p += len;
    }
}

/* printf into xml_text. */
static void xml_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xml_printf(FILE *f, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    xml_text(f, line);
}

static bool run_died(const sb_run_result *r)
{
    return r->verdict == SB_VERDICT_CRASH || r->verdict == SB_VERDICT_TIMEOUT;
}

/* What a CI server counts: a run not as expected is an error when it died,
 * a failure otherwise; a run not reached is skipped. */
typedef struct junit_counts {
    int tests, failures, errors, skipped;
    double seconds;
} junit_counts;

static void counts_add(junit_counts *n, const sb_case_result *cr)
{
    for (int i = 0; i < cr->n_runs; i++) {
        const sb_run_result *r = &cr->runs[i];
        sb_outcome o = sb_run_outcome(r);
        n->tests++;
        n->failures += o == SB_OUTCOME_NOT_AS_EXPECTED && !run_died(r);
        n->errors += o == SB_OUTCOME_NOT_AS_EXPECTED && run_died(r);
        n->skipped += o == SB_OUTCOME_NOT_REACHED;
        n->seconds += r->seconds;
    }
}

/* One divergence on a line: where, its verdict, its elements. */
static void junit_where(FILE *f, const char *what, const sb_divergence *d, bool located)
{
    xml_printf(f, "%s: step %" PRId64 " %s (%s), %s", what, d->step, d->probe, d->op,
               located ? sb_verdict_name(sb_divergence_verdict(d)) : "not located");
    if (d->have_elements) {
        char bound[384];
        sb_elem_bound_text(bound, sizeof bound, &d->elem);
        xml_printf(f, ", %zu of %zu elements differ, max abs %.3g, %s", d->elem.differing,
                   d->elem.total, d->elem.max_abs, bound);
    }
    fputs("&#10;", f);
}

/* The divergence details of a run, one fact a line, in plain words. */
static void junit_details(FILE *f, const sb_run_result *r)
{
    const sb_divergence *d = &r->div;
    if (d->found) {
        xml_printf(f, "first divergence: step %" PRId64 " %s (%s)\n", d->step, d->probe, d->op);
        fputs(d->inputs_identical ? "its inputs are identical: the difference arises in this op"
                                  : "its inputs differ: the difference comes from upstream", f);
        fputs(d->structural ? "&#10;the probe sequence itself differs (structural)" : "", f);
        fputs("&#10;", f);
        if (d->nondeterministic)
            xml_printf(f, "no re-run of %d reproduced the run's hash: nondeterministic\n",
                       d->reruns);
        if (d->reference_unreproduced)
            fputs("the reference re-run did not reproduce the golden's hash&#10;", f);
        if (d->have_elements && d->elem.bounded)
            xml_printf(f, "%zu of %zu elements differ, max abs %.3g, max rel %.3g, max ULP %.6g,"
                          " bound ratio %.3g (%s the reordering bound)\n",
                       d->elem.differing, d->elem.total, d->elem.max_abs, d->elem.max_rel,
                       d->elem.max_ulp, d->elem.bound_ratio,
                       d->elem.within_bound ? "within" : "beyond");
        else if (d->have_elements)
            xml_printf(f, "%zu of %zu elements differ, max abs %.3g, max rel %.3g, max ULP %.6g,"
                          " no bound known for op %s\n",
                       d->elem.differing, d->elem.total, d->elem.max_abs, d->elem.max_rel,
                       d->elem.max_ulp, d->op);
    }
    const sb_origins *g = &r->origins;
    bool first_only = g->count == 1 && d->found && g->list[0].index == d->index;
    if (g->count > 0 && !first_only) {
        xml_printf(f, "origins: %d, located %d%s\n", g->count, g->located,
                   r->origins_capped ? " (cap hit)" : "");
        junit_where(f, "first origin", &g->list[0], g->located > 0);
        if (sb_origins_worst(g))
            junit_where(f, "worst origin", sb_origins_worst(g), true);
    }
    if (r->repeats_with > 0) {
        char what[64];
        snprintf(what, sizeof what, "parts from repeat %d at", r->repeats_with);
        junit_where(f, what, &r->repeats_part, r->repeats_part.have_elements);
    }
    if (r->message[0] && !run_died(r)) {
        xml_text(f, r->message);
        fputs("&#10;", f);
    }
}

static bool run_has_details(const sb_run_result *r)
{
    return r->div.found || r->origins.count > 0 || r->repeats_with > 0 ||
           (r->message[0] && !run_died(r));
}

/* <failure> or <error>: the expected and the actual verdict, and where. */
static void junit_not_as_expected(FILE *f, const sb_run_result *r)
{
    const char *element = run_died(r) ? "error" : "failure";
    char expected[96];
    sb_run_expected_name(r, expected, sizeof expected);
    fprintf(f, "      <%s type=\"%s\" message=\"", element, sb_verdict_name(r->verdict));
    xml_printf(f, "expected %s, got %s", expected, sb_verdict_name(r->verdict));
    const sb_divergence *u = sb_run_unbounded_at(r);
    char why[512];
    if (u)
        sb_unbounded_text(why, sizeof why, u);
    if (run_died(r))
        xml_printf(f, ": %s", r->message);
    else if (u)
        xml_printf(f, ": %s", why);
    else if (r->div.found)
        xml_printf(f, " at step %" PRId64 " %s (%s)", r->div.step, r->div.probe, r->div.op);
    fprintf(f, "\"/>\n");
}

/* A dead run's how and where, and its first stderr line, whether or not
 * the case expected it to die. */
static void junit_system_err(FILE *f, const sb_run_result *r)
{
    char where[640];
    sb_crash_describe(where, sizeof where, &r->crash);
    fputs("      <system-err>", f);
    xml_text(f, where);
    if (r->crash.stderr_line[0]) {
        fputs("&#10;stderr: ", f);
        xml_text(f, r->crash.stderr_line);
    }
    fputs("</system-err>\n", f);
}

static void junit_run(FILE *f, const sb_case_result *cr, const sb_run_result *r)
{
    fputs("    <testcase classname=\"", f);
    xml_text(f, cr->c->name);
    char config[96];
    sb_run_config_name(r, config, sizeof config);
    fprintf(f, "\" name=\"%s repeat=%d\" time=\"%.3f\"", config, r->repeat, r->seconds);
    sb_outcome o = sb_run_outcome(r);
    bool died = run_died(r) && r->crash.how[0];
    if (o == SB_OUTCOME_AS_EXPECTED && !died && !run_has_details(r)) {
        fputs("/>\n", f);
        return;
    }
    fputs(">\n", f);
    switch (o) {
    case SB_OUTCOME_AS_EXPECTED:
        break;
    case SB_OUTCOME_NOT_REACHED:
        /* as text: the Jenkins schema's <skipped> has no attributes */
        fprintf(f, "      <skipped>expected %s, not reached in the first %" PRId64
                   " step%s</skipped>\n", sb_verdict_name(r->expected), r->max_steps,
                r->max_steps == 1 ? "" : "s");
        break;
    case SB_OUTCOME_NOT_AS_EXPECTED:
        junit_not_as_expected(f, r);
        break;
    }
    if (run_has_details(r)) {
        fputs("      <system-out>", f);
        junit_details(f, r);
        fputs("</system-out>\n", f);
    }
    if (died)
        junit_system_err(f, r);
    fputs("    </testcase>\n", f);
}

static void junit_counts_attributes(FILE *f, const junit_counts *n)
{
    fprintf(f, " tests=\"%d\" failures=\"%d\" errors=\"%d\"", n->tests, n->failures, n->errors);
}

static void junit_case(FILE *f, const sb_case_result *cr)
{
    SB_ASSERT(cr->c != NULL);
    junit_counts n = {0};
    counts_add(&n, cr);
    fputs("  <testsuite name=\"", f);
    xml_text(f, cr->c->name);
    fputc('"', f);
    junit_counts_attributes(f, &n);
    fprintf(f, " skipped=\"%d\" time=\"%.3f\">\n", n.skipped, n.seconds);
    fprintf(f, "    <properties><property name=\"sweep_id\" value=\"%s\"/>",
            sb_report_sweep_id());
    /* a sweep gives every run of a case the same step limit */
    if (cr->n_runs > 0 && cr->runs[0].max_steps > 0)
        fprintf(f, "<property name=\"max_steps\" value=\"%" PRId64 "\"/>",
                cr->runs[0].max_steps);
    fputs("</properties>\n", f);
    for (int i = 0; i < cr->n_runs; i++)
        junit_run(f, cr, &cr->runs[i]);
    fputs("  </testsuite>\n", f);
}

/* The testsuite of an input error: one testcase, one <error>. */
static void junit_input_error(FILE *f, const char *error)
{
    fputs("  <testsuite name=\"samebits\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\""
          " time=\"0.000\">\n", f);
    fprintf(f, "    <properties><property name=\"sweep_id\" value=\"%s\"/></properties>\n",
            sb_report_sweep_id());
    fputs("    <testcase classname=\"samebits\" name=\"input\" time=\"0.000\">\n"
          "      <error type=\"input\" message=\"", f);
    xml_text(f, error);
    fputs("\"/>\n    </testcase>\n  </testsuite>\n", f);
}

sb_status sb_report_junit_input_error(const char *path, const sb_case_result *r, int n,
                                      const char *error)
{
    sb_report_file rf;
    sb_status st = sb_report_file_open(&rf, path);
    if (st != SB_OK)
        return st;
    junit_counts all = {0};
    for (int i = 0; i < n; i++)
        counts_add(&all, &r[i]);
    all.tests += error != NULL;
    all.errors += error != NULL;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"samebits\"", rf.f);
    junit_counts_attributes(rf.f, &all);
    fprintf(rf.f, " time=\"%.3f\">\n", all.seconds);
    for (int i = 0; i < n; i++)
        junit_case(rf.f, &r[i]);
    if (error)
        junit_input_error(rf.f, error);
    fputs("</testsuites>\n", rf.f);
    return sb_report_file_commit(&rf);
}

sb_status sb_report_junit(const char *path, const sb_case_result *r, int n)
{
    return sb_report_junit_input_error(path, r, n, NULL);
}
