/* samebits run: one configuration of a case in this process (the child the
 * sweep, golden and locate commands spawn). */
#include <omp.h>
#include <string.h>

#include "cli.h"

static const char run_usage[] =
    "usage: samebits run CASE --threads N --trace FILE\n"
    "                    [--dump PROBE | --dump-all] [--dump-step S --dump-dir DIR]\n"
    "                    [--dump-list FILE --dump-dir DIR]\n"
    "                    [--max-steps N] [--data-dir DIR] [--stream FILE] [--batch B]\n"
    "                    [--stop-at K --checkpoint FILE | --resume FILE]\n"
    "\n"
    "Runs the case once at N threads and writes its trace to FILE. With --dump,\n"
    "also writes DIR/PROBE.npy, DIR/PROBE.bound.npy and DIR/PROBE.in<i>.npy at\n"
    "step S of probe PROBE; with --dump-all, those files for every probe of step\n"
    "S and DIR/manifest.tsv (name, op, inputs). With --dump-list, those files of\n"
    "every probe FILE lists (a line STEP<tab>PROBE each) in DIR/STEP/. A dumping\n"
    "run of a training case stops after step S (the list's last), so its trace\n"
    "ends there; --max-steps N stops a training\n"
    "case after N steps (an epoch it cuts is not evaluated). --stream FILE\n"
    "writes every record to FILE as it is made, and a line as each op starts,\n"
    "so a run that dies leaves where it was.\n"
    "--batch B runs the case on its batch axis ([invariance], FORMATS.md): its\n"
    "samples inside batches of B, a trace of each sample's slice.\n"
    "--stop-at K --checkpoint FILE trains a training case's steps 0..K-1, writes\n"
    "its state to FILE and ends; --resume FILE restores that state in this\n"
    "process and trains on from step K, its trace holding the steps from K on\n"
    "(FORMATS.md, \"Checkpoints\").\n"
    "--data-dir (or $SAMEBITS_DATA_DIR) says where the data sets of training\n"
    "cases are. SAMEBITS_ISA=avx512|avx2|baseline caps the instruction set of the\n"
    "det kernels' paths (refused when this CPU or build lacks it).\n"
    "exit status: 0 done, 2 usage or input error (an input that does not read,\n"
    "             an output that cannot be written), 1 any other failure\n";

/* An input that does not read and an output that cannot be written are the
 * caller's to fix (2), as in a sweep; anything else is a failure (1). */
static int exit_for(sb_status st)
{
    return st == SB_ERR_INPUT || st == SB_ERR_USAGE || st == SB_ERR_SHAPE || st == SB_ERR_IO
               ? SB_EXIT_INPUT
               : 1;
}

static int trace_save(const sb_trace *t, const char *path)
{
    char err[1200];
    if (sb_trace_save(t, path, err, sizeof err) == SB_OK)
        return SB_EXIT_OK;
    fprintf(stderr, "%s\n", err);
    return SB_EXIT_INPUT;
}

int cli_run(int argc, char **argv)
{
    return cli_run_rank(argc, argv, NULL);
}

int cli_run_rank(int argc, char **argv, const sb_grad_combine *combine)
{
    const char *case_path = NULL, *trace_path = NULL, *threads_s = NULL, *dump = NULL,
               *dump_step_s = NULL, *dump_dir = NULL, *data_dir = NULL, *max_steps_s = NULL,
               *stream = NULL, *batch_s = NULL, *dump_list_s = NULL, *stop_at_s = NULL,
               *checkpoint = NULL, *resume = NULL;
    bool dump_all = false;
    const sb_option options[] = {
        {"--threads", &threads_s, NULL},     {"--trace", &trace_path, NULL},
        {"--dump-step", &dump_step_s, NULL}, {"--dump-dir", &dump_dir, NULL},
        {"--dump", &dump, NULL},             {"--dump-all", NULL, &dump_all},
        {"--max-steps", &max_steps_s, NULL}, {"--data-dir", &data_dir, NULL},
        {"--stream", &stream, NULL},         {"--batch", &batch_s, NULL},
        {"--dump-list", &dump_list_s, NULL}, {"--stop-at", &stop_at_s, NULL},
        {"--checkpoint", &checkpoint, NULL}, {"--resume", &resume, NULL},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "run", .usage = run_usage, .options = options,
                  .positional = &case_path, .min_positional = 1, .max_positional = 1};
    int rc;
    if (!cli_line_parse(&l, argc, argv, &rc))
        return rc;
    sb_isa_cap();               /* a bad SAMEBITS_ISA stops the run here, before any work */
    bool dumping = dump || dump_all;
    if (!threads_s || !trace_path || (dump && dump_all) ||
        (dumping && (!dump_step_s || !dump_dir)) ||
        (dump_list_s && (dumping || dump_step_s || !dump_dir)) ||
        (!dumping && !dump_list_s && (dump_step_s || dump_dir))) {
        cli_usage_error("run", "needs --threads N and --trace FILE; --dump PROBE or --dump-all "
                        "with --dump-step S and --dump-dir DIR, or --dump-list FILE with "
                        "--dump-dir DIR");
        return SB_EXIT_INPUT;
    }
    if (!stop_at_s != !checkpoint || (resume && (stop_at_s || batch_s))) {
        cli_usage_error("run", "--stop-at K goes with --checkpoint FILE, and --resume FILE "
                        "with neither nor --batch");
        return SB_EXIT_INPUT;
    }
    int64_t threads, dump_step = 0, max_steps = 0, batch = 0, stop_at = 0;
    if (!cli_parse_int("run", threads_s, 1, SB_MAX_THREADS, &threads, "--threads") ||
        (batch_s && !cli_parse_int("run", batch_s, 1, SB_MAX_BATCH, &batch, "--batch")) ||
        (dump_step_s &&
         !cli_parse_int("run", dump_step_s, 0, INT32_MAX, &dump_step, "--dump-step")) ||
        (max_steps_s && !cli_parse_max_steps("run", max_steps_s, &max_steps)) ||
        (stop_at_s && !cli_parse_int("run", stop_at_s, 1, INT32_MAX, &stop_at, "--stop-at")))
        return SB_EXIT_INPUT;

    char err[1200] = "";
    /* the trace's path before the run, as a sweep checks its reports' */
    if (!sb_out_check(trace_path, err, sizeof err) ||
        (checkpoint && !sb_out_check(checkpoint, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return SB_EXIT_INPUT;
    }
    sb_case c;
    if (!cli_case_load(&c, case_path))
        return SB_EXIT_INPUT;
    sb_dump_list list = {0};
    if (dump_list_s && sb_dump_list_read(&list, dump_list_s, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return SB_EXIT_INPUT;
    }
    if (dump_list_s) {
        dumping = true;
        dump_step = sb_dump_list_last_step(&list);
    }
    /* a case without [invariance] swept with `sweep --batch`: the same
     * defaults the sweep gave it (sb_case_batch_override) */
    const int size = (int)batch;
    if (batch > 0 && c.n_batch == 0 &&
        sb_case_batch_override(&c, &size, 1, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        sb_dump_list_free(&list);
        return SB_EXIT_INPUT;
    }
    c.run_batch = (int)batch;
    omp_set_num_threads((int)threads);
    /* the other ranks' traces are checked against rank 0's; what a run
     * leaves besides (a stream, dumps) is rank 0's alone */
    char rank_trace[1100];
    if (combine && combine->rank > 0) {
        if (snprintf(rank_trace, sizeof rank_trace, "%s.rank%d", trace_path, combine->rank) >=
            (int)sizeof rank_trace) {
            fprintf(stderr, "%s: path too long\n", trace_path);
            sb_dump_list_free(&list);
            return SB_EXIT_INPUT;
        }
        trace_path = rank_trace;
        /* a dumping rank 0 stops after the dump's step: so must every rank
         * (the combine is collective) */
        if (dumping && (max_steps == 0 || max_steps > dump_step + 1))
            max_steps = dump_step + 1;
        stream = NULL;
        dump = NULL;
        dump_all = false;
        dump_dir = NULL;
        dump_list_s = NULL;
    }
    sb_run_options o = {.threads = (int)threads, .dump_probe = dump, .dump_step = dump_step,
                        .dump_dir = dump_dir, .data_dir = cli_data_dir(data_dir),
                        .dump_all = dump_all, .max_steps = max_steps, .stream_path = stream,
                        .combine = combine, .dump_list = dump_list_s ? &list : NULL,
                        .checkpoint = checkpoint ? checkpoint : resume, .stop_at = stop_at};
    sb_trace t;
    sb_trace_init(&t);
    sb_status st = sb_run_case(&c, &o, &t, err, sizeof err);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err[0] ? err : sb_status_name(st));
        rc = exit_for(st);
    } else {
        rc = trace_save(&t, trace_path);
    }
    sb_trace_free(&t);
    sb_dump_list_free(&list);
    return rc;
}
