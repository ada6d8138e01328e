/* samebits sweep: every thread count and repeat of each case against its
 * golden, with the reports. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sweep/config.h"
#include "sweep/shard_env.h"

extern char **environ;

static const char sweep_usage[] =
    "usage: samebits sweep CASE... [--threads LIST] [--repeat R] [--timeout S]\n"
    "                      [--json FILE] [--junit FILE] [--tap]\n"
    "                      [--data-dir DIR] [--work-dir DIR] [--keep-traces]\n"
    "                      [--shard I/N|auto|auto/N] [--max-steps N] [--max-origins N]\n"
    "                      [--census] [--census-json FILE] [--census-md FILE]\n"
    "                      [--axis threads|batch] [--batch LIST]\n"
    "                      [--ranks LIST] [--resume LIST]\n"
    "                      [--isa all|LIST] [--env NAME=v1,v2]...\n"
    "\n"
    "Runs each case at every thread count (LIST like 1,2,4, 1-8, 1..8, primes\n"
    "(2,3,5,7), primes..13 or 1,primes; default the case's) and repeat, each in\n"
    "its own process, compares each trace with the case's golden, finds every\n"
    "origin of a divergence (a divergent probe whose inputs are all the golden's),\n"
    "locates them all per run in one re-run of each side (at most N,\n"
    "--max-origins, default and at most 256; the reports say when that cap was\n"
    "hit) and judges the worst against the case's expectation; repeats of one thread\n"
    "count that differ from each other make it nondeterministic; a run that\n"
    "crashed or timed out is placed (step, op, last probe) from the trace it\n"
    "streamed. Prints a table per case (on stderr with --tap, which puts TAP on\n"
    "stdout). Traces, dumps and a failed run's stderr and stream go to the\n"
    "work directory (default: a fresh one under $TMPDIR, removed when empty);\n"
    "--keep-traces leaves every run's trace there. --shard I/N runs only the\n"
    "I-th of N round-robin parts of the list of (case, configuration, repeat); merge the\n"
    "shards' --json files with `samebits report --merge`. --shard auto takes\n"
    "the shard from a Slurm job array (SLURM_ARRAY_TASK_ID, _MIN, _COUNT) or\n"
    "GoogleTest's GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS, as does no --shard\n"
    "where they are set (said on stderr; --shard 1/1 runs everything);\n"
    "--shard auto/N the N shards' index from JOB_COMPLETION_INDEX (Kubernetes).\n"
    "--max-steps N stops\n"
    "every training run after N steps and compares only the golden's first N\n"
    "steps (the report marks such runs truncated; a run that did not diverge\n"
    "there while its case expects a divergence is 'not reached', neither a pass\n"
    "nor a failure). --census locates every origin (up to 16) and prints, after\n"
    "each case's table, one row per output probe, one mark per thread count or\n"
    "--env point (= the reference's bits, R reordering, B beyond bound, N\n"
    "nondeterministic);\n"
    "--census-json and --census-md write it as JSON and Markdown.\n"
    "Axes: a case with an [invariance] section (FORMATS.md) also sweeps its batch\n"
    "axis: its followed samples computed inside batches of each size (first,\n"
    "middle and last row, the rest other samples), each size a configuration of\n"
    "its own (`run --batch B`) whose per-sample slices are compared with those of\n"
    "the reference size (the first listed) at the same thread count, located and\n"
    "judged like a thread count (rows `batch B` in the table). --batch LIST (sizes\n"
    "like 1,3,16,128, the first the reference) puts any case with a per-sample\n"
    "output on the batch axis at those sizes; --axis threads or --axis batch\n"
    "sweeps that axis alone (default: every axis the case has). A case with a\n"
    "[parallel] section varies\n"
    "the rank count of a data-parallel job (the\n"
    "ranks axis): each (ranks, threads) runs as `mpirun --oversubscribe -np R`\n"
    "in its own process group (killed whole on timeout); rank 0's trace is\n"
    "compared with the golden (one rank, one thread) and every other rank's\n"
    "with rank 0's (a rank that parts from it makes the run nondeterministic).\n"
    "--ranks LIST (like --threads) replaces the case's rank counts; without MPI\n"
    "in the build a rank case is an error (exit status 5).\n"
    "--isa all|LIST, --env NAME=v1,v2 (repeatable) and --resume LIST (steps K:\n"
    "stopped and resumed at K) add axes (harness/CLI.md).\n"
    "exit status: 0 all as expected, 1 a divergence or verdict not expected,\n"
    "             2 usage or input error, 3 a crash or timeout,\n"
    "             4 a configuration nondeterministic where the case does not expect it,\n"
    "             5 a rank sweep in a build without MPI,\n"
    "             6 --shard auto: a shard variable half set or out of range\n";

typedef struct sweep_args {
    cli_batch b;
    int threads[SB_MAX_THREADS];
    int batch[SB_MAX_BATCH_SIZES];
    int ranks[SB_MAX_THREADS];  /* --ranks, parsed like a thread list */
    int resume[SB_MAX_RESUME];
    sb_sweep_reports reports;
    bool census, keep_traces;
    sb_env_axis env[SB_ENV_AXES_MAX];   /* --isa, then each --env */
} sweep_args;

/* "I/N" with 1 <= I <= N: the shard's 0-based index and count; "auto",
 * "auto/N" or no --shard (s NULL): from the environment (shard_env.h). */
static bool shard_parse(const char *s, sb_sweep_options *o, int *rc)
{
    if (!s || strncmp(s, "auto", 4) == 0)
        return sb_shard_env_options(s, environ, o, rc);
    char *end;
    long i = strtol(s, &end, 10);
    long n = *end == '/' ? strtol(end + 1, &end, 10) : 0;
    if (*end != '\0' || n < 1 || n > 100000 || i < 1 || i > n) {
        fprintf(stderr, "--shard: expected I/N with 1 <= I <= N <= 100000, got '%s'\n", s);
        return false;
    }
    o->shard_index = (int)(i - 1);
    o->shard_count = (int)n;
    return true;
}

static bool sweep_parse(void *args, int argc, char **argv, int *rc)
{
    sweep_args *a = args;
    *rc = SB_EXIT_INPUT;
    char env_err[400];
    if (!sb_env_options_take(a->env, &a->b.o.n_env, &argc, argv, 1, env_err, sizeof env_err)) {
        fprintf(stderr, "samebits sweep: %s\n", env_err);
        return false;
    }
    a->b.o.env = a->env;
    const char *threads_s = NULL, *repeat_s = NULL, *timeout_s = NULL, *shard_s = NULL,
               *max_steps_s = NULL, *max_origins_s = NULL, *batch_s = NULL, *axis_s = NULL,
               *ranks_s = NULL, *resume_s = NULL;
    const sb_option options[] = {
        {"--max-origins", &max_origins_s, NULL}, {"--ranks", &ranks_s, NULL},
        {"--resume", &resume_s, NULL},
        {"--threads", &threads_s, NULL},     {"--repeat", &repeat_s, NULL},
        {"--timeout", &timeout_s, NULL},     {"--json", &a->reports.json, NULL},
        {"--junit", &a->reports.junit, NULL}, {"--data-dir", &a->b.data_dir, NULL},
        {"--work-dir", &a->b.work_dir, NULL}, {"--shard", &shard_s, NULL},
        {"--max-steps", &max_steps_s, NULL}, {"--tap", NULL, &a->reports.tap},
        {"--keep-traces", NULL, &a->keep_traces}, {"--census", NULL, &a->census},
        {"--census-json", &a->reports.census_json, NULL},
        {"--census-md", &a->reports.census_md, NULL},
        {"--batch", &batch_s, NULL},         {"--axis", &axis_s, NULL},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "sweep", .usage = sweep_usage, .options = options,
                  .positional = a->b.paths, .min_positional = 1, .max_positional = argc};
    bool go = cli_line_parse(&l, argc, argv, rc);
    a->b.n_paths = l.n_positional;
    if (!go)
        return false;
    int64_t repeat = 0, max_origins = 0;
    *rc = SB_EXIT_INPUT;
    if (threads_s) {
        if (!cli_parse_threads("sweep", threads_s, a->threads, &a->b.o.n_threads, "--threads"))
            return false;
        a->b.o.threads = a->threads;
    }
    if (ranks_s) {
        if (!cli_parse_threads("sweep", ranks_s, a->ranks, &a->b.o.n_ranks, "--ranks"))
            return false;
        for (int i = 0; i < a->b.o.n_ranks; i++)
            if (a->ranks[i] > SB_MAX_RANKS) {
                fprintf(stderr, "samebits sweep: --ranks: rank counts are at most %d, got %d "
                                "(samebits sweep --help)\n", SB_MAX_RANKS, a->ranks[i]);
                return false;
            }
        a->b.o.ranks = a->ranks;
    }
    if ((repeat_s && !cli_parse_int("sweep", repeat_s, 1, 1000, &repeat, "--repeat")) ||
        (timeout_s &&
         !cli_parse_seconds("sweep", timeout_s, &a->b.o.timeout_seconds, "--timeout")) ||
        !shard_parse(shard_s, &a->b.o, rc) ||
        (max_steps_s && !cli_parse_max_steps("sweep", max_steps_s, &a->b.o.max_steps)) ||
        (max_origins_s &&
         !cli_parse_int("sweep", max_origins_s, 1, SB_ORIGINS_LOCATE_MAX, &max_origins,
                        "--max-origins")))
        return false;
    if (resume_s) {
        if (!cli_parse_resume("sweep", resume_s, a->resume, &a->b.o.n_resume))
            return false;
        a->b.o.resume = a->resume;
    }
    if (batch_s && !cli_parse_batch("sweep", batch_s, a->batch, &a->b.o.n_batch))
        return false;
    if (batch_s)
        a->b.o.batch = a->batch;
    if (axis_s) {
        sb_axis axis = sb_axis_from_name(axis_s);
        if (axis != SB_AXIS_THREADS && axis != SB_AXIS_BATCH) {
            fprintf(stderr, "samebits: --axis: expected threads or batch, got '%s'\n", axis_s);
            return false;
        }
        a->b.o.axes = SB_AXIS_BIT(axis);
    }
    a->b.o.repeats = (int)repeat;
    a->b.o.max_origins = (int)max_origins;
    if (a->keep_traces && !a->b.work_dir) {
        fprintf(stderr, "samebits sweep: --keep-traces needs --work-dir DIR, where they are "
                        "kept (samebits sweep --help)\n");
        return false;
    }
    /* every report path is checked before any run */
    const char *outputs[] = {a->reports.json, a->reports.junit, a->reports.census_json,
                             a->reports.census_md};
    if (!cli_outputs_writable("sweep", outputs, 4))
        return false;
    *rc = SB_EXIT_OK;
    return true;
}

int cli_sweep(int argc, char **argv)
{
    sweep_args a;
    memset(&a, 0, sizeof a);
    int rc;
    if (!cli_batch_open(&a.b, "sweep", sweep_parse, &a, argc, argv, &rc))
        return rc;
    cli_batch *b = &a.b;
    sb_sweep_driver d = {.o = b->o, .reports = a.reports, .census_table = a.census,
                         .census = a.census || a.reports.census_json || a.reports.census_md,
                         .keep_traces = a.keep_traces};
    if (!b->cases || sb_sweep_driver_open(&d, b->n_paths) != SB_OK) {
        fprintf(stderr, "samebits sweep: out of memory\n");
        cli_batch_close(b, SB_EXIT_INPUT, "work files");
        return SB_EXIT_INPUT;
    }
    for (int i = 0; i < b->n_paths; i++) {
        sb_case *c = &b->cases[d.n_results];
        if (!cli_case_load(c, b->paths[i]))
            sb_sweep_driver_refuse(&d, cli_case_error());
        else
            sb_sweep_driver_case(&d, c, NULL);
    }
    rc = sb_sweep_driver_close(&d);
    /* a temporary work directory goes when all went as expected; otherwise
     * its dumps and stderr files are what the user looks at next */
    cli_batch_close(b, rc, "work files (dumps, failed runs' stderr)");
    return rc;
}
