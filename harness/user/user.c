/* A user's own kernels under the harness: sb_user_main_kernels gives a user's
 * program the list, run, golden and sweep subcommands for the kernels it
 * registers (sb_user_main: one kernel).
 *
 * Each kernel becomes a case in memory (path and name = the kernel's name,
 * reference 1 thread), so the sweep, the locator and the reports treat it
 * like any case file: each configuration runs in a child of this same
 * program (`PROG run NAME --threads N --trace FILE`), which calls that
 * kernel's run function with the harness's probe sink. */
#include <errno.h>
#include <omp.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "sb_harness.h"
#include "support/support.h"
#include "sweep/config.h"
#include "user/user_resume.h"

/* Default thread counts of a user sweep. */
static const int default_threads[] = {1, 2, 3, 4};
/* Default runs of each configuration, compared with each other: enough that a
 * kernel whose bits change from run to run is called nondeterministic every
 * time, not when its runs happen to differ. The example MLP's reduction
 * clause at 3 threads gives its most common bits in 55 of 100 runs, so 12
 * runs all agree in about 1 sweep of 1,300 (0.55^12); one run would call it
 * a reordering in about half of the sweeps (examples/mlp/README.md). One
 * thread runs once: it has no other thread to race. */
enum { USER_REPEATS = 12 };

typedef struct user_args {
    const char *cmd, *trace, *stream, *dump, *dump_step, *dump_dir, *dump_list;
    const char *threads, *repeat, *timeout, *golden, *golden_dir, *work_dir, *json, *junit;
    const char *census_json, *census_md;
    const char *stop_at, *checkpoint, *resume; /* resume: run's FILE, sweep's LIST */
    bool tap, census, check, update, update_reordering;
    const char **names;         /* the kernels named on the line ([argc]) */
    int n_names;
    sb_env_axis env[SB_ENV_AXES_MAX];   /* sweep --isa and --env */
    int n_env;
} user_args;

/* The kernels of this program and the ones a command works on. */
typedef struct user_program {
    const char *prog;           /* argv[0]: how the user calls it, for messages */
    const char *build;          /* the program's build (sb_user_build.h), or NULL */
    const sb_user_kernel *kernels;
    size_t n;
    sb_case *cases;             /* [n_selected] */
    size_t *selected;           /* [n_selected]: indexes into kernels */
    size_t n_selected;
} user_program;

static void user_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s list\n"
            "       %s golden [NAME...] [--golden FILE | --golden-dir DIR]\n"
            "             [--check | --update | --update=reordering]\n"
            "       %s sweep [NAME...] [--threads LIST] [--repeat R] [--timeout S]\n"
            "             [--golden FILE | --golden-dir DIR] [--work-dir DIR]\n"
            "             [--json FILE] [--junit FILE] [--tap]\n"
            "             [--census] [--census-json FILE] [--census-md FILE]\n"
            "             [--isa all|LIST] [--env NAME=v1,v2]... [--resume LIST]\n"
            "       %s run NAME --threads N --trace FILE [--stream FILE]\n"
            "             [--dump PROBE --dump-step S --dump-dir DIR]\n"
            "             [--stop-at K --checkpoint FILE | --resume FILE]\n"
            "NAME: a kernel of this program (`list`); none: every kernel. The golden of\n"
            "NAME is NAME.golden in the current directory, or in --golden-dir DIR, or\n"
            "--golden FILE when one kernel is named. A missing golden is written, a\n"
            "changed one only with --update (--update=reordering: when every change\n"
            "can be a reordering); --check writes nothing (samebits golden, CLI.md).\n"
            "--repeat: the runs of each configuration, compared with each other\n"
            "(default %d, 1 at 1 thread).\n"
            "--resume LIST (sweep): each step K of it also stopped after step K-1 and\n"
            "resumed in a new process (run --stop-at K --checkpoint FILE, then run\n"
            "--resume FILE), compared with the golden from step K on; for a kernel\n"
            "with a resume hook (steps, save, restore: harness/examples/README.md).\n"
            "--golden-dir DIR is made when missing. --help after any command: this text.\n"
            "exit status: 0 as expected, 1 a verdict not expected (golden: a golden\n"
            "             changed and not written), 2 usage or input error,\n"
            "             3 a crash or timeout, 4 a configuration that does not repeat\n"
            "             itself (nondeterministic) where the kernel does not expect it\n",
            prog, prog, prog, prog, USER_REPEATS);
}

static bool args_parse(user_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof a[0]);
    if (argc < 2) {
        fprintf(stderr, "%s: needs a command (%s --help)\n", argv[0], argv[0]);
        return false;
    }
    a->cmd = argv[1];
    const sb_option options[] = {
        {"--threads", &a->threads, NULL},   {"--trace", &a->trace, NULL},
        {"--dump-step", &a->dump_step, NULL}, {"--dump-dir", &a->dump_dir, NULL},
        {"--dump", &a->dump, NULL},         {"--repeat", &a->repeat, NULL},
        {"--dump-list", &a->dump_list, NULL},
        {"--timeout", &a->timeout, NULL},   {"--golden", &a->golden, NULL},
        {"--work-dir", &a->work_dir, NULL}, {"--json", &a->json, NULL},
        {"--junit", &a->junit, NULL},       {"--tap", NULL, &a->tap},
        {"--stream", &a->stream, NULL},     {"--golden-dir", &a->golden_dir, NULL},
        {"--census", NULL, &a->census},     {"--census-json", &a->census_json, NULL},
        {"--census-md", &a->census_md, NULL}, {"--check", NULL, &a->check},
        /* --update=reordering first: a flag matches only its whole name */
        {"--update=reordering", NULL, &a->update_reordering},
        {"--update", NULL, &a->update},     {"--stop-at", &a->stop_at, NULL},
        {"--checkpoint", &a->checkpoint, NULL}, {"--resume", &a->resume, NULL},
        {NULL, NULL, NULL},
    };
    a->names = calloc((size_t)argc, sizeof *a->names);
    if (!a->names)
        return false;
    char err[320];
    /* the sweep's instruction-set and environment axes (harness/CLI.md) */
    if (!sb_env_options_take(a->env, &a->n_env, &argc, argv, 2, err, sizeof err)) {
        fprintf(stderr, "%s %s: %s\n", argv[0], a->cmd, err);
        return false;
    }
    sb_args args = {.options = options, .positional = a->names, .max_positional = argc};
    sb_args_status st = sb_args_parse(&args, argc, argv, 2, err, sizeof err);
    a->n_names = args.n_positional;
    switch (st) {
    case SB_ARGS_OK:
        return true;
    case SB_ARGS_NO_VALUE:
        fprintf(stderr, "%s: %s (%s --help)\n", argv[0], err, argv[0]);
        return false;
    case SB_ARGS_UNKNOWN:
    case SB_ARGS_EXTRA:
        fprintf(stderr, "%s: unexpected argument '%s' (%s --help)\n", argv[0], args.bad,
                argv[0]);
        return false;
    }
    return false;
}

/* The kernel as a case: what the sweep, the locator and the reports read.
 * Its golden: `golden` when given, else NAME.golden in golden_dir (NULL: the
 * current directory). */
static void user_case(sb_case *c, const sb_user_kernel *k, const char *golden,
                      const char *golden_dir)
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
    c->repeats = USER_REPEATS;
    c->repeats_at[1] = 1;
    c->timeout_seconds = 300;
    c->reference_threads = 1;
    sb_verdict_set above_one = k->expect_set ? k->expect_set : SB_VERDICT_BIT(k->expect);
    for (int t = 0; t <= SB_MAX_THREADS; t++) {
        c->expect_set[t] = t == 1 ? SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) : above_one;
        c->expect[t] = sb_verdict_set_first(c->expect_set[t]);
    }
    c->user_steps = k->save && k->restore ? k->steps : 0;
    c->user_external_inputs = k->external_inputs;
    if (golden)
        snprintf(c->golden_path, sizeof c->golden_path, "%s", golden);
    else if (golden_dir)
        snprintf(c->golden_path, sizeof c->golden_path, "%s/%s.golden", golden_dir, k->name);
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

/* The resume options of `run` (--stop-at K --checkpoint FILE, or --resume
 * FILE) checked against kernel k: *stop_at K, or 0. False after one line. */
static bool resume_args_check(const sb_user_kernel *k, const sb_case *c, const user_args *a,
                              int64_t *stop_at)
{
    *stop_at = 0;
    if (!a->stop_at && !a->checkpoint && !a->resume)
        return true;
    char err[1200];
    const char *refusal = sb_case_resume_refusal(c);
    if (!a->stop_at != !a->checkpoint || (a->resume && a->stop_at)) {
        fprintf(stderr, "%s run: --stop-at K goes with --checkpoint FILE, --resume FILE with "
                "neither\n", k->name);
    } else if (refusal) {
        fprintf(stderr, "%s run: resume: %s\n", k->name, refusal);
    } else if (a->stop_at &&
               !sb_int_parse(a->stop_at, 1, c->user_steps - 1, stop_at, err, sizeof err)) {
        fprintf(stderr, "%s run: --stop-at: %s (K up to the kernel's last step)\n", k->name,
                err);
    } else if (a->checkpoint && !sb_out_check(a->checkpoint, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
    } else {
        return true;
    }
    return false;
}

static int user_run(const sb_user_kernel *k, const sb_case *c, const user_args *a,
                    const char *build)
{
    int64_t threads, step = 0, stop_at;
    if (!a->threads || !a->trace ||
        !sb_int_parse(a->threads, 1, SB_MAX_THREADS, &threads, NULL, 0) ||
        (a->dump && (!a->dump_dir || !a->dump_step ||
                     !sb_int_parse(a->dump_step, 0, INT32_MAX, &step, NULL, 0))) ||
        (a->dump_list && (a->dump || !a->dump_dir))) {
        fprintf(stderr, "%s run: needs --threads N (1..%d) and --trace FILE; --dump needs "
                "--dump-step S and --dump-dir DIR, --dump-list FILE --dump-dir DIR\n", k->name,
                SB_MAX_THREADS);
        return SB_EXIT_INPUT;
    }
    if (!resume_args_check(k, c, a, &stop_at))
        return SB_EXIT_INPUT;
    sb_isa_cap();               /* a bad SAMEBITS_ISA stops the run here, before any work */
    char err[1200] = "";
    /* the steps this process runs: a resumed one's from its checkpoint,
     * restored into the kernel's ctx before its run */
    user_probe_ctx u = {.steps = {0, stop_at > 0 ? stop_at : c->user_steps},
                        .check_steps = c->user_steps > 0};
    if (a->resume &&
        sb_user_checkpoint_restore(k, c, a->resume, &u.steps.first, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return SB_EXIT_INPUT;
    }
    sb_dump_list list = {0};
    if (a->dump_list && sb_dump_list_read(&list, a->dump_list, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return SB_EXIT_INPUT;
    }
    omp_set_num_threads((int)threads);
    sb_run_options o = {.threads = (int)threads, .dump_probe = a->dump, .dump_step = step,
                        .dump_dir = a->dump_dir, .stream_path = a->stream,
                        .external_inputs = k->external_inputs,
                        .dump_list = a->dump_list ? &list : NULL,
                        .checkpoint = a->checkpoint ? a->checkpoint : a->resume,
                        .stop_at = stop_at};
    sb_trace t;
    sb_trace_init(&t);
    sb_trace_header_from_case(&t.header, c, c->reference_threads);
    if (build) {
        /* the program's own build first: its kernels' bits are its compiler's */
        char lib[sizeof t.header.build];
        memcpy(lib, t.header.build, sizeof lib);
        snprintf(t.header.build, sizeof t.header.build, "%.60s; libsamebits %.80s", build, lib);
    }
    sb_run_sink_init(&u.sink, &t, &o);
    sb_status st = k->run(k->ctx, sb_user_probe, &u);
    if (st != SB_OK) {
        sb_err_set(err, sizeof err, "%s: the kernel's run failed (%s)", k->name,
                   sb_status_name(st));
        sb_run_sink_close(&u.sink);
    } else if (u.steps_asked && !u.check_steps) {
        sb_err_set(err, sizeof err, "%s: the run asks sb_user_run_steps for its steps, and the "
                   "kernel declares no .steps: give it the resume hook (.steps, .save and "
                   ".restore) or loop over all its steps", k->name);
        sb_run_sink_close(&u.sink);
        st = SB_ERR_USAGE;
    } else if (u.stray_probe[0]) {
        sb_err_set(err, sizeof err, "%s: step %lld probe %s: outside the steps %lld..%lld this "
                   "run runs (sb_user_run_steps)%s", k->name, (long long)u.stray_step,
                   u.stray_probe, (long long)u.steps.first, (long long)u.steps.end - 1,
                   u.stray_step < u.steps.first ? ": a resumed run starts at the step it "
                                                  "resumes at, from the restored state"
                   : u.steps.end < c->user_steps ? ": a run that stops at K ends before K"
                                                 : "");
        sb_run_sink_close(&u.sink);
        st = SB_ERR_USAGE;
    } else {
        st = sb_run_sink_finish(&u.sink, err, sizeof err);
    }
    bool ran = st == SB_OK;
    if (ran && stop_at > 0)
        st = sb_user_checkpoint_save(k, c, a->checkpoint, stop_at, err, sizeof err);
    if (st == SB_OK)
        st = sb_trace_save(&t, a->trace, err, sizeof err);
    sb_trace_free(&t);
    sb_dump_list_free(&list);
    if (st == SB_OK)
        return SB_EXIT_OK;
    fprintf(stderr, "%s\n", err);
    /* an output that cannot be written is the caller's to fix, as in a sweep */
    return st == SB_ERR_INPUT || st == SB_ERR_USAGE || ran ? SB_EXIT_INPUT
                                                          : SB_EXIT_UNEXPECTED;
}

/* The reference run (1 thread) in a child, written as the golden unless
 * unchanged (sb_golden_update, as `samebits golden`). */
static int user_golden(const sb_case *c, const char *self, const char *work,
                       sb_golden_mode mode)
{
    char err[512] = "", said[2048];
    sb_golden_outcome outcome;
    sb_trace t;
    sb_trace_init(&t);
    int rc = sb_reference_run(c, self, work, &t, err, sizeof err);
    if (rc != SB_EXIT_OK)
        fprintf(stderr, "%s: reference run: %s; golden left as it was\n", c->name, err);
    else if (sb_golden_update(&t, c->golden_path, mode, &outcome, said, sizeof said, err,
                              sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        rc = SB_EXIT_INPUT;
    } else {
        printf("%s: %s\n", c->golden_path, said);
        rc = outcome == SB_GOLDEN_CHANGED ? SB_EXIT_UNEXPECTED : SB_EXIT_OK;
    }
    sb_trace_free(&t);
    return rc;
}

/* Every selected kernel's golden; the worst outcome decides
 * (sb_golden_exit_worst). */
static int user_goldens(const user_program *p, const char *self, const char *work,
                        const user_args *a)
{
    if (a->check + a->update + a->update_reordering > 1) {
        fprintf(stderr, "%s golden: --check, --update and --update=reordering exclude each "
                "other (%s --help)\n", p->prog, p->prog);
        return SB_EXIT_INPUT;
    }
    char err[1200];
    if (a->golden_dir && !sb_mkdir_parents(a->golden_dir, err, sizeof err)) {
        fprintf(stderr, "%s golden: %s\n", p->prog, err);
        return SB_EXIT_INPUT;
    }
    sb_golden_mode mode = a->check               ? SB_GOLDEN_MODE_CHECK
                          : a->update            ? SB_GOLDEN_MODE_UPDATE
                          : a->update_reordering ? SB_GOLDEN_MODE_REORDERING
                                                 : SB_GOLDEN_MODE_NEW;
    int rc = SB_EXIT_OK;
    for (size_t i = 0; i < p->n_selected; i++)
        rc = sb_golden_exit_worst(rc, user_golden(&p->cases[i], self, work, mode));
    return rc;
}

/* The command that remakes case c's golden, as the user typed the program:
 * "PROG golden [--update] NAME [--golden FILE | --golden-dir DIR]". */
static void regenerate_command(char *out, size_t len, const user_program *p, const sb_case *c,
                               const user_args *a)
{
    /* a golden that is there but stale is rewritten only when asked */
    const char *update = access(c->golden_path, F_OK) == 0 ? " --update" : "";
    if (a->golden)
        snprintf(out, len, "%s golden%s %s --golden %s", p->prog, update, c->name, a->golden);
    else if (a->golden_dir)
        snprintf(out, len, "%s golden%s %s --golden-dir %s", p->prog, update, c->name,
                 a->golden_dir);
    else
        snprintf(out, len, "%s golden%s %s", p->prog, update, c->name);
}

/* "PROG sweep: --repeat '0' is not an integer in 1..1000" */
static int sweep_arg_refuse(const user_program *p, const char *option, const char *err)
{
    fprintf(stderr, "%s sweep: %s %s\n", p->prog, option, err);
    return SB_EXIT_INPUT;
}

/* The sweep's options from the command line, then every selected kernel
 * swept as a case, in one report: the library's sweep driver, as
 * `samebits sweep` (a kernel whose golden is missing is an input error,
 * an <error> in the JUnit report, and the others are swept). */
static int user_sweep(const user_program *p, const char *self, const char *work,
                      const user_args *a)
{
    int threads[SB_MAX_THREADS], n_threads = 0;
    int64_t repeat = 0;
    double timeout = 0;
    char err[1024];
    sb_sweep_options o = {.self_exe = self, .work_dir = work, .progress = isatty(2)};
    if (a->threads && !sb_thread_list_parse(a->threads, threads, &n_threads, err, sizeof err))
        return sweep_arg_refuse(p, "--threads:", err);
    if (a->repeat && !sb_int_parse(a->repeat, 1, 1000, &repeat, err, sizeof err))
        return sweep_arg_refuse(p, "--repeat", err);
    if (a->timeout && !sb_seconds_parse(a->timeout, &timeout, err, sizeof err))
        return sweep_arg_refuse(p, "--timeout", err);
    int resume[SB_MAX_RESUME];
    if (a->resume && !sb_resume_list_parse(a->resume, resume, &o.n_resume, err, sizeof err))
        return sweep_arg_refuse(p, "--resume:", err);
    if (a->resume)
        o.resume = resume;
    if (a->threads) {
        o.threads = threads;
        o.n_threads = n_threads;
    }
    o.repeats = (int)repeat;
    o.timeout_seconds = timeout;
    o.env = a->env;
    o.n_env = a->n_env;
    /* every report path first: an unwritable one stops the sweep before any
     * run */
    const char *outputs[] = {a->json, a->junit, a->census_json, a->census_md};
    if (!sb_out_check_all(outputs, 4, err, sizeof err)) {
        fprintf(stderr, "%s sweep: %s\n", p->prog, err);
        return SB_EXIT_INPUT;
    }
    /* each kernel as `samebits sweep` takes a case file (sweep/driver.c) */
    sb_sweep_driver d = {.o = o, .census_table = a->census,
                         .census = a->census || a->census_json || a->census_md,
                         .reports = {.json = a->json, .junit = a->junit, .tap = a->tap,
                                     .census_json = a->census_json, .census_md = a->census_md}};
    if (sb_sweep_driver_open(&d, (int)p->n_selected) != SB_OK)
        return SB_EXIT_INPUT;
    for (size_t i = 0; i < p->n_selected; i++) {
        char regenerate[1024];
        regenerate_command(regenerate, sizeof regenerate, p, &p->cases[i], a);
        sb_sweep_driver_case(&d, &p->cases[i], regenerate);
    }
    return sb_sweep_driver_close(&d);
}

/* A work directory for golden and sweep: the one asked for, or a temporary
 * one that is removed when empty (a sweep leaves locate dumps in it). */
static int with_work_dir(const user_program *p, const user_args *a)
{
    char self[1024], work[1024], err[1200];
    bool temporary;
    if (!sb_self_exe(self, sizeof self, err, sizeof err) ||
        !sb_work_dir(work, sizeof work, a->work_dir, "user", &temporary, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", p->prog, err);
        return SB_EXIT_INPUT;
    }
    int rc = strcmp(a->cmd, "golden") == 0 ? user_goldens(p, self, work, a)
                                            : user_sweep(p, self, work, a);
    if (temporary && rmdir(work) != 0)
        fprintf(stderr, "%s: work files (locate dumps) are in %s\n", p->prog, work);
    return rc;
}

/* p->selected and p->cases from the names on the line (none: every kernel;
 * `run` of a program of several kernels needs exactly one). False with a
 * message on an unknown name or a golden option that does not fit. */
static bool kernels_select(user_program *p, const user_args *a)
{
    bool run = strcmp(a->cmd, "run") == 0;
    if (run && (a->n_names > 1 || (a->n_names == 0 && p->n > 1))) {
        fprintf(stderr, "%s run: needs the name of one kernel (`%s list`)\n", p->prog, p->prog);
        return false;
    }
    if (a->golden && a->golden_dir) {
        fprintf(stderr, "%s: --golden and --golden-dir exclude each other\n", p->prog);
        return false;
    }
    size_t n = a->n_names > 0 ? (size_t)a->n_names : p->n;
    if (a->golden && n != 1) {
        fprintf(stderr, "%s: --golden FILE is the golden of one kernel; name it, or use "
                "--golden-dir DIR for several\n", p->prog);
        return false;
    }
    p->selected = calloc(n, sizeof *p->selected);
    p->cases = calloc(n, sizeof *p->cases);
    if (!p->selected || !p->cases)
        return false;
    for (size_t i = 0; i < n; i++) {
        size_t k = i;
        if (a->n_names > 0) {
            for (k = 0; k < p->n && strcmp(p->kernels[k].name, a->names[i]) != 0; k++)
                continue;
            if (k == p->n) {
                fprintf(stderr, "%s: no kernel '%s' in this program (`%s list`)\n", p->prog,
                        a->names[i], p->prog);
                return false;
            }
        }
        p->selected[i] = k;
        user_case(&p->cases[i], &p->kernels[k], a->golden, a->golden_dir);
    }
    p->n_selected = n;
    return true;
}

/* Every kernel has a name fit for a file name, and no two the same. */
static void kernels_check(const sb_user_kernel *kernels, size_t n)
{
    SB_ASSERT(kernels != NULL && n > 0);
    for (size_t i = 0; i < n; i++) {
        const sb_user_kernel *k = &kernels[i];
        SB_ASSERT(k->name != NULL && k->run != NULL);
        /* the resume hook: all three or none */
        SB_ASSERT((k->save != NULL) == (k->restore != NULL) &&
                  (k->save != NULL) == (k->steps > 0));
        SB_ASSERT(k->name[0] != '\0' && k->name[0] != '-' && strchr(k->name, '/') == NULL);
        for (size_t j = 0; j < i; j++)
            SB_ASSERT(strcmp(kernels[j].name, k->name) != 0);
    }
}

static int user_command(user_program *p, const user_args *a)
{
    if (strcmp(a->cmd, "list") == 0) {
        if (a->n_names > 0) {
            fprintf(stderr, "%s list: takes no names\n", p->prog);
            return SB_EXIT_INPUT;
        }
        for (size_t i = 0; i < p->n; i++)
            printf("%s\n", p->kernels[i].name);
        return SB_EXIT_OK;
    }
    bool known = strcmp(a->cmd, "run") == 0 || strcmp(a->cmd, "golden") == 0 ||
                 strcmp(a->cmd, "sweep") == 0;
    if (!known) {
        fprintf(stderr, "%s: unknown command '%s' (%s --help)\n", p->prog, a->cmd, p->prog);
        return SB_EXIT_INPUT;
    }
    if (!kernels_select(p, a))
        return SB_EXIT_INPUT;
    if (strcmp(a->cmd, "run") == 0)
        return user_run(&p->kernels[p->selected[0]], &p->cases[0], a, p->build);
    return with_work_dir(p, a);
}

/* --help or -h anywhere on the line, after any command */
static bool help_asked(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

int sb_user_main_build(int argc, char **argv, const sb_user_kernel *kernels, size_t n,
                       const char *build)
{
    kernels_check(kernels, n);
    user_program p = {.prog = argc > 0 ? argv[0] : kernels[0].name, .build = build,
                      .kernels = kernels, .n = n};
    /* a killed writer's temporaries in the directory it is run in */
    sb_out_stale_remove(".");
    user_args a = {0};
    int rc;
    if (help_asked(argc, argv)) {
        user_usage(stdout, p.prog);
        rc = SB_EXIT_OK;
    } else if (!args_parse(&a, argc, argv)) {
        rc = SB_EXIT_INPUT;
    } else {
        rc = user_command(&p, &a);
    }
    free(a.names);
    free(p.selected);
    free(p.cases);
    return rc;
}

/* The functions of the names sb_user_build.h makes macros of: programs
 * built against an older samebits.h call them. */
int (sb_user_main_kernels)(int argc, char **argv, const sb_user_kernel *kernels, size_t n)
{
    return sb_user_main_build(argc, argv, kernels, n, NULL);
}

int (sb_user_main)(int argc, char **argv, const sb_user_kernel *k)
{
    return sb_user_main_build(argc, argv, k, 1, NULL);
}
