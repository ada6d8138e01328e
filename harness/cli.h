/* The `samebits` command: one file per subcommand, helpers in cli_args.c.
 * Every subcommand returns an SB_EXIT_* code and prints its errors as one line
 * on stderr. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>

#include "samebits.h"

int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_golden(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_locate(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_numerics(int argc, char **argv);
int cli_mutants(int argc, char **argv);

/* The sweep's exit status for these results (cli_sweep.c). */
int cli_sweep_exit(const sb_case_result *r, int n, bool input_error);
/* Adds "shard": {"index": I, "count": N} (I 1-based) to a JSON report, so
 * that `report --merge` can put the runs back in the unsharded order. */
bool cli_report_mark_shard(const char *path, int index, int count);

/* Option parsing: argv[*i] is "--name VALUE" or "--name=VALUE". Returns 1 and
 * sets *value (advancing *i past a separate value) when argv[*i] is the
 * option, 0 when it is not, -1 (message printed) when the value is missing. */
int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value);
bool cli_is_help(const char *arg);
/* An argument that looks like an option but is none the subcommand knows. */
int cli_unknown_option(const char *cmd, const char *arg);

/* "1,2,4" or "1-8" or "1,2,4-8" into threads[0..*n), each in 1..SB_MAX_THREADS. */
bool cli_parse_threads(const char *s, int *threads, int *n, const char *what);
bool cli_parse_int(const char *s, long lo, long hi, long *v, const char *what);
bool cli_parse_seconds(const char *s, double *v, const char *what);

/* The path of this executable, for children (readlink of /proc/self/exe). */
bool cli_self_exe(char *out, size_t outlen);
/* The data directory: --data-dir, else $SAMEBITS_DATA_DIR, else NULL (the
 * data set's default). A --data-dir is exported so that every child, the
 * locator's re-runs included, sees it. */
const char *cli_data_dir(const char *option);
/* A fresh directory under $TMPDIR (or /tmp): samebits.<what>.XXXXXX. */
bool cli_temp_dir(char *out, size_t outlen, const char *what);
/* Removes dir when it is empty; true when it was removed. */
bool cli_dir_remove_if_empty(const char *dir);
/* Removes dir and everything under it (symbolic links are not followed). */
void cli_dir_remove_tree(const char *dir);

/* Loads a case and prints "path:line: what" on failure. */
bool cli_case_load(sb_case *c, const char *path);

#endif
