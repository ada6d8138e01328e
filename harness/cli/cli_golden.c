/* samebits golden: write each case's golden from its reference configuration.
 *
 * The reference run happens in a child like every other run, so the golden
 * is exactly what a sweep's child at the reference thread count produces.
 * Writing is atomic (sb_golden_write): an interrupted command leaves the old
 * golden as it was. */
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

static const char golden_usage[] =
    "usage: samebits golden CASE... [--data-dir DIR]\n"
    "\n"
    "Runs each case at its reference thread count (in a child process) and\n"
    "writes the case's golden file, saying for each: new, unchanged (file left\n"
    "as it was), or changed with the first differing probe.\n"
    "exit status: 0 done, 2 usage or input error, 3 the reference run crashed\n"
    "             or timed out (its golden is left as it was)\n";

/* What the new trace changes in the golden on disk, as one line. */
static void change_describe(char *out, size_t len, const sb_case *c, const sb_trace *t,
                            bool *unchanged)
{
    *unchanged = false;
    if (access(c->golden_path, F_OK) != 0) {
        snprintf(out, len, "new (%zu probes)", t->n_records);
        return;
    }
    sb_trace old;
    sb_trace_init(&old);
    char err[512];
    if (sb_golden_read(&old, c->golden_path, c->digest, err, sizeof err) != SB_OK) {
        snprintf(out, len, "changed: the old golden did not read (%s)", err);
        return;
    }
    sb_divergence d;
    sb_trace_compare(&old, t, &d);
    if (d.found)
        snprintf(out, len, "changed: first at step %lld probe %s%s", (long long)d.step,
                 d.probe, d.structural ? " (probe sequence differs)" : "");
    else if (old.n_records != t->n_records)
        snprintf(out, len, "changed: %zu probes, were %zu", t->n_records, old.n_records);
    else {
        snprintf(out, len, "unchanged (%zu probes)", t->n_records);
        *unchanged = true;
    }
    sb_trace_free(&old);
}

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
    bool unchanged;
    change_describe(change, sizeof change, &c, &t, &unchanged);
    if (!unchanged && sb_golden_write(&t, c.golden_path, err, sizeof err) != SB_OK) {
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
