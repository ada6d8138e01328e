/* samebits golden: write each case's golden from its reference configuration.
 *
 * The reference run happens in a child like every other run, so the golden
 * is exactly what a sweep's child at the reference thread count produces.
 * A golden changes only when asked (sb_golden_update): a missing one is
 * written, a changed one only with --update (--update=reordering: when
 * every change can be a reordering), never with --check. Writing is atomic:
 * an interrupted command leaves the old golden as it was. */
#include <stdlib.h>

#include "cli.h"

static const char golden_usage[] =
    "usage: samebits golden CASE... [--check | --update | --update=reordering]\n"
    "                       [--data-dir DIR]\n"
    "\n"
    "Runs each case at its reference thread count (in a child process) and\n"
    "compares the result with the case's golden file, saying for each: new,\n"
    "unchanged (file left as it was), or changed with the first differing probe\n"
    "and every origin of the change (a possible reordering: its op has a\n"
    "reduction; beyond bound: its op has none, or the probe sequence differs).\n"
    "A missing golden is written; a changed one only with --update, or with\n"
    "--update=reordering when every change is a possible reordering (a library\n"
    "that sums in a new order). --check writes nothing (for CI). The golden of\n"
    "another case (another case name in its header) is never rewritten.\n"
    "exit status: 0 done, 1 a golden changed or missing and not written,\n"
    "             2 usage or input error, 3 the reference run crashed or timed\n"
    "             out (its golden is left as it was)\n";

/* Returns an SB_EXIT_* code for this case. */
static int golden_one(const char *path, const char *self, const char *work,
                      sb_golden_mode mode)
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
    char err[1200] = "";
    /* where it goes, before the run: golden/ beside the case file's
     * directory unless the case says otherwise (FORMATS.md) */
    if (mode != SB_GOLDEN_MODE_CHECK && !sb_out_check(c.golden_path, err, sizeof err)) {
        fprintf(stderr, "%s: %s; or set golden in [sweep] (default: golden/<name>.golden in "
                        "the parent of the case file's directory)\n", path, err);
        return SB_EXIT_INPUT;
    }
    sb_trace t;
    sb_trace_init(&t);
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
    char change[2048];
    sb_golden_outcome outcome;
    if (sb_golden_update(&t, c.golden_path, mode, &outcome, change, sizeof change, err,
                         sizeof err) != SB_OK) {
        fprintf(stderr, "%s: %s\n", path, err);
        rc = SB_EXIT_INPUT;
    } else {
        printf("%s: %s\n", c.golden_path, change);
        rc = outcome == SB_GOLDEN_CHANGED ? SB_EXIT_UNEXPECTED : SB_EXIT_OK;
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
    bool check = false, update = false, reordering = false;
    /* --update=reordering first: a flag matches only its whole name */
    const sb_option options[] = {{"--data-dir", &data_dir, NULL},
                                 {"--check", NULL, &check},
                                 {"--update=reordering", NULL, &reordering},
                                 {"--update", NULL, &update},
                                 {NULL, NULL, NULL}};
    cli_line l = {.cmd = "golden", .usage = golden_usage, .options = options,
                  .positional = cases, .min_positional = 1, .max_positional = argc};
    int rc;
    char self[1024], work[1024];
    bool temporary;
    if (!cli_line_parse(&l, argc, argv, &rc)) {
        free(cases);
        return rc;
    }
    if (check + update + reordering > 1) {
        fprintf(stderr, "samebits golden: --check, --update and --update=reordering exclude "
                        "each other (samebits golden --help)\n");
        free(cases);
        return SB_EXIT_INPUT;
    }
    sb_golden_mode mode = check        ? SB_GOLDEN_MODE_CHECK
                          : update     ? SB_GOLDEN_MODE_UPDATE
                          : reordering ? SB_GOLDEN_MODE_REORDERING
                                       : SB_GOLDEN_MODE_NEW;
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
        int r = golden_one(cases[i], self, work, mode);
        /* the worst outcome decides: input error, then crash, then a change */
        rc = sb_golden_exit_worst(rc, r);
    }
    sb_dir_remove_tree(work);
    free(cases);
    return rc;
}
