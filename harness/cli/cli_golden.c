/* samebits golden: write each case's golden from its reference configuration.
 *
 * The reference run happens in a child like every other run, so the golden
 * is exactly what a sweep's child at the reference thread count produces.
 * Writing is atomic (sb_golden_update): an interrupted command leaves the old
 * golden as it was. */
#include <stdlib.h>

#include "cli.h"

static const char golden_usage[] =
    "usage: samebits golden CASE... [--data-dir DIR]\n"
    "\n"
    "Runs each case at its reference thread count (in a child process) and\n"
    "writes the case's golden file, saying for each: new, unchanged (file left\n"
    "as it was), or changed with the first differing probe.\n"
    "exit status: 0 done, 2 usage or input error, 3 the reference run crashed\n"
    "             or timed out (its golden is left as it was)\n";

/* Returns an SB_EXIT_* code for this case. */
static int golden_one(const char *path, const char *self, const char *work)
{
    sb_case c;
    if (!cli_case_load(&c, path))
        return SB_EXIT_INPUT;
    /* A mutant case is checked against the golden of the clean configuration
     * it mutates; writing its own bits there would hide the fault. */
    if (c.mutant[0]) {
        fprintf(stderr, "%s: a mutant case (mutant = %s) has no golden of its own; "
                        "make the golden of the clean case it names (%s)\n",
                path, c.mutant, c.golden_path);
        return SB_EXIT_INPUT;
    }
    sb_trace t;
    sb_trace_init(&t);
    char err[512] = "";
    int rc = sb_reference_run(&c, self, work, &t, err, sizeof err);
    if (rc == SB_EXIT_INPUT) {
        fprintf(stderr, "%s: %s\n", path, err);
        return rc;
    }
    if (rc == SB_EXIT_CRASH) {
        fprintf(stderr, "%s: reference run at %d threads %s; golden left as it was\n", path,
                c.reference_threads, err);
        sb_trace_free(&t);
        return rc;
    }
    char change[768];
    if (sb_golden_update(&t, c.golden_path, c.digest, change, sizeof change, err,
                         sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        rc = SB_EXIT_INPUT;
    } else {
        printf("%s: %s\n", c.golden_path, change);
    }
    sb_trace_free(&t);
    return rc;
}

int cli_golden(int argc, char **argv)
{
    const char *data_dir = NULL;
    const char **cases = calloc((size_t)argc, sizeof *cases);
    if (!cases)
        return SB_EXIT_INPUT;
    const sb_option options[] = {{"--data-dir", &data_dir, NULL}, {NULL, NULL, NULL}};
    cli_line l = {.cmd = "golden", .usage = golden_usage, .options = options,
                  .positional = cases, .min_positional = 1, .max_positional = argc};
    int rc;
    char self[1024], work[1024];
    bool temporary;
    if (!cli_line_parse(&l, argc, argv, &rc)) {
        free(cases);
        return rc;
    }
    /* work directories of golden runs that were killed (never kept: a golden
     * run removes its own at the end) */
    sb_stale_remove(sb_temp_dir(), "samebits.golden.");
    if (!cli_self_exe(self, sizeof self) ||
        !cli_work_dir(work, sizeof work, NULL, "golden", &temporary)) {
        free(cases);
        return SB_EXIT_INPUT;
    }
    cli_data_dir(data_dir);

    for (int i = 0; i < l.n_positional; i++) {
        int r = golden_one(cases[i], self, work);
        /* the worst outcome decides: input error, then crash */
        if (r == SB_EXIT_INPUT || (r == SB_EXIT_CRASH && rc != SB_EXIT_INPUT))
            rc = r;
    }
    sb_dir_remove_tree(work);
    free(cases);
    return rc;
}
