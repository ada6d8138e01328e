/* samebits diff: the first divergent probe of two trace files. */
#include "cli.h"

static const char diff_usage[] =
    "usage: samebits diff TRACE_A TRACE_B\n"
    "\n"
    "Reads two traces (or goldens) and prints the first probe, in program\n"
    "order, whose hash, name or shape differs. No re-run, no element diff:\n"
    "that is `samebits locate`.\n"
    "exit status: 0 identical, 1 they diverge, 2 usage or input error\n";

int cli_diff(int argc, char **argv)
{
    const char *paths[2];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(diff_usage, stdout);
            return SB_EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_unknown_option("diff", argv[i]);
        if (n == 2) {
            fputs(diff_usage, stderr);
            return SB_EXIT_INPUT;
        }
        paths[n++] = argv[i];
    }
    if (n != 2) {
        fputs(diff_usage, stderr);
        return SB_EXIT_INPUT;
    }
    sb_trace a, b;
    sb_trace_init(&a);
    sb_trace_init(&b);
    char err[512];
    int rc = SB_EXIT_INPUT;
    if (sb_trace_read(&a, paths[0], err, sizeof err) != SB_OK ||
        sb_trace_read(&b, paths[1], err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        goto done;
    }
    sb_divergence d;
    sb_trace_compare(&a, &b, &d);
    if (!d.found) {
        printf("identical: %zu probes\n", a.n_records);
        rc = SB_EXIT_OK;
        goto done;
    }
    printf("first divergence: record %zu, step %lld, probe %s (op %s)\n", d.index,
           (long long)d.step, d.probe, d.op);
    if (d.structural)
        printf("  the probe sequence differs here (name, shape or count)\n");
    else
        printf("  its inputs are %s\n", d.inputs_identical
                   ? "identical in both: the difference arises in this op"
                   : "not identical: the difference came in from upstream");
    rc = SB_EXIT_UNEXPECTED;
done:
    sb_trace_free(&a);
    sb_trace_free(&b);
    return rc;
}
