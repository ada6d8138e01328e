/* Case files: the [sweep] section (thread counts, repeats, timeout,
 * expectations, golden path, environment axes, resume steps). */
#include <string.h>

#include "case/case_loader.h"
#include "support/support.h"
#include "sweep/config.h"

/* "1..8", "1,2,4,6,8" or a mix such as "1..4, 6, 8": the one thread-list
 * grammar (support.h). */
static sb_status get_threads(case_loader *ld, const case_entry *e, sb_case *c)
{
    char why[160];
    if (!sb_thread_list_parse(e->value, c->threads, &c->n_threads, why, sizeof why))
        return sb_case_fail(ld, e->line, "threads as counts in [1, %d] and ranges a..b or a-b, "
                                         "each count once (%s)", SB_MAX_THREADS, why);
    return SB_OK;
}

static const char *const sweep_keys[] = {"threads", "repeats", "timeout", "reference_threads",
                                         "expect", "golden", "isa", "resume",
                                         "resume_expect", NULL};

const char *sb_case_resume_refusal(const sb_case *c)
{
    switch (c->kind) {
    case SB_CASE_TRAIN:
        return c->n_ranks > 0 ? "a [parallel] case's checkpoint is not of one model's own run"
                              : NULL;
    case SB_CASE_COMMAND:
        return c->command_stop[0] && c->command_restore[0]
                   ? NULL
                   : "a kind = command case resumes through the keys stop and restore of "
                     "[command] (harness/PRODUCERS.md)";
    case SB_CASE_KERNEL:
        return c->user_steps > 0 ? NULL
               : c->user ? "the kernel has no resume hook (steps, save and restore in its "
                           "sb_user_kernel)"
                         : "a kernel case has no steps to resume at";
    }
    return NULL;
}

/* resume: the steps a training case of its own (no [parallel]) or a
 * command case with a resume hook is stopped at and resumed from (each
 * in 1..the run's last step, so that the resumed process runs at least
 * that step: a training case's checked here, a command case's against its
 * golden by the sweep); resume_expect: the verdicts
 * of those runs (default: their thread count's). A resume mutant's case
 * must have them: its fault is in the restore. */
static sb_status resume_load(case_loader *ld, sb_case *c, int at)
{
    const case_entry *e = sb_case_find(ld, "sweep", "resume");
    const case_entry *x = sb_case_find(ld, "sweep", "resume_expect");
    const int m = c->mutant[0] ? sb_resume_mutant_find(c->mutant) : -1;
    if (m >= 0 && e == NULL)
        return sb_case_fail(ld, at, "key resume (the steps to resume at) in [sweep] of a case "
                                    "of resume mutant %s", c->mutant);
    if (x != NULL && e == NULL)
        return sb_case_fail(ld, x->line, "resume_expect only with resume");
    if (m >= 0)
        c->train.resume_fault = sb_resume_mutant_restore(m);
    if (x != NULL && sb_case_get_verdicts(ld, x, &c->resume_expect) != SB_OK)
        return SB_ERR_INPUT;
    if (e == NULL)
        return SB_OK;
    if (c->kind == SB_CASE_COMMAND && sb_case_resume_refusal(c) != NULL)
        return sb_case_fail(ld, e->line, "resume in a kind = command case with the keys stop "
                                         "and restore in [command] (its resume hook, "
                                         "harness/PRODUCERS.md)");
    if (c->kind != SB_CASE_COMMAND &&
        (c->kind != SB_CASE_TRAIN || sb_case_section_line(ld, "parallel") != 0))
        return sb_case_fail(ld, e->line, "resume only in a kind = train case without "
                                         "[parallel] (a checkpoint is of the model's own run) "
                                         "or a kind = command case with a resume hook");
    char why[160];
    if (!sb_resume_list_parse(e->value, c->resume, &c->n_resume, why, sizeof why))
        return sb_case_fail(ld, e->line, "resume as steps in [1, %d] and ranges a..b, each "
                                         "once (%s)", SB_MAX_RESUME_STEP, why);
    c->resume_line = e->line;
    if (c->kind == SB_CASE_COMMAND)
        return SB_OK;           /* its steps are its golden's: the sweep checks them */
    const int64_t steps = sb_case_train_steps(c);
    for (int i = 0; i < c->n_resume; i++)
        if (c->resume[i] >= steps)
            return sb_case_fail(ld, e->line, "resume at %d: K must be in 1..%lld (the run's "
                                             "last step)", c->resume[i], (long long)steps - 1);
    return SB_OK;
}

/* The repository the case lives in: the parent of the case file's directory. */
static int repo_of(char *out, size_t size, const char *path)
{
    char dir[512];
    const char *slash = strrchr(path, '/');
    int n = slash == NULL ? snprintf(dir, sizeof dir, ".")
                          : snprintf(dir, sizeof dir, "%.*s",
                                     (int)(slash == path ? 1 : slash - path), path);
    if (n < 0 || (size_t)n >= sizeof dir)
        return -1;
    const char *dslash = strrchr(dir, '/');
    const char *last = dslash ? dslash + 1 : dir;
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
        return snprintf(out, size, "%s/..", dir);
    if (dslash == NULL)
        return snprintf(out, size, ".");
    if (dslash == dir)
        return snprintf(out, size, "/");
    return snprintf(out, size, "%.*s", (int)(dslash - dir), dir);
}

/* threads, repeats, reference_threads and timeout, with their defaults. */
static sb_status counts_load(case_loader *ld, sb_case *c, int at)
{
    const case_entry *e = sb_case_find(ld, "sweep", "threads");
    if (e == NULL)
        return sb_case_fail(ld, at, "key threads (e.g. 1..8 or 1,2,4,6,8) in [sweep]");
    sb_status st = get_threads(ld, e, c);
    int64_t v = 0;
    c->repeats = 1;
    if (st == SB_OK && (e = sb_case_find(ld, "sweep", "repeats")) != NULL &&
        (st = sb_case_get_i64(ld, e, 1, 1000, &v)) == SB_OK)
        c->repeats = (int)v;
    c->reference_threads = 1;
    if (st == SB_OK && (e = sb_case_find(ld, "sweep", "reference_threads")) != NULL &&
        (st = sb_case_get_i64(ld, e, 1, SB_MAX_THREADS, &v)) == SB_OK)
        c->reference_threads = (int)v;
    c->timeout_seconds = 600;
    if (st == SB_OK && (e = sb_case_find(ld, "sweep", "timeout")) != NULL) {
        float seconds;
        st = sb_case_get_real(ld, e, 0.001, 86400.0 * 7, false, &seconds);
        c->timeout_seconds = (double)seconds;
    }
    return st;
}

/* One expect.<T> or repeats.<T> key, T one of the case's thread counts. */
static sb_status per_count_load(case_loader *ld, sb_case *c, const case_entry *e, bool expect)
{
    int64_t t;
    bool listed = false;
    if (sb_int_parse(e->key + (expect ? 7 : 8), 1, SB_MAX_THREADS, &t, NULL, 0))
        for (int k = 0; k < c->n_threads; k++)
            listed = listed || c->threads[k] == t;
    if (!listed)
        return sb_case_fail(ld, e->line, "%s.<T> with T one of the thread counts in threads, "
                                         "found \"%s\"", expect ? "expect" : "repeats", e->key);
    if (expect)
        return sb_case_get_verdicts(ld, e, &c->expect_set[t]);
    int64_t v;
    sb_status st = sb_case_get_i64(ld, e, 1, 1000, &v);
    if (st == SB_OK)
        c->repeats_at[t] = (int)v;
    return st;
}

/* expect (every thread count), then expect.<T> and repeats.<T>, each count
 * named once. */
static sb_status expectations_load(case_loader *ld, sb_case *c)
{
    sb_status st = sb_case_per_count_once(ld, "sweep", "expect");
    if (st == SB_OK)
        st = sb_case_per_count_once(ld, "sweep", "repeats");
    sb_verdict_set all = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL);
    const case_entry *e = sb_case_find(ld, "sweep", "expect");
    if (st == SB_OK && e != NULL)
        st = sb_case_get_verdicts(ld, e, &all);
    for (int t = 0; t <= SB_MAX_THREADS; t++)
        c->expect_set[t] = all;
    for (int i = 0; st == SB_OK && i < ld->n_entries; i++) {
        e = &ld->entries[i];
        bool expect = strncmp(e->key, "expect.", 7) == 0;
        if (strcmp(e->section, "sweep") == 0 && (expect || strncmp(e->key, "repeats.", 8) == 0))
            st = per_count_load(ld, c, e, expect);
    }
    if (st != SB_OK)
        return st;
    for (int t = 0; t <= SB_MAX_THREADS; t++)
        c->expect[t] = sb_verdict_set_first(c->expect_set[t]);
    return st;
}

/* golden, resolved against the repository the case lives in. */
static sb_status golden_load(case_loader *ld, sb_case *c, int at)
{
    char repo[1024];
    int rlen = repo_of(repo, sizeof repo, ld->path);
    if (rlen < 0 || (size_t)rlen >= sizeof repo)
        return sb_case_fail(ld, at, "a case file path shorter than %zu characters", sizeof repo);
    bool here = strcmp(repo, ".") == 0;
    int len;
    const case_entry *e = sb_case_find(ld, "sweep", "golden");
    if (e != NULL) {
        if (e->value[0] == '\0')
            return sb_case_fail(ld, e->line, "golden as a path");
        if (e->value[0] == '/' || here)
            len = snprintf(c->golden_path, sizeof c->golden_path, "%s", e->value);
        else
            len = snprintf(c->golden_path, sizeof c->golden_path, "%s/%s", repo, e->value);
    } else if (here) {
        len = snprintf(c->golden_path, sizeof c->golden_path, "golden/%s.golden", c->name);
    } else {
        len = snprintf(c->golden_path, sizeof c->golden_path, "%s/golden/%s.golden", repo,
                       c->name);
    }
    if (len < 0 || (size_t)len >= sizeof c->golden_path)
        return sb_case_fail(ld, e ? e->line : at, "a golden path shorter than %zu characters",
                            sizeof c->golden_path);
    return SB_OK;
}

/* isa (the instruction-set axis) and env.NAME (a variable's axis), each
 * variable once. */
static sb_status env_axes_load(case_loader *ld, sb_case *c)
{
    c->n_env_axes = 0;
    for (int i = 0; i < ld->n_entries; i++) {
        const case_entry *e = &ld->entries[i];
        bool isa = strcmp(e->key, "isa") == 0;
        if (strcmp(e->section, "sweep") != 0 || (!isa && strncmp(e->key, "env.", 4) != 0))
            continue;
        if (c->n_env_axes == SB_ENV_AXES_MAX)
            return sb_case_fail(ld, e->line, "at most %d environment axes (isa, env.NAME)",
                                SB_ENV_AXES_MAX);
        sb_env_axis *a = &c->env_axes[c->n_env_axes];
        char why[300];
        if (!sb_env_axis_parse(a, isa ? "SAMEBITS_ISA" : e->key + 4, e->value, isa, why,
                               sizeof why))
            return sb_case_fail(ld, e->line, "%s (%s)", isa ? "isa: all or a list of avx512, "
                                "avx2, baseline" : "env.NAME: values for variable NAME", why);
        for (int k = 0; isa && k < a->n_values; k++)
            if (strcmp(a->values[k], "all") != 0 &&
                sb_isa_from_name(a->values[k]) == SB_ISA_COUNT)
                return sb_case_fail(ld, e->line, "isa: all or a list of avx512, avx2, "
                                    "baseline, found \"%s\"", a->values[k]);
        for (int k = 0; k < c->n_env_axes; k++)
            if (strcmp(c->env_axes[k].name, a->name) == 0)
                return sb_case_fail(ld, e->line, "one key per variable, found \"%s\" twice",
                                    e->key);
        c->n_env_axes++;
    }
    return SB_OK;
}

sb_status sb_case_load_sweep(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "sweep");
    if (at == 0)
        return sb_case_fail(ld, 1, "a [sweep] section (with threads)");
    static const char *const per_count[] = {"expect", "repeats", "env", NULL};
    sb_status st = sb_case_keys_check(ld, "sweep", sweep_keys, per_count,
                                      "threads repeats repeats.<T> timeout reference_threads "
                                      "expect expect.<T> golden isa env.<NAME> resume "
                                      "resume_expect");
    if (st == SB_OK)
        st = counts_load(ld, c, at);
    if (st == SB_OK)
        st = env_axes_load(ld, c);
    if (st == SB_OK)
        st = expectations_load(ld, c);
    if (st == SB_OK)
        st = resume_load(ld, c, at);
    return st == SB_OK ? golden_load(ld, c, at) : st;
}
