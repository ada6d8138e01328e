/* The JUnit XML report: one testsuite per case, one testcase per run, and a
 * failure element where the verdict is not the expected one. */
#include <inttypes.h>

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

static int suite_count(const sb_case_result *cr, sb_outcome outcome)
{
    int n = 0;
    for (int i = 0; i < cr->n_runs; i++)
        n += sb_run_outcome(&cr->runs[i]) == outcome;
    return n;
}

static double suite_seconds(const sb_case_result *cr)
{
    double s = 0.0;
    for (int i = 0; i < cr->n_runs; i++)
        s += cr->runs[i].seconds;
    return s;
}

static void junit_where(FILE *f, const char *what, const sb_divergence *d)
{
    char line[320];
    fputs("&#10;", f);
    snprintf(line, sizeof line, "%s: step %" PRId64 " %s (%s) %s", what, d->step, d->probe,
             d->op, sb_verdict_name(sb_divergence_verdict(d)));
    xml_text(f, line);
    if (d->have_elements)
        fprintf(f, ", differing %zu of %zu, max abs %.9g, bound ratio %.9g", d->elem.differing,
                d->elem.total, d->elem.max_abs, d->elem.bound_ratio);
}

static void junit_failure(FILE *f, const sb_run_result *r)
{
    char msg[160];
    snprintf(msg, sizeof msg, "expected %s, got %s", sb_verdict_name(r->expected),
             sb_verdict_name(r->verdict));
    fprintf(f, "      <failure type=\"%s\" message=\"", sb_verdict_name(r->verdict));
    xml_text(f, msg);
    fputs("\">", f);
    const sb_divergence *d = &r->div;
    if (d->found) {
        char where[256];
        snprintf(where, sizeof where, "first divergence: step %" PRId64 " %s (%s)", d->step,
                 d->probe, d->op);
        xml_text(f, where);
        fprintf(f, "&#10;inputs identical: %s%s", d->inputs_identical ? "yes" : "no",
                d->structural ? ", structural (different probe sequence)" : "");
        if (d->nondeterministic)
            fprintf(f, "&#10;no re-run of %d reproduced the run's hash: nondeterministic",
                    d->reruns);
        if (d->reference_unreproduced)
            fputs("&#10;the reference re-run did not reproduce the golden's hash", f);
        if (d->have_elements)
            fprintf(f, "&#10;differing %zu of %zu, max abs %.9g, max rel %.9g, max ULP %.9g,"
                       " bound ratio %.9g",
                    d->elem.differing, d->elem.total, d->elem.max_abs, d->elem.max_rel,
                    d->elem.max_ulp, d->elem.bound_ratio);
    }
    const sb_origins *g = &r->origins;
    if (g->count > 0) {
        fprintf(f, "&#10;origins: %d, located %d%s", g->count, g->located,
                r->origins_capped ? " (cap hit)" : "");
        junit_where(f, "first origin", &g->list[0]);
        if (sb_origins_worst(g))
            junit_where(f, "worst origin", sb_origins_worst(g));
    }
    if (r->repeats_with > 0) {
        char what[64];
        snprintf(what, sizeof what, "parts from repeat %d at", r->repeats_with);
        junit_where(f, what, &r->repeats_part);
    }
    if (r->message[0]) {
        if (d->found)
            fputs("&#10;", f);
        xml_text(f, r->message);
    }
    if (r->crash.how[0]) {
        char where[640];
        sb_crash_describe(where, sizeof where, &r->crash);
        fputs("&#10;", f);
        xml_text(f, where);
    }
    fputs("</failure>\n", f);
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

static void junit_case(FILE *f, const sb_case_result *cr)
{
    SB_ASSERT(cr->c != NULL);
    fputs("  <testsuite name=\"", f);
    xml_text(f, cr->c->name);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
            cr->n_runs, suite_count(cr, SB_OUTCOME_NOT_AS_EXPECTED),
            suite_count(cr, SB_OUTCOME_NOT_REACHED), suite_seconds(cr));
    /* a sweep gives every run of a case the same step limit */
    if (cr->n_runs > 0 && cr->runs[0].max_steps > 0)
        fprintf(f, "    <properties><property name=\"max_steps\" value=\"%" PRId64
                   "\"/></properties>\n", cr->runs[0].max_steps);
    for (int i = 0; i < cr->n_runs; i++) {
        const sb_run_result *r = &cr->runs[i];
        fputs("    <testcase classname=\"", f);
        xml_text(f, cr->c->name);
        fprintf(f, "\" name=\"threads=%d repeat=%d\" time=\"%.3f\"", r->threads, r->repeat,
                r->seconds);
        switch (sb_run_outcome(r)) {
        case SB_OUTCOME_AS_EXPECTED:
            if (!r->crash.how[0]) {
                fputs("/>\n", f);
                continue;
            }
            fputs(">\n", f);
            break;
        case SB_OUTCOME_NOT_REACHED:
            fprintf(f, ">\n      <skipped message=\"expected %s, not reached in the first %" PRId64
                       " step%s\"/>\n", sb_verdict_name(r->expected), r->max_steps,
                    r->max_steps == 1 ? "" : "s");
            break;
        case SB_OUTCOME_NOT_AS_EXPECTED:
            fputs(">\n", f);
            junit_failure(f, r);
            break;
        }
        if (r->crash.how[0])
            junit_system_err(f, r);
        fputs("    </testcase>\n", f);
    }
    fputs("  </testsuite>\n", f);
}

sb_status sb_report_junit(const char *path, const sb_case_result *r, int n)
{
    sb_report_file rf;
    sb_status st = sb_report_file_open(&rf, path);
    if (st != SB_OK)
        return st;
    int tests = 0, failures = 0, skipped = 0;
    for (int i = 0; i < n; i++) {
        tests += r[i].n_runs;
        failures += suite_count(&r[i], SB_OUTCOME_NOT_AS_EXPECTED);
        skipped += suite_count(&r[i], SB_OUTCOME_NOT_REACHED);
    }
    fprintf(rf.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<testsuites name=\"samebits\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
            tests, failures, skipped);
    for (int i = 0; i < n; i++)
        junit_case(rf.f, &r[i]);
    fputs("</testsuites>\n", rf.f);
    return sb_report_file_commit(&rf);
}
