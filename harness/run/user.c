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
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "samebits.h"

/* Default thread counts of a user sweep. */
static const int default_threads[] = {1, 2, 3, 4};

typedef struct user_args {
    const char *cmd, *name, *trace, *dump, *dump_step, *dump_dir;
    const char *threads, *repeat, *timeout, *golden, *work_dir, *json, *junit;
    bool tap;
} user_args;

static void user_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s run [NAME] --threads N --trace FILE [--dump PROBE --dump-step S --dump-dir DIR]\n"
            "       %s golden [--golden FILE]\n"
            "       %s sweep [--threads LIST] [--repeat R] [--timeout S] [--golden FILE]\n"
            "             [--work-dir DIR] [--json FILE] [--junit FILE] [--tap]\n"
            "exit status: 0 as expected, 1 a verdict not expected, 2 usage or input error,\n"
            "             3 a crash or timeout\n",
            prog, prog, prog);
}

/* "--name VALUE" or "--name=VALUE"; 1 matched, 0 not this option, -1 no value. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

static bool args_parse(user_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof a[0]);
    if (argc < 2)
        return false;
    a->cmd = argv[1];
    struct {
        const char *name;
        const char **value;
    } opts[] = {
        {"--threads", &a->threads}, {"--trace", &a->trace},     {"--dump-step", &a->dump_step},
        {"--dump-dir", &a->dump_dir}, {"--dump", &a->dump},     {"--repeat", &a->repeat},
        {"--timeout", &a->timeout}, {"--golden", &a->golden},   {"--work-dir", &a->work_dir},
        {"--json", &a->json},       {"--junit", &a->junit},
    };
    for (int i = 2; i < argc; i++) {
        int m = 0;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && m == 0; k++)
            m = opt_value(argc, argv, &i, opts[k].name, opts[k].value);
        if (m < 0) {
            fprintf(stderr, "%s: option %s needs a value\n", argv[0], argv[i]);
            return false;
        }
        if (m > 0)
            continue;
        if (strcmp(argv[i], "--tap") == 0)
            a->tap = true;
        else if (argv[i][0] != '-' && !a->name)
            a->name = argv[i];
        else {
            fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[i]);
            return false;
        }
    }
    return true;
}

static bool parse_long(const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi)
        return false;
    *v = x;
    return true;
}

/* "1,2,4" or "1-4" or a mix. */
static bool parse_threads(const char *s, int *threads, int *n)
{
    *n = 0;
    while (*s) {
        char *end;
        long lo = strtol(s, &end, 10), hi = lo;
        if (end == s)
            return false;
        if (*end == '-') {
            const char *h = end + 1;
            hi = strtol(h, &end, 10);
            if (end == h)
                return false;
        }
        if (lo < 1 || hi < lo || hi > SB_MAX_THREADS || (*end && *end != ','))
            return false;
        for (long t = lo; t <= hi; t++) {
            if (*n >= SB_MAX_THREADS)
                return false;
            threads[(*n)++] = (int)t;
        }
        s = *end ? end + 1 : end;
    }
    return *n > 0;
}

/* The kernel as a case: what the sweep, the locator and the reports read. */
static void user_case(sb_case *c, const sb_user_kernel *k, const char *golden)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", k->name);
    snprintf(c->name, sizeof c->name, "%s", k->name);
    c->kind = SB_CASE_KERNEL;
    c->call.op = SB_OP_COUNT;
    /* the family the report shows: whether its bits may follow the thread count */
    c->family = k->expect == SB_VERDICT_IDENTICAL ? SB_FAMILY_DET : SB_FAMILY_LOOSE;
    c->n_threads = (int)(sizeof default_threads / sizeof default_threads[0]);
    memcpy(c->threads, default_threads, sizeof default_threads);
    c->repeats = 1;
    c->timeout_seconds = 300;
    c->reference_threads = 1;
    for (int t = 0; t <= SB_MAX_THREADS; t++)
        c->expect[t] = t == 1 ? SB_VERDICT_IDENTICAL : k->expect;
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
    long threads, step = 0;
    if (!a->threads || !a->trace || !parse_long(a->threads, 1, SB_MAX_THREADS, &threads) ||
        (a->dump && (!a->dump_dir || !a->dump_step || !parse_long(a->dump_step, 0, INT32_MAX, &step)))) {
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
                        .dump_dir = a->dump_dir};
    sb_trace t;
    sb_trace_init(&t);
    sb_trace_header_from_case(&t.header, c, c->reference_threads);
    sb_run_sink sink;
    sb_run_sink_init(&sink, &t, &o);
    char err[512] = "";
    sb_status st = k->run(k->ctx, sb_run_sink_probe, &sink);
    if (st != SB_OK)
        snprintf(err, sizeof err, "%s: the kernel's run failed (%s)", k->name, sb_status_name(st));
    else
        st = sb_run_sink_finish(&sink, err, sizeof err);
    FILE *f = st == SB_OK ? fopen(a->trace, "w") : NULL;
    if (st == SB_OK && !f) {
        snprintf(err, sizeof err, "%s: cannot write: %s", a->trace, strerror(errno));
        st = SB_ERR_IO;
    }
    if (f) {
        st = sb_trace_write(&t, f);
        if (fclose(f) != 0 && st == SB_OK)
            st = SB_ERR_IO;
        if (st != SB_OK)
            snprintf(err, sizeof err, "%s: cannot write the trace", a->trace);
    }
    sb_trace_free(&t);
    if (st == SB_OK)
        return SB_EXIT_OK;
    fprintf(stderr, "%s\n", err);
    return st == SB_ERR_INPUT || st == SB_ERR_USAGE ? SB_EXIT_INPUT : SB_EXIT_UNEXPECTED;
}

static bool self_exe(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0 || (size_t)n >= len - 1)
        return false;
    out[n] = '\0';
    return true;
}

static bool temp_dir(char *out, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(out, len, "%s/samebits.user.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    return n > 0 && (size_t)n < len && mkdtemp(out);
}

/* The reference run (1 thread) in a child, written as the golden. */
static int user_golden(const sb_case *c, const char *self, const char *work)
{
    char trace_path[1024], err[512] = "";
    if ((size_t)snprintf(trace_path, sizeof trace_path, "%s/golden.trace", work) >=
        sizeof trace_path) {
        fprintf(stderr, "%s: work directory path too long\n", work);
        return SB_EXIT_INPUT;
    }
    sb_trace t;
    sb_trace_init(&t);
    sb_child_result cr;
    sb_status st = sb_run_child(c, self, c->reference_threads, c->timeout_seconds, 0,
                                trace_path, NULL, &cr, &t, err, sizeof err);
    unlink(trace_path);
    int rc = SB_EXIT_OK;
    if (st != SB_OK) {
        rc = SB_EXIT_INPUT;
    } else if (cr.end != SB_CHILD_EXITED || cr.exit_code != 0) {
        rc = SB_EXIT_CRASH;
    } else if (sb_golden_write(&t, c->golden_path, err, sizeof err) != SB_OK) {
        rc = SB_EXIT_INPUT;
    } else {
        printf("%s: written (%zu probes)\n", c->golden_path, t.n_records);
    }
    if (rc != SB_EXIT_OK)
        fprintf(stderr, "%s: reference run: %s\n", c->name, err);
    sb_trace_free(&t);
    return rc;
}

static int user_sweep(const sb_case *c, const char *self, const char *work, const user_args *a)
{
    int threads[SB_MAX_THREADS], n_threads = 0;
    long repeat = 0;
    double timeout = 0;
    char *end = NULL;
    if (a->timeout)
        timeout = strtod(a->timeout, &end);
    sb_sweep_options o = {.self_exe = self, .work_dir = work, .progress = isatty(2)};
    if ((a->threads && !parse_threads(a->threads, threads, &n_threads)) ||
        (a->repeat && !parse_long(a->repeat, 1, 1000, &repeat)) ||
        (a->timeout && (end == a->timeout || *end || !(timeout > 0)))) {
        fprintf(stderr, "%s sweep: --threads LIST (1..%d), --repeat R, --timeout SECONDS\n",
                c->name, SB_MAX_THREADS);
        return SB_EXIT_INPUT;
    }
    if (a->threads) {
        o.threads = threads;
        o.n_threads = n_threads;
    }
    o.repeats = (int)repeat;
    o.timeout_seconds = timeout;

    sb_trace golden;
    sb_trace_init(&golden);
    char err[768];
    if (sb_golden_read(&golden, c->golden_path, c->digest, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return SB_EXIT_INPUT;
    }
    sb_case_result r;
    sb_status st = sb_sweep_case(c, &golden, &o, &r, err, sizeof err);
    sb_trace_free(&golden);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err);
        sb_case_result_free(&r);
        return SB_EXIT_INPUT;
    }
    sb_report_text(a->tap ? stderr : stdout, &r, 1);
    int rc = SB_EXIT_OK;
    for (int i = 0; i < r.n_runs; i++) {
        const sb_run_result *x = &r.runs[i];
        if (x->verdict == x->expected)
            continue;
        if (x->verdict == SB_VERDICT_CRASH || x->verdict == SB_VERDICT_TIMEOUT)
            rc = SB_EXIT_CRASH;
        else if (rc == SB_EXIT_OK)
            rc = SB_EXIT_UNEXPECTED;
    }
    if ((a->json && sb_report_json(a->json, &r, 1) != SB_OK) ||
        (a->junit && sb_report_junit(a->junit, &r, 1) != SB_OK)) {
        fprintf(stderr, "%s sweep: cannot write a report\n", c->name);
        rc = SB_EXIT_INPUT;
    }
    if (a->tap)
        sb_report_tap(stdout, &r, 1);
    sb_case_result_free(&r);
    return rc;
}

/* A work directory for golden and sweep: the one asked for, or a temporary
 * one that is removed when empty (a sweep leaves locate dumps in it). */
static int with_work_dir(const sb_user_kernel *k, const sb_case *c, const user_args *a)
{
    char self[1024], work[1024];
    if (!self_exe(self, sizeof self)) {
        fprintf(stderr, "%s: cannot find this program via /proc/self/exe\n", k->name);
        return SB_EXIT_INPUT;
    }
    if (a->work_dir) {
        if (mkdir(a->work_dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "%s: cannot create: %s\n", a->work_dir, strerror(errno));
            return SB_EXIT_INPUT;
        }
        snprintf(work, sizeof work, "%s", a->work_dir);
    } else if (!temp_dir(work, sizeof work)) {
        fprintf(stderr, "%s: cannot create a temporary work directory\n", k->name);
        return SB_EXIT_INPUT;
    }
    int rc = strcmp(a->cmd, "golden") == 0 ? user_golden(c, self, work)
                                            : user_sweep(c, self, work, a);
    if (!a->work_dir && rmdir(work) != 0)
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
