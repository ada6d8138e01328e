/* The command line of every subcommand, and the values its options take,
 * read by the library's argument layer and reported in the command's voice. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

void cli_usage_error(const char *cmd, const char *what)
{
    fprintf(stderr, "samebits %s: %s (samebits %s --help)\n", cmd, what, cmd);
}

bool cli_outputs_writable(const char *cmd, const char *const *paths, size_t n)
{
    char err[1200];
    if (sb_out_check_all(paths, n, err, sizeof err))
        return true;
    fprintf(stderr, "samebits %s: %s\n", cmd, err);
    return false;
}

bool cli_line_parse(cli_line *l, int argc, char **argv, int *rc)
{
    sb_args a = {.options = l->options, .positional = l->positional,
                 .max_positional = l->max_positional};
    char err[320];
    sb_args_status st = sb_args_parse(&a, argc, argv, 1, err, sizeof err);
    l->n_positional = a.n_positional;
    *rc = SB_EXIT_INPUT;
    switch (st) {
    case SB_ARGS_OK:
        if (a.n_positional >= l->min_positional) {
            *rc = SB_EXIT_OK;
            return true;
        }
        cli_usage_error(l->cmd, l->min_positional == 1 ? "needs an argument"
                                                       : "needs more arguments");
        return false;
    case SB_ARGS_NO_VALUE:
        cli_usage_error(l->cmd, err);
        return false;
    case SB_ARGS_UNKNOWN:
        /* --help is no option of any table: it stops the line where it stands */
        if (cli_is_help(a.bad)) {
            fputs(l->usage, stdout);
            *rc = SB_EXIT_OK;
            return false;
        }
        cli_usage_error(l->cmd, err);
        return false;
    case SB_ARGS_EXTRA:
        if (l->max_positional == 1)
            fprintf(stderr, "samebits %s: one case at a time ('%s' is extra)\n", l->cmd, a.bad);
        else
            cli_usage_error(l->cmd, err);
        return false;
    }
    return false;
}

/* An option's value that does not parse: the usage error of the command
 * (CLI.md, "Exit status"), the one place every option's value reports. */
static bool option_fail(const char *cmd, const char *option, const char *why)
{
    char what[400];
    snprintf(what, sizeof what, "%s: %s", option, why);
    cli_usage_error(cmd, what);
    return false;
}

bool cli_parse_int(const char *cmd, const char *s, int64_t lo, int64_t hi, int64_t *v,
                   const char *option)
{
    char err[160];
    return sb_int_parse(s, lo, hi, v, err, sizeof err) || option_fail(cmd, option, err);
}

bool cli_parse_seconds(const char *cmd, const char *s, double *v, const char *option)
{
    char err[160];
    return sb_seconds_parse(s, v, err, sizeof err) || option_fail(cmd, option, err);
}

bool cli_parse_max_steps(const char *cmd, const char *s, int64_t *v)
{
    return cli_parse_int(cmd, s, 1, INT32_MAX, v, "--max-steps");
}

bool cli_parse_threads(const char *cmd, const char *s, int *threads, int *n,
                       const char *option)
{
    char err[160];
    return sb_thread_list_parse(s, threads, n, err, sizeof err) ||
           option_fail(cmd, option, err);
}

bool cli_parse_batch(const char *cmd, const char *s, int *sizes, int *n)
{
    char err[160];
    return sb_batch_list_parse(s, sizes, n, err, sizeof err) || option_fail(cmd, "--batch", err);
}

bool cli_parse_resume(const char *cmd, const char *s, int *steps, int *n)
{
    char err[160];
    return sb_resume_list_parse(s, steps, n, err, sizeof err) ||
           option_fail(cmd, "--resume", err);
}

bool cli_self_exe(char *out, size_t outlen)
{
    char err[160];
    if (sb_self_exe(out, outlen, err, sizeof err))
        return true;
    fprintf(stderr, "samebits: %s\n", err);
    return false;
}

const char *cli_data_dir(const char *option)
{
    if (option) {
        setenv("SAMEBITS_DATA_DIR", option, 1);
        return option;
    }
    const char *env = getenv("SAMEBITS_DATA_DIR");
    return env && env[0] ? env : NULL;
}

bool cli_work_dir(char *out, size_t outlen, const char *given, const char *cmd,
                  bool *temporary)
{
    char err[1200];
    if (sb_work_dir(out, outlen, given, cmd, temporary, err, sizeof err))
        return true;
    /* a given directory names itself; a temporary one comes from the command */
    fprintf(stderr, given ? "%s\n" : "samebits: %s\n", err);
    return false;
}
