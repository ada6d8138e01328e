/* The configuration space of a case's sweep (config.h): the axis table and
 * the points it makes. Adding an axis is one descriptor here (and the
 * values a case file and the command line give it). */
#include <string.h>

#include "sb_build_info.h"
#include "sweep/config.h"
#include "support/support.h"

#define ISA_VAR "SAMEBITS_ISA"

/* The space of one case's sweep: which parts of it and the axes' values. */
typedef struct space {
    const sb_case *c;
    const sb_sweep_options *o;
    bool golden_points;         /* the thread counts against the golden */
    bool batch_points;          /* the batch axis against its reference size */
    const int *threads;
    int n_threads;
    const int *ranks;
    int n_ranks;                /* 0: not a rank case */
    const int *resume;          /* the steps a training run stops and resumes at */
    int n_resume;
    sb_env_axis env[SB_ENV_AXES_MAX]; /* the case's, the options' replacing; isa expanded */
    int n_env;
} space;

/* One axis. count: its values at point x (the axes before it set), 1 for
 * an axis the point is not on; set: value k on x; apply: what x's value
 * does to the case the child runs; name: x's value as the reports name it
 * ("" when x is not on it); file: its part of the work files' names. arg
 * is the axis's index among the environment variables. */
typedef struct axis_desc {
    int (*count)(const space *s, int arg, const sb_run_result *x);
    void (*set)(const space *s, int arg, sb_run_result *x, int k);
    void (*apply)(sb_case *at, const sb_run_result *x);
    void (*name)(char *out, size_t len, const sb_run_result *x);
    void (*file)(char *out, size_t len, const sb_run_result *x);
} axis_desc;

/* ---- batch: [invariance] sizes, each against the first ---------------------- */

static int batch_count(const space *s, int arg, const sb_run_result *x)
{
    (void)arg, (void)x;
    return (s->golden_points ? 1 : 0) + (s->batch_points ? s->c->n_batch - 1 : 0);
}

static void batch_set(const space *s, int arg, sb_run_result *x, int k)
{
    (void)arg;
    int size = k - (s->golden_points ? 1 : 0) + 1;  /* 0: a golden point */
    x->axis = size > 0 ? SB_AXIS_BATCH : SB_AXIS_THREADS;
    x->batch = size > 0 ? s->c->batch_sizes[size] : 0;
    x->expected_set = size > 0 ? s->c->batch_expect[size] : 0;
}

static void batch_apply(sb_case *at, const sb_run_result *x)
{
    at->run_batch = x->batch;
    if (x->batch > 0) {
        at->reference_batch = at->batch_sizes[0];
        at->reference_threads = x->threads;
    }
}

static void batch_name(char *out, size_t len, const sb_run_result *x)
{
    if (x->batch > 0)
        snprintf(out, len, "batch=%d", x->batch);
}

static void batch_file(char *out, size_t len, const sb_run_result *x)
{
    if (x->batch > 0)
        snprintf(out, len, ".b%d", x->batch);
}

/* ---- ranks: [parallel] rank counts, each an mpirun job ---------------------- */

static int ranks_count(const space *s, int arg, const sb_run_result *x)
{
    (void)arg;
    return x->batch == 0 && s->n_ranks > 0 ? s->n_ranks : 1;
}

static void ranks_set(const space *s, int arg, sb_run_result *x, int k)
{
    (void)arg;
    x->ranks = 1;
    if (x->batch > 0 || s->n_ranks == 0)
        return;
    x->axis = SB_AXIS_RANKS;
    x->ranks = s->ranks[k];
    /* one rank is the golden's computation: its thread count's expectation */
    x->expected_set = x->ranks > 1 ? s->c->expect_ranks[x->ranks] : 0;
}

static void ranks_apply(sb_case *at, const sb_run_result *x)
{
    at->run_ranks = x->axis == SB_AXIS_RANKS ? x->ranks : 0;
}

static void ranks_name(char *out, size_t len, const sb_run_result *x)
{
    if (x->axis == SB_AXIS_RANKS)
        snprintf(out, len, "ranks=%d", x->ranks);
}

static void ranks_file(char *out, size_t len, const sb_run_result *x)
{
    if (x->axis == SB_AXIS_RANKS)
        snprintf(out, len, ".n%d", x->ranks);
}

/* ---- resume: [sweep] resume steps, each a run stopped and resumed at it ------- */

/* A point of the golden's computation (no batch size, not a rank job)
 * also runs stopped and resumed at each step (harness/run/resume.h). */
static int resume_count(const space *s, int arg, const sb_run_result *x)
{
    (void)arg;
    return x->batch == 0 && x->axis != SB_AXIS_RANKS ? 1 + s->n_resume : 1;
}

static void resume_set(const space *s, int arg, sb_run_result *x, int k)
{
    (void)arg;
    if (k == 0)
        return;
    x->axis = SB_AXIS_RESUME;
    x->resume_at = s->resume[k - 1];
    /* the thread count's expectation unless the case says otherwise */
    if (s->c->resume_expect)
        x->expected_set = s->c->resume_expect;
}

static void resume_apply(sb_case *at, const sb_run_result *x)
{
    at->run_resume_at = x->resume_at;
}

static void resume_name(char *out, size_t len, const sb_run_result *x)
{
    if (x->resume_at > 0)
        snprintf(out, len, "resume=%d", x->resume_at);
}

static void resume_file(char *out, size_t len, const sb_run_result *x)
{
    if (x->resume_at > 0)
        snprintf(out, len, ".k%d", x->resume_at);
}

/* ---- threads ----------------------------------------------------------------- */

static int threads_count(const space *s, int arg, const sb_run_result *x)
{
    (void)arg;
    return x->batch > 0 ? s->c->n_batch_threads : s->n_threads;
}

static void threads_set(const space *s, int arg, sb_run_result *x, int k)
{
    (void)arg;
    x->threads = x->batch > 0 ? s->c->batch_threads[k] : s->threads[k];
    if (x->expected_set != 0) {
        x->expected = sb_verdict_set_first(x->expected_set);
        return;
    }
    /* the thread count's expectation (a set of 0: expect[t] alone) */
    x->expected_set = s->c->expect_set[x->threads];
    x->expected = s->c->expect[x->threads];
}

static void nothing_apply(sb_case *at, const sb_run_result *x)
{
    (void)at, (void)x;
}

static void threads_name(char *out, size_t len, const sb_run_result *x)
{
    snprintf(out, len, "threads=%d", x->threads);
}

static void threads_file(char *out, size_t len, const sb_run_result *x)
{
    snprintf(out, len, ".t%d", x->threads);
}

/* ---- the environment: SAMEBITS_ISA (isa), then any variable (env) ------------ */

static int env_count(const space *s, int arg, const sb_run_result *x)
{
    (void)x;
    return s->env[arg].n_values;
}

static void env_set(const space *s, int arg, sb_run_result *x, int k)
{
    snprintf(x->env[arg], sizeof x->env[arg], "%s=%s", s->env[arg].name, s->env[arg].values[k]);
    x->n_env = arg + 1;
}

static void env_apply(sb_case *at, const sb_run_result *x)
{
    memcpy(at->run_env, x->env, sizeof at->run_env);
    at->n_run_env = x->n_env;
}

static bool is_isa(const char *setting)
{
    return strncmp(setting, ISA_VAR "=", sizeof ISA_VAR) == 0;
}

/* The settings of x on the isa axis (isa true) or the env axis, "NAME=v"
 * or, for isa, "isa=v", joined by sep, each prefixed with pre. */
static void settings_text(char *out, size_t len, const sb_run_result *x, bool isa,
                          const char *pre, char sep)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < x->n_env && at < len; i++) {
        if (is_isa(x->env[i]) != isa)
            continue;
        const char *v = x->env[i];
        int n = snprintf(out + at, len - at, "%s%s%s", at > 0 ? (char[2]){sep, '\0'} : "",
                         pre, isa ? "isa=" : "");
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
        for (const char *p = isa ? v + sizeof ISA_VAR : v; *p && at + 1 < len; p++)
            out[at++] = *p;
        out[at < len ? at : len - 1] = '\0';
    }
}

static void isa_name(char *out, size_t len, const sb_run_result *x)
{
    settings_text(out, len, x, true, "", ' ');
}

static void env_name(char *out, size_t len, const sb_run_result *x)
{
    settings_text(out, len, x, false, "", ' ');
}

/* ".isa-avx2", ".OMP_SCHEDULE-dynamic": '=' and whatever a file name
 * should not hold become '-' and '_' */
static void settings_file(char *out, size_t len, const sb_run_result *x, bool isa)
{
    settings_text(out, len, x, isa, ".", '.');
    for (char *p = out; *p; p++)
        if (*p == '=')
            *p = '-';
        else if (!(*p == '.' || *p == '-' || *p == '_' || (*p >= '0' && *p <= '9') ||
                   (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            *p = '_';
}

static void isa_file(char *out, size_t len, const sb_run_result *x)
{
    settings_file(out, len, x, true);
}

static void env_file(char *out, size_t len, const sb_run_result *x)
{
    settings_file(out, len, x, false);
}

/* ---- repeats ----------------------------------------------------------------- */

static int repeat_count(const space *s, int arg, const sb_run_result *x)
{
    (void)arg;
    return x->batch > 0 ? 1 : sb_sweep_repeats(s->c, s->o, x->threads);
}

static void repeat_set(const space *s, int arg, sb_run_result *x, int k)
{
    (void)s, (void)arg;
    x->repeat = k + 1;
}

static void repeat_name(char *out, size_t len, const sb_run_result *x)
{
    (void)out, (void)len, (void)x;  /* the reports give the repeat a field of its own */
}

static void repeat_file(char *out, size_t len, const sb_run_result *x)
{
    snprintf(out, len, ".r%d", x->repeat);
}

/* The axes in sweep order, outermost first; the environment's variables
 * (isa first) take one place each at ENV_AT. */
enum { AXIS_BATCH, AXIS_RANKS, AXIS_RESUME, AXIS_THREADS, AXIS_ISA, AXIS_ENV, AXIS_REPEAT, AXES };
#define ENV_AT AXIS_ISA
static const axis_desc axes[AXES] = {
    [AXIS_BATCH] = {batch_count, batch_set, batch_apply, batch_name, batch_file},
    [AXIS_RANKS] = {ranks_count, ranks_set, ranks_apply, ranks_name, ranks_file},
    [AXIS_RESUME] = {resume_count, resume_set, resume_apply, resume_name, resume_file},
    [AXIS_THREADS] = {threads_count, threads_set, nothing_apply, threads_name, threads_file},
    [AXIS_ISA] = {env_count, env_set, env_apply, isa_name, isa_file},
    [AXIS_ENV] = {env_count, env_set, env_apply, env_name, env_file},
    [AXIS_REPEAT] = {repeat_count, repeat_set, nothing_apply, repeat_name, repeat_file},
};

/* ---- the space ---------------------------------------------------------------- */

const char *const sb_config_reserved_env[] = {
    "OMP_NUM_THREADS", "OMP_DYNAMIC", "OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
    NULL,
};

bool sb_config_env_reserved(const char *name, char *err, size_t errlen)
{
    if (strcmp(name, ISA_VAR) == 0) {
        sb_err_set(err, errlen, "%s is the instruction-set axis: sweep it with isa (--isa), "
                   "not env", name);
        return true;
    }
    for (int i = 0; sb_config_reserved_env[i]; i++)
        if (strcmp(name, sb_config_reserved_env[i]) == 0) {
            sb_err_set(err, errlen, "%s is set by the harness in every child (the thread "
                       "axis and the runtime's settings): no environment axis may set it",
                       name);
            return true;
        }
    return false;
}

bool sb_env_axis_parse(sb_env_axis *a, const char *name, const char *values, bool isa,
                       char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    bool named = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; *p; p++)
        named = named && (*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                          (*p >= 'A' && *p <= 'Z'));
    if (!named || strlen(name) >= sizeof a->name) {
        sb_err_set(err, errlen, "a variable name of letters, digits and _ (at most %zu), "
                   "found \"%.80s\"", sizeof a->name - 1, name);
        return false;
    }
    if (!isa && sb_config_env_reserved(name, err, errlen))
        return false;
    snprintf(a->name, sizeof a->name, "%s", name);
    for (const char *p = values;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t'))
            m--;
        if (m == 0 || m >= sizeof a->values[0] || a->n_values == SB_ENV_VALUES_MAX) {
            sb_err_set(err, errlen, "%s: values separated by commas, each 1..%zu characters, "
                       "at most %d, found \"%.80s\"", name, sizeof a->values[0] - 1,
                       SB_ENV_VALUES_MAX, values);
            return false;
        }
        snprintf(a->values[a->n_values++], sizeof a->values[0], "%.*s", (int)m, p);
        if (p[n] == '\0')
            return true;
        p += n + 1;
    }
}

bool sb_env_axis_option(sb_env_axis *a, const char *arg, bool isa, char *err, size_t errlen)
{
    if (isa)
        return sb_env_axis_parse(a, ISA_VAR, arg, true, err, errlen);
    size_t eq = strcspn(arg, "=");
    char name[SB_ENV_NAME_CHARS + 1];
    snprintf(name, sizeof name, "%.*s", (int)(eq < sizeof name ? eq : sizeof name - 1), arg);
    if (arg[eq] != '=') {
        sb_err_set(err, errlen, "expected NAME=v1,v2, found \"%.80s\"", arg);
        return false;
    }
    return sb_env_axis_parse(a, name, arg + eq + 1, false, err, errlen);
}

bool sb_env_options_take(sb_env_axis env[SB_ENV_AXES_MAX], int *n, int *argc, char **argv,
                         int first, char *err, size_t errlen)
{
    int kept = first;
    *n = 0;
    for (int i = first; i < *argc; i++) {
        bool isa = strcmp(argv[i], "--isa") == 0, var = strcmp(argv[i], "--env") == 0;
        if ((!isa && !var) || i + 1 == *argc) {
            argv[kept++] = argv[i];
            continue;
        }
        const char *opt = isa ? "--isa" : "--env";
        char why[300];
        if (*n == SB_ENV_AXES_MAX) {
            sb_err_set(err, errlen, "%s: at most %d --isa and --env", opt, SB_ENV_AXES_MAX);
            return false;
        }
        if (!sb_env_axis_option(&env[*n], argv[++i], isa, why, sizeof why)) {
            sb_err_set(err, errlen, "%s: %s", opt, why);
            return false;
        }
        for (int k = 0; k < *n; k++)
            if (strcmp(env[k].name, env[*n].name) == 0) {
                sb_err_set(err, errlen, "%s: %s given twice", opt, env[*n].name);
                return false;
            }
        (*n)++;
    }
    *argc = kept;
    return true;
}

/* The isa axis's values: "all" every level this CPU and build run, best
 * first; each listed level checked. */
static bool isa_values(sb_env_axis *a, const char *path, char *err, size_t errlen)
{
    sb_env_axis in = *a;
    a->n_values = 0;
    for (int i = 0; i < in.n_values; i++) {
        if (strcmp(in.values[i], "all") == 0) {
            for (int l = SB_ISA_COUNT - 1; l >= 0; l--)
                if (sb_isa_runs((sb_isa)l) && a->n_values < SB_ENV_VALUES_MAX)
                    snprintf(a->values[a->n_values++], sizeof a->values[0], "%s",
                             sb_isa_name((sb_isa)l));
            continue;
        }
        sb_isa l;
        char why[160];
        if (!sb_isa_parse(in.values[i], &l, why, sizeof why)) {
            sb_err_set(err, errlen, "%s: isa: %s", path, why);
            return false;
        }
        snprintf(a->values[a->n_values++], sizeof a->values[0], "%s", in.values[i]);
    }
    return true;
}

/* The case's environment axes with the options' in place of the same
 * variable's, the isa axis first. */
static bool env_axes(space *s, char *err, size_t errlen)
{
    const sb_case *c = s->c;
    const sb_sweep_options *o = s->o;
    s->n_env = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < c->n_env_axes + o->n_env; i++) {
            const sb_env_axis *a = i < c->n_env_axes ? &c->env_axes[i] : &o->env[i - c->n_env_axes];
            if ((strcmp(a->name, ISA_VAR) == 0) != (pass == 0))
                continue;
            int at = 0;
            while (at < s->n_env && strcmp(s->env[at].name, a->name) != 0)
                at++;
            if (at == SB_ENV_AXES_MAX) {
                sb_err_set(err, errlen, "%s: more than %d environment axes", c->path,
                           SB_ENV_AXES_MAX);
                return false;
            }
            s->env[at] = *a;
            if (at == s->n_env)
                s->n_env++;
        }
    }
    return s->n_env == 0 || strcmp(s->env[0].name, ISA_VAR) != 0 ||
           isa_values(&s->env[0], c->path, err, errlen);
}

/* Thread counts in 1..SB_MAX_THREADS, each once (two runs at one count
 * would write the same work files). */
static bool threads_check(const space *s, char *err, size_t errlen)
{
    bool seen[SB_MAX_THREADS + 1] = {false};
    for (int i = 0; i < s->n_threads; i++) {
        int t = s->threads[i];
        if (t < 1 || t > SB_MAX_THREADS) {
            sb_err_set(err, errlen, "%s: thread count %d is outside 1..%d", s->c->path, t,
                       SB_MAX_THREADS);
            return false;
        }
        if (seen[t]) {
            sb_err_set(err, errlen, "%s: thread count %d is listed twice", s->c->path, t);
            return false;
        }
        seen[t] = true;
    }
    return true;
}

/* The steps of case c's run, 0..steps-1: a training case's (cut by
 * --max-steps), a user kernel's own count, a command case's golden's (its
 * last record's step and those before; -1 without a golden to ask). */
static int64_t run_steps(const space *s, const sb_trace *golden)
{
    const sb_case *c = s->c;
    if (c->kind == SB_CASE_TRAIN) {
        const int64_t steps = sb_case_train_steps(c);
        return s->o->max_steps > 0 && steps > s->o->max_steps ? s->o->max_steps : steps;
    }
    if (c->kind == SB_CASE_KERNEL)
        return c->user_steps;
    if (!golden)
        return -1;
    int64_t last = -1;
    for (size_t i = 0; i < golden->n_records; i++)
        if (golden->records[i].step > last)
            last = golden->records[i].step;
    return last + 1;
}

/* Each resume step K of a case with a resume hook in 1..its run's last
 * step: the second process runs at least that step, and it is compared.
 * A step of the case file's [sweep] resume is refused at its line. */
static bool resume_check(const space *s, const sb_trace *golden, char *err, size_t errlen)
{
    const sb_case *c = s->c;
    char at[600];
    if (!s->o->resume && c->resume_line > 0)
        snprintf(at, sizeof at, "%s:%d", c->path, c->resume_line);
    else
        snprintf(at, sizeof at, "%s", c->path);
    const char *refusal = s->n_resume > 0 ? sb_case_resume_refusal(c) : NULL;
    if (refusal) {
        sb_err_set(err, errlen, "%s: resume at %d: %s", at, s->resume[0], refusal);
        return false;
    }
    const int64_t steps = run_steps(s, golden);
    const char *last = c->kind == SB_CASE_COMMAND ? "the golden's last step"
                       : c->kind == SB_CASE_KERNEL ? "the kernel's last step"
                       : s->o->max_steps > 0 && steps == s->o->max_steps
                           ? "the last step --max-steps runs"
                           : "the run's last step";
    for (int k = 0; k < s->n_resume && steps >= 0; k++)
        if (s->resume[k] >= steps) {
            sb_err_set(err, errlen, "%s: resume at %d: K must be in 1..%lld (%s)", at,
                       s->resume[k], (long long)steps - 1, last);
            return false;
        }
    return true;
}

static sb_status space_make(space *s, const sb_case *c, const sb_sweep_options *o,
                            const sb_trace *golden, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->c = c;
    s->o = o;
    s->golden_points = o->axes == 0 || (o->axes & SB_AXIS_BIT(SB_AXIS_THREADS));
    s->batch_points = c->n_batch > 0 && (o->axes == 0 || (o->axes & SB_AXIS_BIT(SB_AXIS_BATCH)));
    s->threads = o->threads ? o->threads : c->threads;
    s->n_threads = o->threads ? o->n_threads : c->n_threads;
    s->ranks = o->ranks ? o->ranks : c->ranks;
    s->n_ranks = c->n_ranks == 0 ? 0 : o->ranks ? o->n_ranks : c->n_ranks;
    s->resume = o->resume ? o->resume : c->resume;
    s->n_resume = o->resume ? o->n_resume : c->n_resume;
    if (!s->golden_points && !s->batch_points) {
        sb_err_set(err, errlen, "%s: no axis to sweep (--axis batch on a case without "
                   "[invariance] batch, and no --batch)", c->path);
        return SB_ERR_USAGE;
    }
    if (s->batch_points && c->n_batch < 2) {
        sb_err_set(err, errlen, "%s: the batch axis needs two batch sizes or more (the first "
                   "is the reference)", c->path);
        return SB_ERR_USAGE;
    }
    if (s->golden_points && s->n_threads <= 0) {
        sb_err_set(err, errlen, "%s: nothing to sweep (no thread counts)", c->path);
        return SB_ERR_USAGE;
    }
    if (o->ranks && c->n_ranks == 0) {
        sb_err_set(err, errlen, "%s: --ranks needs a [parallel] case (data-parallel training)",
                   c->path);
        return SB_ERR_USAGE;
    }
    if (s->golden_points && s->n_ranks > 0 && !SB_HAVE_MPI) {
        sb_err_set(err, errlen, "%s: the rank axis: samebits was built without MPI (meson "
                   "-Dmpi=enabled; apt-get install openmpi-bin libopenmpi-dev)", c->path);
        return SB_ERR_NO_MPI;
    }
    if (s->golden_points && !threads_check(s, err, errlen))
        return SB_ERR_USAGE;
    if (s->golden_points && !resume_check(s, golden, err, errlen))
        return SB_ERR_USAGE;
    return env_axes(s, err, errlen) ? SB_OK : SB_ERR_USAGE;
}

/* The place `dim` of the enumeration: its descriptor and argument. */
static const axis_desc *dim_axis(const space *s, int dim, int *arg)
{
    *arg = dim - ENV_AT;
    if (dim < ENV_AT)
        return &axes[dim];
    if (dim < ENV_AT + s->n_env)
        return strcmp(s->env[*arg].name, ISA_VAR) == 0 ? &axes[AXIS_ISA] : &axes[AXIS_ENV];
    return &axes[AXIS_REPEAT];
}

/* Every point below x from place dim on, appended to out (NULL: counted). */
static void points_walk(const space *s, int dim, sb_run_result *x, sb_config *out, int *n,
                        int *group)
{
    int arg;
    const axis_desc *a = dim_axis(s, dim, &arg);
    bool last = a == &axes[AXIS_REPEAT];
    int count = a->count(s, arg, x);
    for (int k = 0; k < count; k++) {
        sb_run_result y = *x;
        a->set(s, arg, &y, k);
        if (!last) {
            points_walk(s, dim + 1, &y, out, n, group);
            continue;
        }
        if (out)
            out[*n] = (sb_config){.x = y, .group = *group};
        (*n)++;
    }
    if (last)
        (*group)++;
}

sb_status sb_configs_make(const sb_case *c, const sb_sweep_options *o, const sb_trace *golden,
                          sb_config **out, int *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    space *s = malloc(sizeof *s);
    if (!s)
        return SB_ERR_NOMEM;
    sb_status st = space_make(s, c, o, golden, err, errlen);
    sb_run_result x0 = {.ranks = 1};
    int group = 0, total = 0;
    if (st == SB_OK)
        points_walk(s, 0, &x0, NULL, &total, &group);
    if (st == SB_OK && total == 0) {
        sb_err_set(err, errlen, "%s: nothing to sweep (an axis with no values)", c->path);
        st = SB_ERR_USAGE;
    }
    if (st == SB_OK && !(*out = calloc((size_t)total, sizeof **out)))
        st = SB_ERR_NOMEM;
    group = 0;
    if (st == SB_OK)
        points_walk(s, 0, &x0, *out, n, &group);
    free(s);
    return st;
}

bool sb_configs_need_golden(const sb_case *c, const sb_sweep_options *o)
{
    (void)c;
    return o->axes == 0 || (o->axes & SB_AXIS_BIT(SB_AXIS_THREADS));
}

void sb_config_case(sb_case *at, const sb_case *c, const sb_run_result *x)
{
    *at = *c;
    for (int a = 0; a < AXES; a++)
        axes[a].apply(at, x);
}

void sb_config_batch_reference(sb_case *at, const sb_case *c, const sb_run_result *x)
{
    sb_config_case(at, c, x);
    at->run_batch = c->batch_sizes[0];
}

bool sb_config_stem(char *out, size_t len, const char *work_dir, const char *name,
                    const sb_run_result *x)
{
    int n = snprintf(out, len, "%s/%s", work_dir, name);
    for (int a = 0; a < AXES && n >= 0 && (size_t)n < len; a++) {
        char part[SB_ENV_AXES_MAX * sizeof(sb_env_setting) + 8] = "";
        axes[a].file(part, sizeof part, x);
        n += snprintf(out + n, len - (size_t)n, "%s", part);
    }
    return n >= 0 && (size_t)n < len;
}

bool sb_config_threads_only(const sb_run_result *x)
{
    return x->axis == SB_AXIS_THREADS && x->n_env == 0;
}

/* The names of x's axes but the axis `skip`, joined by spaces. */
static void names_join(char *out, size_t len, const sb_run_result *x, int skip)
{
    size_t at = 0;
    out[0] = '\0';
    for (int a = 0; a < AXES && at + 1 < len; a++) {
        char part[SB_ENV_AXES_MAX * sizeof(sb_env_setting) + 8] = "";
        if (a != skip)
            axes[a].name(part, sizeof part, x);
        if (!part[0])
            continue;
        int n = snprintf(out + at, len - at, "%s%s", at > 0 ? " " : "", part);
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
    }
}

void sb_run_config_name(const sb_run_result *r, char *out, size_t len)
{
    names_join(out, len, r, -1);
}

void sb_config_axes_text(char *out, size_t len, const sb_run_result *x)
{
    names_join(out, len, x, AXIS_THREADS);
    for (char *p = out; *p; p++)
        if (*p == '=')
            *p = ' ';
}
