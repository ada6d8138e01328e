/* The sweep driver every producer goes through: `samebits sweep` (cli/),
 * a user's program (user/user.c) and the command cases of either. For each
 * case it reads the golden and sweeps every axis the options ask for
 * (sb_sweep_case for the thread counts, sb_sweep_batch for the batch
 * axis); for the whole sweep it writes the reports and the census, an
 * input error an <error> in the JUnit report. The exit status is
 * sb_sweep_exit's. */
#include <string.h>

#include "support/support.h"

/* The thread counts (and ranks) against the golden. */
static sb_status threads_sweep(sb_case_result *r, const sb_case *c, const sb_sweep_options *o,
                               const char *regenerate, char *err, size_t errlen)
{
    sb_trace golden;
    sb_trace_init(&golden);
    sb_status st = sb_golden_read_hinted(&golden, c->golden_path, c->digest, regenerate, err,
                                         errlen);
    if (st == SB_OK)
        st = sb_sweep_case(c, &golden, o, r, err, errlen);
    sb_trace_free(&golden);
    return st;
}

sb_status sb_sweep_axes(sb_case_result *r, sb_case *c, const sb_sweep_options *o,
                        const char *regenerate, char *err, size_t errlen)
{
    sb_status st = SB_OK;
    if (o->batch)
        st = sb_case_batch_override(c, o->batch, o->n_batch, err, errlen);
    bool threads = o->axes == 0 || (o->axes & SB_AXIS_BIT(SB_AXIS_THREADS));
    /* the batch axis of a case that has one, and in shard 1 of a sharded
     * sweep alone (its sizes are not items of the round-robin) */
    bool batch = c->n_batch > 0 && (o->axes == 0 || (o->axes & SB_AXIS_BIT(SB_AXIS_BATCH))) &&
                 (o->shard_count == 0 || o->shard_index == 0);
    memset(r, 0, sizeof *r);
    r->c = c;
    r->as_expected = true;
    if (st == SB_OK && threads)
        st = threads_sweep(r, c, o, regenerate, err, errlen);
    if (st == SB_OK && batch)
        st = sb_sweep_batch(c, o, r, err, errlen);
    if (st == SB_OK && !threads && !batch) {
        sb_err_set(err, errlen, "%s: no axis to sweep (--axis batch on a case without "
                   "[invariance] batch, and no --batch)", c->path);
        st = SB_ERR_USAGE;
    }
    if (st != SB_OK)
        sb_case_result_free(r);
    return st;
}

sb_status sb_sweep_census(sb_census *cs, const sb_case_result *r, const char *work_dir,
                          bool keep_traces, char *err, size_t errlen)
{
    const sb_case *c = r->c;
    sb_trace golden;
    sb_trace_init(&golden);
    sb_status st = sb_golden_read(&golden, c->golden_path, c->digest, err, errlen);
    if (st == SB_OK && (st = sb_census_build(cs, r, &golden, work_dir)) != SB_OK)
        sb_err_set(err, errlen, "%s: no census: out of memory", c->path);
    sb_trace_free(&golden);
    if (!keep_traces)
        sb_census_remove_traces(r, work_dir);
    return st;
}

/* "PATH: cannot write the KIND report" on stderr; false. */
static bool report_failed(const char *path, const char *what)
{
    fprintf(stderr, "%s: cannot write the %s\n", path, what);
    return false;
}

bool sb_sweep_reports_write(const sb_sweep_reports *rep, const sb_case_result *r, int n,
                            const sb_census *cs, int n_cs, const sb_report_shard *shard,
                            const char *input_error)
{
    bool ok = true;
    if (rep->json && sb_report_json(rep->json, r, n, shard) != SB_OK)
        ok = report_failed(rep->json, "JSON report");
    if (rep->junit && sb_report_junit_input_error(rep->junit, r, n, input_error) != SB_OK)
        ok = report_failed(rep->junit, "JUnit report");
    if (rep->census_json && sb_census_json(rep->census_json, cs, n_cs) != SB_OK)
        ok = report_failed(rep->census_json, "census");
    if (rep->census_md && sb_census_markdown_file(rep->census_md, cs, n_cs) != SB_OK)
        ok = report_failed(rep->census_md, "census");
    if (rep->tap)
        sb_report_tap(stdout, r, n);
    return ok;
}
