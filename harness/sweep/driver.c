/* The sweep driver every producer goes through: `samebits sweep` (cli/),
 * a user's program (user/user.c) and the command cases of either. For each
 * case it reads the golden and sweeps the configuration space the case and
 * the options ask for (sb_sweep_case), prints its table and builds its
 * census; for the whole sweep it writes the reports, an input error an
 * <error> in the JUnit report. The exit status is sb_sweep_exit's. */
#include <stdlib.h>
#include <string.h>

#include "support/support.h"
#include "sweep/config.h"

sb_status sb_sweep_axes(sb_case_result *r, sb_case *c, const sb_sweep_options *o,
                        const char *regenerate, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->as_expected = true;
    sb_status st = SB_OK;
    if (o->batch)
        st = sb_case_batch_override(c, o->batch, o->n_batch, err, errlen);
    sb_trace golden;
    sb_trace_init(&golden);
    /* a user's program names its own command; a case file, samebits golden's */
    if (st == SB_OK && sb_configs_need_golden(c, o))
        st = regenerate ? sb_golden_read_hinted(&golden, c->golden_path, c->digest,
                                                regenerate, err, errlen)
                        : sb_case_golden_read(&golden, c, err, errlen);
    if (st == SB_OK)
        st = sb_sweep_case(c, &golden, o, r, err, errlen);
    sb_trace_free(&golden);
    if (st != SB_OK)
        sb_case_result_free(r);
    return st;
}

/* The census of a swept case (r->c) from its golden and the traces its
 * runs left in work_dir (removed after unless keep_traces). */
static sb_status census_build(sb_census *cs, const sb_case_result *r, const char *work_dir,
                              bool keep_traces, char *err, size_t errlen)
{
    const sb_case *c = r->c;
    sb_trace golden;
    sb_trace_init(&golden);
    sb_status st = sb_case_golden_read(&golden, c, err, errlen);
    if (st == SB_OK && (st = sb_census_build(cs, r, &golden, work_dir)) != SB_OK)
        sb_err_set(err, errlen, "%s: no census: out of memory", c->path);
    sb_trace_free(&golden);
    if (!keep_traces)
        sb_census_remove_traces(r, work_dir);
    return st;
}

/* "the KIND: PATH: why" on stderr (sb_report_error names the file); false. */
static bool report_failed(const char *what)
{
    fprintf(stderr, "the %s: %s\n", what, sb_report_error());
    return false;
}

/* Every report asked for; input_error non-NULL: the JUnit report holds it
 * as an <error>. False (a line on stderr for each) when one could not be
 * written. */
static bool reports_write(const sb_sweep_reports *rep, const sb_case_result *r, int n,
                          const sb_census *cs, int n_cs, const sb_report_shard *shard,
                          const char *input_error)
{
    bool ok = true;
    if (rep->json && sb_report_json(rep->json, r, n, shard) != SB_OK)
        ok = report_failed("JSON report");
    if (rep->junit && sb_report_junit_input_error(rep->junit, r, n, input_error) != SB_OK)
        ok = report_failed("JUnit report");
    if (rep->census_json && sb_census_json(rep->census_json, cs, n_cs) != SB_OK)
        ok = report_failed("census");
    if (rep->census_md && sb_census_markdown_file(rep->census_md, cs, n_cs) != SB_OK)
        ok = report_failed("census");
    if (rep->tap)
        sb_report_tap(stdout, r, n);
    return ok;
}

sb_status sb_sweep_driver_open(sb_sweep_driver *d, int capacity)
{
    d->capacity = capacity;
    d->n_results = d->n_censuses = 0;
    d->input_error = d->no_mpi = false;
    d->error[0] = '\0';
    if (d->census) {
        d->o.keep_traces = true;
    } else {
        d->o.keep_traces = d->keep_traces;
    }
    d->results = calloc((size_t)capacity, sizeof *d->results);
    d->censuses = calloc((size_t)capacity, sizeof *d->censuses);
    if (d->results && d->censuses)
        return SB_OK;
    free(d->results);
    free(d->censuses);
    d->results = NULL;
    d->censuses = NULL;
    return SB_ERR_NOMEM;
}

void sb_sweep_driver_refuse(sb_sweep_driver *d, const char *message)
{
    d->input_error = true;
    snprintf(d->error, sizeof d->error, "%s", message);
}

/* The work items of a case, its configurations, as sb_sweep_case counts
 * them for sharding (0 for a space that does not sweep). */
static long case_items(const sb_case *c, const sb_sweep_options *o)
{
    sb_config *pts;
    int n;
    char err[16];
    if (sb_configs_make(c, o, NULL, &pts, &n, err, sizeof err) != SB_OK)
        return 0;
    free(pts);
    return n;
}

bool sb_sweep_driver_case(sb_sweep_driver *d, sb_case *c, const char *regenerate)
{
    SB_ASSERT(d->n_results < d->capacity);
    sb_case_result *r = &d->results[d->n_results];
    char err[1024];
    sb_status st = sb_sweep_axes(r, c, &d->o, regenerate, err, sizeof err);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err);
        d->no_mpi = d->no_mpi || st == SB_ERR_NO_MPI;
        sb_sweep_driver_refuse(d, err);
        return false;
    }
    d->n_results++;
    /* the next case's items come after this one's */
    d->o.shard_offset += case_items(c, &d->o);
    FILE *table = d->reports.tap ? stderr : stdout;
    sb_report_text(table, r, 1);
    if (d->census) {
        /* a case whose census fails is still reported: the sweep ends as an
         * input error */
        sb_census *cs = &d->censuses[d->n_censuses];
        if (census_build(cs, r, d->o.work_dir, d->keep_traces, err, sizeof err) != SB_OK) {
            fprintf(stderr, "%s\n", err);
            sb_sweep_driver_refuse(d, err);
        } else {
            d->n_censuses++;
            if (d->census_table)
                sb_census_text(table, cs);
        }
    }
    fflush(table);
    return true;
}

int sb_sweep_driver_close(sb_sweep_driver *d)
{
    /* a shard's report says which shard it is, for `report --merge` */
    sb_report_shard shard = {d->o.shard_index + 1, d->o.shard_count};
    bool ok = d->results && reports_write(&d->reports, d->results, d->n_results, d->censuses,
                                          d->n_censuses, d->o.shard_count > 0 ? &shard : NULL,
                                          d->input_error ? d->error : NULL);
    int rc = d->no_mpi ? SB_EXIT_NO_MPI
                       : sb_sweep_exit(d->results, d->n_results, d->input_error || !ok);
    for (int i = 0; i < d->n_results; i++)
        sb_case_result_free(&d->results[i]);
    for (int i = 0; i < d->n_censuses; i++)
        sb_census_free(&d->censuses[i]);
    free(d->results);
    free(d->censuses);
    d->results = NULL;
    d->censuses = NULL;
    return rc;
}
