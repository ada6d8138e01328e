/* The `samebits` command: one file per subcommand, the command line in
 * cli_args.c, the commands that sweep lists of cases in cli_batch.c. Every
 * subcommand returns an SB_EXIT_* code and prints its errors as one line on
 * stderr. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>

#include "sb_harness.h"
#include "support/support.h"

int cli_run(int argc, char **argv);
/* Whether cli_case_sweep met a rank case in a build without MPI (`samebits
 * mutants` then exits SB_EXIT_NO_MPI; `samebits sweep` goes through the
 * library's sweep driver, which says so itself). */
bool cli_no_mpi(void);
/* cli_run as rank `rank` of a data-parallel job (harness/mpi/): combine is
 * the rank's hook; a rank other than 0 writes its trace to FILE.rank<r>,
 * and neither streams nor dumps (rank 0 does). */
int cli_run_rank(int argc, char **argv, const sb_grad_combine *combine);
int cli_sweep(int argc, char **argv);
int cli_golden(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_locate(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_numerics(int argc, char **argv);
int cli_mutants(int argc, char **argv);
int cli_sample(int argc, char **argv);
int cli_decode(int argc, char **argv);

/* ---- the command line (cli_args.c) -------------------------------------------
 * The argument layer is the library's (support/support.h); these print its
 * messages in the command's voice ("samebits: --threads: ..."). */

/* One subcommand's command line: its option table and its positional
 * arguments (CASE..., TRACE TRACE). */
typedef struct cli_line {
    const char *cmd;                  /* "sweep" */
    const char *usage;                /* for --help (stdout) and too few arguments (stderr) */
    const sb_option *options;
    const char **positional;          /* room for max_positional */
    int min_positional, max_positional;
    int n_positional;                 /* out */
} cli_line;

/* Parses argv[1..argc); true when the command goes on. False, with the
 * exit status in *rc, after printing the usage for --help or -h
 * (SB_EXIT_OK) or what is wrong in one line (SB_EXIT_INPUT,
 * cli_usage_error). */
bool cli_line_parse(cli_line *l, int argc, char **argv, int *rc);
/* Whether the report files at paths[0..n) (NULL: not asked for) can be
 * written, checked before the work that fills them (sb_out_check); false
 * after "samebits CMD: PATH: why" on stderr. */
bool cli_outputs_writable(const char *cmd, const char *const *paths, size_t n);
/* A usage error in one line: "samebits CMD: WHAT (samebits CMD --help)". */
void cli_usage_error(const char *cmd, const char *what);

bool cli_is_help(const char *arg);
/* The values of options, each false after the command's usage error
 * "samebits CMD: OPTION: why (samebits CMD --help)" on stderr. */
/* "1,2,4", "1-8", "1..8" or a mix (the thread-list grammar, FORMATS.md). */
bool cli_parse_threads(const char *cmd, const char *s, int *threads, int *n,
                       const char *option);
/* A batch-size list (--batch): sizes[SB_MAX_BATCH_SIZES]. */
bool cli_parse_batch(const char *cmd, const char *s, int *sizes, int *n);
/* A resume-step list (--resume): steps[SB_MAX_RESUME]. */
bool cli_parse_resume(const char *cmd, const char *s, int *steps, int *n);
bool cli_parse_int(const char *cmd, const char *s, int64_t lo, int64_t hi, int64_t *v,
                   const char *option);
bool cli_parse_seconds(const char *cmd, const char *s, double *v, const char *option);
/* The value of --max-steps: a step count >= 1. */
bool cli_parse_max_steps(const char *cmd, const char *s, int64_t *v);

/* The path of this executable, for children (readlink of /proc/self/exe). */
bool cli_self_exe(char *out, size_t outlen);
/* The data directory: --data-dir, else $SAMEBITS_DATA_DIR, else NULL (the
 * data set's default). A --data-dir is exported so that every child, the
 * locator's re-runs included, sees it. */
const char *cli_data_dir(const char *option);
/* The work directory: --work-dir (created if need be) or a fresh
 * samebits.<cmd>.XXXXXX under $TMPDIR, which *temporary then says. */
bool cli_work_dir(char *out, size_t outlen, const char *given, const char *cmd,
                  bool *temporary);

/* ---- cases and batches of them (cli_batch.c) ---------------------------------- */

/* Loads a case and prints "path:line: what" on failure. */
bool cli_case_load(sb_case *c, const char *path);
/* Sweeps a loaded case into *r: its configuration space (sb_sweep_axes),
 * as o->axes, o->batch and o->env say (o->batch
 * puts c on the batch axis at those sizes); false (message printed,
 * nothing left to free in *r) when the golden cannot be read or the sweep
 * fails. */
bool cli_case_sweep(sb_case_result *r, sb_case *c, const sb_sweep_options *o);
/* The last message cli_case_load or cli_case_sweep printed; "" when none. */
const char *cli_case_error(void);

/* What the commands that sweep a list of cases (sweep, mutants) share: the
 * CASE arguments, this executable, the work directory, the sweep's options,
 * the cases they load and their results. */
typedef struct cli_batch {
    const char *cmd;                  /* "sweep", "mutants" */
    const char **paths;               /* the CASE arguments, [n_paths] */
    int n_paths;
    const char *work_dir, *data_dir;  /* --work-dir, --data-dir; NULL when not given */
    char self[1024];                  /* this executable */
    char work[1024];                  /* the work directory */
    bool temporary;                   /* work is a fresh one under $TMPDIR */
    sb_sweep_options o;               /* the command's, with self, work and progress set */
    sb_case *cases;                   /* [n_paths], NULL when out of memory */
    sb_case_result *results;          /* [n_paths], NULL when out of memory */
    int n_done;                       /* cases[0..n_done) and results[0..n_done) are filled */
} cli_batch;

/* The start of such a command: parse(args, argc, argv, rc) reads the
 * arguments into args, which holds *b (b->paths has room for argc paths),
 * and says whether the command goes on, as cli_line_parse does; then finds
 * this executable, opens the work directory (cli_work_dir), exports the
 * data directory and allocates cases and results. False, with the exit
 * status in *rc and b freed, when the command stops here. */
bool cli_batch_open(cli_batch *b, const char *cmd, bool (*parse)(void *, int, char **, int *),
                    void *args, int argc, char **argv, int *rc);
/* Each CASE in turn: one(args, path, case, result) loads and sweeps it into
 * the next of b->cases and b->results, false (nothing left to free) on an
 * input error. True when every case went through. */
bool cli_batch_run(cli_batch *b, bool (*one)(void *, const char *, sb_case *, sb_case_result *),
                   void *args);
/* The end, for exit status rc: a temporary work directory goes when rc is
 * SB_EXIT_OK; otherwise, unless it is empty (and then removed), a line
 * "samebits <cmd>: <what> are in <work>" says where the work files are.
 * Frees the results and b's memory. */
void cli_batch_close(cli_batch *b, int rc, const char *what);

#endif
