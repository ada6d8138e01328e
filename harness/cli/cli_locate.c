/* samebits locate: where two thread counts of a case part ways. */
#include "cli.h"
#include "run/child.h"

static const char locate_usage[] =
    "usage: samebits locate CASE --threads A,B [--max-steps N] [--work-dir DIR]\n"
    "                       [--data-dir DIR]\n"
    "       samebits locate CASE --threads B ...   (A is the case's reference)\n"
    "\n"
    "Runs the case at A and at B threads, finds the first probe where their\n"
    "traces differ, re-runs both dumping that probe, its bound and its inputs\n"
    "(.npy files, kept in the work directory), and prints the element diff and\n"
    "the verdict. --max-steps N runs a training case for N steps only and\n"
    "compares those.\n"
    "exit status: 0 identical, 1 they diverge, 2 usage or input error,\n"
    "             3 a run crashed or timed out\n";

/* Runs one side; returns an SB_EXIT_* code. */
static int side_run(const sb_case *c, const char *self, const char *work, int threads,
                    int64_t max_steps, const char *tag, sb_trace *t)
{
    char trace_path[1024], err_path[1024], err[512] = "";
    snprintf(trace_path, sizeof trace_path, "%s/%s.trace", work, tag);
    snprintf(err_path, sizeof err_path, "%s/%s.stderr", work, tag);
    sb_child_result cr;
    sb_child_run run = {.self_exe = self, .c = c, .threads = threads,
                        .timeout_seconds = c->timeout_seconds, .max_steps = max_steps,
                        .trace_path = trace_path, .stderr_path = err_path};
    sb_status st = sb_run_child(&run, &cr, t, err, sizeof err);
    if (st != SB_OK) {
        fprintf(stderr, "%s (threads %d): %s\n", c->path, threads, err);
        return SB_EXIT_INPUT;
    }
    if (cr.end != SB_CHILD_EXITED || cr.exit_code != 0) {
        fprintf(stderr, "%s: the run at %d threads %s\n", c->path, threads, err);
        return SB_EXIT_CRASH;
    }
    return SB_EXIT_OK;
}

/* max_steps: as `sweep --max-steps` (0: none); both sides stop there and
 * their steps before it are compared. */
static int locate_case(sb_case *c, const char *self, const char *work, int a, int b,
                       int64_t max_steps)
{
    if (sb_case_train_steps(c) <= max_steps)
        max_steps = 0;
    sb_trace ta, tb;
    sb_trace_init(&ta);
    sb_trace_init(&tb);
    int rc = side_run(c, self, work, a, max_steps, "a", &ta);
    if (rc == SB_EXIT_OK)
        rc = side_run(c, self, work, b, max_steps, "b", &tb);
    if (rc != SB_EXIT_OK)
        goto done;

    /* the locator re-runs "the reference" and `b`: here the reference is A */
    c->reference_threads = a;
    sb_run_result run = {.threads = b, .repeat = 1, .axis = SB_AXIS_THREADS, .ranks = 1,
                         .expected = c->expect[b],
                         .max_steps = max_steps};
    if (max_steps > 0)
        sb_trace_compare_steps(&ta, &tb, max_steps, &run.div);
    else
        sb_trace_compare(&ta, &tb, &run.div);
    if (run.div.found && !run.div.structural) {
        char dir[1100], err[512];
        snprintf(dir, sizeof dir, "%s/locate", work);
        if (sb_locate(c, self, b, dir, NULL, &run.div, err, sizeof err) != SB_OK)
            snprintf(run.message, sizeof run.message, "locate: %.240s", err);
    }
    run.verdict = run.div.found ? sb_divergence_verdict(&run.div) : SB_VERDICT_IDENTICAL;
    if (tb.n_metrics > 0 && max_steps == 0) {
        run.metrics = tb.metrics[tb.n_metrics - 1];
        run.have_metrics = true;
    }
    sb_case_result r = {.c = c, .runs = &run, .n_runs = 1,
                        .as_expected = sb_run_outcome(&run) != SB_OUTCOME_NOT_AS_EXPECTED};
    sb_report_text(stdout, &r, 1);
    if (run.div.found)
        printf("dumps and traces: %s\n", work);
    rc = run.div.found ? SB_EXIT_UNEXPECTED : SB_EXIT_OK;
done:
    sb_trace_free(&ta);
    sb_trace_free(&tb);
    return rc;
}

int cli_locate(int argc, char **argv)
{
    const char *case_path = NULL, *threads_s = NULL, *work_s = NULL, *data_dir = NULL,
               *max_steps_s = NULL;
    const sb_option options[] = {
        {"--threads", &threads_s, NULL}, {"--work-dir", &work_s, NULL},
        {"--data-dir", &data_dir, NULL}, {"--max-steps", &max_steps_s, NULL},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "locate", .usage = locate_usage, .options = options,
                  .positional = &case_path, .min_positional = 1, .max_positional = 1};
    int rc;
    if (!cli_line_parse(&l, argc, argv, &rc))
        return rc;
    int threads[SB_MAX_THREADS], n = 0;
    if (!threads_s) {
        cli_usage_error("locate", "needs --threads LIST");
        return SB_EXIT_INPUT;
    }
    int64_t max_steps = 0;
    if (!cli_parse_threads("locate", threads_s, threads, &n, "--threads") ||
        (max_steps_s && !cli_parse_max_steps("locate", max_steps_s, &max_steps)))
        return SB_EXIT_INPUT;
    if (n > 2) {
        fprintf(stderr, "samebits locate: --threads takes one or two counts, not %d\n", n);
        return SB_EXIT_INPUT;
    }
    sb_case c;
    if (!cli_case_load(&c, case_path))
        return SB_EXIT_INPUT;
    int a = n == 2 ? threads[0] : c.reference_threads, b = threads[n - 1];

    char self[1024], work[1024];
    bool temporary;
    if (!cli_self_exe(self, sizeof self) ||
        !cli_work_dir(work, sizeof work, work_s, "locate", &temporary))
        return SB_EXIT_INPUT;
    cli_data_dir(data_dir);
    rc = locate_case(&c, self, work, a, b, max_steps);
    if (rc == SB_EXIT_OK && temporary)
        sb_dir_remove_tree(work);
    return rc;
}
