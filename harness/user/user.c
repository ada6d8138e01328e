/* A user's own kernel under the harness: sb_user_main gives a user's program
 * the run, golden and sweep subcommands for that one kernel.
 *
 * The kernel becomes a case in memory (path and name = the kernel's name,
 * reference 1 thread), so the sweep, the locator and the reports treat it
 * like any case file: each configuration runs in a child of this same
 * program (`PROG run NAME --threads N --trace FILE`), which calls the user's
 * run function with the harness's probe sink. */
#include <errno.h>
#include <omp.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "samebits.h"
#include "support/support.h"

/* Default thread counts of a user sweep. */
static const int default_threads[] = {1, 2, 3, 4};

typedef struct user_args {
    const char *cmd, *name, *trace, *stream, *dump, *dump_step, *dump_dir;
    const char *threads, *repeat, *timeout, *golden, *work_dir, *json, *junit;
    const char *census_json, *census_md;
    bool tap, census;
} user_args;

static void user_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s run [NAME] --threads N --trace FILE [--stream FILE]\n"
            "             [--dump PROBE --dump-step S --dump-dir DIR]\n"
            "       %s golden [--golden FILE]\n"
            "       %s sweep [--threads LIST] [--repeat R] [--timeout S] [--golden FILE]\n"
            "             [--work-dir DIR] [--json FILE] [--junit FILE] [--tap]\n"
            "             [--census] [--census-json FILE] [--census-md FILE]\n"
            "exit status: 0 as expected, 1 a verdict not expected, 2 usage or input error,\n"
            "             3 a crash or timeout\n",
            prog, prog, prog);
}

static bool args_parse(user_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof a[0]);
    if (argc < 2)
        return false;
    a->cmd = argv[1];
    const sb_option options[] = {
        {"--threads", &a->threads, NULL},   {"--trace", &a->trace, NULL},
        {"--dump-step", &a->dump_step, NULL}, {"--dump-dir", &a->dump_dir, NULL},
        {"--dump", &a->dump, NULL},         {"--repeat", &a->repeat, NULL},
        {"--timeout", &a->timeout, NULL},   {"--golden", &a->golden, NULL},
        {"--work-dir", &a->work_dir, NULL}, {"--json", &a->json, NULL},
        {"--junit", &a->junit, NULL},       {"--tap", NULL, &a->tap},
        {"--stream", &a->stream, NULL},     {"--census", NULL, &a->census},
        {"--census-json", &a->census_json, NULL}, {"--census-md", &a->census_md, NULL},
        {NULL, NULL, NULL},
    };
    sb_args args = {.options = options, .positional = &a->name, .max_positional = 1};
    char err[320];
    switch (sb_args_parse(&args, argc, argv, 2, err, sizeof err)) {
    case SB_ARGS_OK:
        return true;
    case SB_ARGS_NO_VALUE:
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return false;
    case SB_ARGS_UNKNOWN:
    case SB_ARGS_EXTRA:
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], args.bad);
        return false;
    }
    return false;
}

/* The kernel as a case: what the sweep, the locator and the reports read. */
static void user_case(sb_case *c, const sb_user_kernel *k, const char *golden)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", k->name);
    snprintf(c->name, sizeof c->name, "%s", k->name);
    c->kind = SB_CASE_KERNEL;
    c->call.op = SB_OP_COUNT;
    /* no family of the kernel list: reports and traces say "user" */
    c->user = true;
    c->family = SB_FAMILY_LOOSE;
    c->n_threads = (int)(sizeof default_threads / sizeof default_threads[0]);
    memcpy(c->threads, default_threads, sizeof default_threads);
    c->repeats = 1;
    c->timeout_seconds = 300;
    c->reference_threads = 1;
    sb_verdict_set above_one = k->expect_set ? k->expect_set : SB_VERDICT_BIT(k->expect);
    for (int t = 0; t <= SB_MAX_THREADS; t++) {
        c->expect_set[t] = t == 1 ? SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) : above_one;
        c->expect[t] = sb_verdict_set_first(c->expect_set[t]);
    }
    if (golden)
        snprintf(c->golden_path, sizeof c->golden_path, "%s", golden);
    else
        snprintf(c->golden_path, sizeof c->golden_path, "%s.golden", k->name);
    /* what determines the trace: the kernel's name and the version its
     * author bumps when inputs or probes change */
    char text[512];
    int n = snprintf(text, sizeof text, "user-kernel\n%s\n%s\n", k->name,
                     k->version ? k->version : "");
    XXH128_hash_t h = XXH3_128bits(text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
    snprintf(c->digest, sizeof c->digest, "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
}

static int user_run(const sb_user_kernel *k, const sb_case *c, const user_args *a)
{
    int64_t threads, step = 0;
    if (!a->threads || !a->trace ||
        !sb_int_parse(a->threads, 1, SB_MAX_THREADS, &threads, NULL, 0) ||
        (a->dump && (!a->dump_dir || !a->dump_step ||
                     !sb_int_parse(a->dump_step, 0, INT32_MAX, &step, NULL, 0)))) {
        fprintf(stderr, "%s run: needs --threads N (1..%d) and --trace FILE; --dump needs "
                "--dump-step S and --dump-dir DIR\n", k->name, SB_MAX_THREADS);
        return SB_EXIT_INPUT;
    }
    if (a->name && strcmp(a->name, k->name) != 0) {
        fprintf(stderr, "%s run: this program runs kernel %s, not %s\n", k->name, k->name,
                a->name);
        return SB_EXIT_INPUT;
    }
    omp_set_num_threads((int)threads);
    sb_run_options o = {.threads = (int)threads, .dump_probe = a->dump, .dump_step = step,
                        .dump_dir = a->dump_dir, .stream_path = a->stream};
    sb_trace t;
    sb_trace_init(&t);
    sb_trace_header_from_case(&t.header, c, c->reference_threads);
    sb_run_sink sink;
    sb_run_sink_init(&sink, &t, &o);
    char err[512] = "";
    sb_status st = k->run(k->ctx, sb_run_sink_probe, &sink);
    if (st != SB_OK) {
        sb_err_set(err, sizeof err, "%s: the kernel's run failed (%s)", k->name,
                   sb_status_name(st));
        sb_run_sink_close(&sink);
    } else {
        st = sb_run_sink_finish(&sink, err, sizeof err);
    }
    FILE *f = st == SB_OK ? fopen(a->trace, "w") : NULL;
    if (st == SB_OK && !f) {
        sb_err_set(err, sizeof err, "%s: cannot write: %s", a->trace, strerror(errno));
        st = SB_ERR_IO;
    }
    if (f) {
        st = sb_trace_write(&t, f);
        if (fclose(f) != 0 && st == SB_OK)
            st = SB_ERR_IO;
        if (st != SB_OK)
            sb_err_set(err, sizeof err, "%s: cannot write the trace", a->trace);
    }
    sb_trace_free(&t);
    if (st == SB_OK)
        return SB_EXIT_OK;
    fprintf(stderr, "%s\n", err);
    return st == SB_ERR_INPUT || st == SB_ERR_USAGE ? SB_EXIT_INPUT : SB_EXIT_UNEXPECTED;
}

/* The reference run (1 thread) in a child, written as the golden. */
static int user_golden(const sb_case *c, const char *self, const char *work)
{
    char err[512] = "";
    sb_trace t;
    sb_trace_init(&t);
    int rc = sb_reference_run(c, self, work, &t, err, sizeof err);
    if (rc == SB_EXIT_OK && sb_golden_write(&t, c->golden_path, err, sizeof err) != SB_OK)
        rc = SB_EXIT_INPUT;
    if (rc == SB_EXIT_OK)
        printf("%s: written (%zu probes)\n", c->golden_path, t.n_records);
    else
        fprintf(stderr, "%s: reference run: %s\n", c->name, err);
    sb_trace_free(&t);
    return rc;
}

/* "NAME sweep: --repeat '0' is not an integer in 1..1000" */
static int sweep_arg_refuse(const sb_case *c, const char *option, const char *err)
{
    fprintf(stderr, "%s sweep: %s %s\n", c->name, option, err);
    return SB_EXIT_INPUT;
}

/* The census of the sweep: text on stdout with --census, JSON and Markdown
 * to their files. The run traces it is built from are removed after. */
static sb_status user_census(const user_args *a, const sb_case_result *r,
                             const sb_trace *golden, const char *work)
{
    sb_census cs;
    sb_status st = sb_census_build(&cs, r, golden, work);
    sb_census_remove_traces(r, work);
    if (st != SB_OK)
        return st;
    if (a->census)
        sb_census_text(a->tap ? stderr : stdout, &cs);
    if (a->census_json)
        st = sb_census_json(a->census_json, &cs, 1);
    FILE *md = st == SB_OK && a->census_md ? fopen(a->census_md, "w") : NULL;
    if (st == SB_OK && a->census_md && !md)
        st = SB_ERR_IO;
    if (md) {
        sb_census_markdown(md, &cs);
        if (fclose(md) != 0)
            st = SB_ERR_IO;
    }
    sb_census_free(&cs);
    return st;
}

static int user_sweep(const sb_case *c, const char *self, const char *work, const user_args *a)
{
    int threads[SB_MAX_THREADS], n_threads = 0;
    int64_t repeat = 0;
    double timeout = 0;
    char err[768];
    sb_sweep_options o = {.self_exe = self, .work_dir = work, .progress = isatty(2)};
    if (a->threads && !sb_thread_list_parse(a->threads, threads, &n_threads, err, sizeof err))
        return sweep_arg_refuse(c, "--threads:", err);
    if (a->repeat && !sb_int_parse(a->repeat, 1, 1000, &repeat, err, sizeof err))
        return sweep_arg_refuse(c, "--repeat", err);
    if (a->timeout && !sb_seconds_parse(a->timeout, &timeout, err, sizeof err))
        return sweep_arg_refuse(c, "--timeout", err);
    if (a->threads) {
        o.threads = threads;
        o.n_threads = n_threads;
    }
    o.repeats = (int)repeat;
    o.timeout_seconds = timeout;
    bool census = a->census || a->census_json || a->census_md;
    if (census) {
        /* every output is classified, from the traces the runs leave */
        o.keep_traces = true;
        o.max_origins = SB_ORIGINS_KEPT;
    }

    sb_trace golden;
    sb_trace_init(&golden);
    if (sb_golden_read(&golden, c->golden_path, c->digest, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return SB_EXIT_INPUT;
    }
    sb_case_result r;
    sb_status st = sb_sweep_case(c, &golden, &o, &r, err, sizeof err);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err);
        sb_trace_free(&golden);
        sb_case_result_free(&r);
        return SB_EXIT_INPUT;
    }
    sb_report_text(a->tap ? stderr : stdout, &r, 1);
    int rc = sb_sweep_exit(&r, 1, false);
    if ((a->json && sb_report_json(a->json, &r, 1, NULL) != SB_OK) ||
        (a->junit && sb_report_junit(a->junit, &r, 1) != SB_OK) ||
        (census && user_census(a, &r, &golden, work) != SB_OK)) {
        fprintf(stderr, "%s sweep: cannot write a report\n", c->name);
        rc = SB_EXIT_INPUT;
    }
    sb_trace_free(&golden);
    if (a->tap)
        sb_report_tap(stdout, &r, 1);
    sb_case_result_free(&r);
    return rc;
}

/* A work directory for golden and sweep: the one asked for, or a temporary
 * one that is removed when empty (a sweep leaves locate dumps in it). */
static int with_work_dir(const sb_user_kernel *k, const sb_case *c, const user_args *a)
{
    char self[1024], work[1024], err[1200];
    bool temporary;
    if (!sb_self_exe(self, sizeof self, err, sizeof err) ||
        !sb_work_dir(work, sizeof work, a->work_dir, "user", &temporary, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", k->name, err);
        return SB_EXIT_INPUT;
    }
    int rc = strcmp(a->cmd, "golden") == 0 ? user_golden(c, self, work)
                                            : user_sweep(c, self, work, a);
    if (temporary && rmdir(work) != 0)
        fprintf(stderr, "%s: work files (locate dumps) are in %s\n", k->name, work);
    return rc;
}

int sb_user_main(int argc, char **argv, const sb_user_kernel *k)
{
    SB_ASSERT(k != NULL && k->name != NULL && k->run != NULL);
    SB_ASSERT(k->name[0] != '\0' && strchr(k->name, '/') == NULL);
    const char *prog = argc > 0 ? argv[0] : k->name;
    user_args a;
    if (!args_parse(&a, argc, argv)) {
        user_usage(stderr, prog);
        return SB_EXIT_INPUT;
    }
    if (strcmp(a.cmd, "--help") == 0 || strcmp(a.cmd, "-h") == 0) {
        user_usage(stdout, prog);
        return SB_EXIT_OK;
    }
    sb_case c;
    user_case(&c, k, a.golden);
    if (strcmp(a.cmd, "run") == 0)
        return user_run(k, &c, &a);
    if (strcmp(a.cmd, "golden") == 0 || strcmp(a.cmd, "sweep") == 0)
        return with_work_dir(k, &c, &a);
    fprintf(stderr, "%s: unknown command '%s'\n", prog, a.cmd);
    user_usage(stderr, prog);
    return SB_EXIT_INPUT;
}
