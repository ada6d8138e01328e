/* Loading and sweeping cases for the subcommands, and the start and end of
 * the commands that sweep a list of cases (sweep, mutants). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The last input error of a case, for a report that must say why it stops. */
static char case_error[768];

static void case_error_print(const char *err)
{
    snprintf(case_error, sizeof case_error, "%s", err);
    fprintf(stderr, "%s\n", err);
}

const char *cli_case_error(void)
{
    return case_error;
}

bool cli_case_load(sb_case *c, const char *path)
{
    char err[512];
    if (sb_case_load(c, path, err, sizeof err) != SB_OK) {
        case_error_print(err);
        return false;
    }
    return true;
}

/* Whether a case asked for the rank axis of a build without MPI. */
static bool no_mpi;

bool cli_no_mpi(void)
{
    return no_mpi;
}

bool cli_case_sweep(sb_case_result *r, sb_case *c, const sb_sweep_options *o)
{
    char err[768];
    sb_status st = sb_sweep_axes(r, c, o, NULL, err, sizeof err);
    if (st == SB_ERR_NO_MPI)
        no_mpi = true;
    if (st != SB_OK) {
        case_error_print(err);
        return false;
    }
    return true;
}

bool cli_batch_open(cli_batch *b, const char *cmd, bool (*parse)(void *, int, char **, int *),
                    void *args, int argc, char **argv, int *rc)
{
    b->cmd = cmd;
    b->paths = calloc((size_t)argc, sizeof *b->paths);
    if (!b->paths) {
        *rc = SB_EXIT_INPUT;
        return false;
    }
    if (!parse(args, argc, argv, rc)) {
        free(b->paths);
        return false;
    }
    if (!cli_self_exe(b->self, sizeof b->self) ||
        !cli_work_dir(b->work, sizeof b->work, b->work_dir, b->cmd, &b->temporary)) {
        free(b->paths);
        *rc = SB_EXIT_INPUT;
        return false;
    }
    cli_data_dir(b->data_dir);
    b->o.self_exe = b->self;
    b->o.work_dir = b->work;
    b->o.progress = isatty(STDERR_FILENO);
    b->cases = calloc((size_t)b->n_paths, sizeof *b->cases);
    b->results = calloc((size_t)b->n_paths, sizeof *b->results);
    b->n_done = 0;
    return true;
}

bool cli_batch_run(cli_batch *b, bool (*one)(void *, const char *, sb_case *, sb_case_result *),
                   void *args)
{
    if (!b->cases || !b->results)
        return false;
    bool all = true;
    for (int i = 0; i < b->n_paths; i++) {
        if (one(args, b->paths[i], &b->cases[b->n_done], &b->results[b->n_done]))
            b->n_done++;
        else
            all = false;
    }
    return all;
}

void cli_batch_close(cli_batch *b, int rc, const char *what)
{
    /* an input error before any case was judged said all in its one line:
     * its temporary directory holds nothing more to look at */
    bool nothing_judged = rc == SB_EXIT_INPUT && b->n_done == 0;
    if (b->temporary && (rc == SB_EXIT_OK || nothing_judged))
        sb_dir_remove_tree(b->work);
    else if (rc != SB_EXIT_OK && rmdir(b->work) != 0 && !nothing_judged)  /* an empty one goes */
        fprintf(stderr, "samebits %s: %s are in %s\n", b->cmd, what, b->work);
    for (int i = 0; i < b->n_done; i++)
        sb_case_result_free(&b->results[i]);
    free(b->results);
    free(b->cases);
    free(b->paths);
}
