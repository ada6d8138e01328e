/* --shard auto: the shard from a scheduler's environment (shard_env.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/shard_env.h"

enum { SHARDS_MAX = 100000 };  /* as --shard I/N */

/* The value of NAME in env, NULL when unset or empty. */
static const char *env_get(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return (*env)[n + 1] ? *env + n + 1 : NULL;
    return NULL;
}

static sb_shard_env_status say(sb_shard_env_status st, char *msg, size_t msglen,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return st;
}

/* A whole number in [lo, SHARDS_MAX]. */
static bool whole(const char *s, long lo, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    return s[0] >= '0' && s[0] <= '9' && *end == '\0' && errno == 0 && *v >= lo &&
           *v <= SHARDS_MAX;
}

/* The variables of one environment: all set, none set, or an error naming
 * the first one set and the first one missing. */
static bool all_or_none(char *const *env, const char *const *names, int n, int *set,
                        char *msg, size_t msglen)
{
    int first_set = -1, first_unset = -1;
    *set = 0;
    for (int i = 0; i < n; i++) {
        if (env_get(env, names[i])) {
            (*set)++;
            if (first_set < 0)
                first_set = i;
        } else if (first_unset < 0)
            first_unset = i;
    }
    if (*set == 0 || *set == n)
        return true;
    say(SB_SHARD_ENV_ERROR, msg, msglen, "--shard: %s is set but %s is not (%s)",
        names[first_set], names[first_unset],
        n == 3 ? "a Slurm job array sets SLURM_ARRAY_TASK_ID, _MIN and _COUNT"
               : "GoogleTest's sharding sets both");
    return false;
}

static sb_shard_env_status not_whole(const char *name, const char *value, char *msg,
                                     size_t msglen)
{
    return say(SB_SHARD_ENV_ERROR, msg, msglen,
               "--shard: %s=%s: expected a whole number up to %d", name, value, SHARDS_MAX);
}

static sb_shard_env_status slurm(char *const *env, int *index, int *count, char *msg,
                                 size_t msglen)
{
    static const char *const names[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
                                        "SLURM_ARRAY_TASK_COUNT"};
    int set;
    if (!all_or_none(env, names, 3, &set, msg, msglen))
        return SB_SHARD_ENV_ERROR;
    if (set == 0)
        return SB_SHARD_ENV_NONE;
    long v[4];
    for (int i = 0; i < 3; i++)
        if (!whole(env_get(env, names[i]), i == 2 ? 1 : 0, &v[i]))
            return not_whole(names[i], env_get(env, names[i]), msg, msglen);
    const char *step = env_get(env, "SLURM_ARRAY_TASK_STEP");
    v[3] = 1;
    if (step && !whole(step, 1, &v[3]))
        return not_whole("SLURM_ARRAY_TASK_STEP", step, msg, msglen);
    long k = v[0] - v[1];
    if (k < 0 || k % v[3] != 0 || k / v[3] >= v[2])
        return say(SB_SHARD_ENV_ERROR, msg, msglen,
                   "--shard: SLURM_ARRAY_TASK_ID=%ld is not task (ID - MIN) / STEP < COUNT "
                   "of the array %ld-%ld:%ld (an array of indices MIN, MIN+STEP, ...)",
                   v[0], v[1], v[1] + (v[2] - 1) * v[3], v[3]);
    *index = (int)(k / v[3]);
    *count = (int)v[2];
    return say(SB_SHARD_ENV_FOUND, msg, msglen,
               "shard %d/%d from SLURM_ARRAY_TASK_ID=%ld (SLURM_ARRAY_TASK_MIN=%ld, "
               "SLURM_ARRAY_TASK_COUNT=%ld)", *index + 1, *count, v[0], v[1], v[2]);
}

static sb_shard_env_status gtest(char *const *env, int *index, int *count, char *msg,
                                 size_t msglen)
{
    static const char *const names[] = {"GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS"};
    int set;
    if (!all_or_none(env, names, 2, &set, msg, msglen))
        return SB_SHARD_ENV_ERROR;
    if (set == 0)
        return SB_SHARD_ENV_NONE;
    long i, n;
    if (!whole(env_get(env, names[0]), 0, &i))
        return not_whole(names[0], env_get(env, names[0]), msg, msglen);
    if (!whole(env_get(env, names[1]), 1, &n))
        return not_whole(names[1], env_get(env, names[1]), msg, msglen);
    if (i >= n)
        return say(SB_SHARD_ENV_ERROR, msg, msglen,
                   "--shard: GTEST_SHARD_INDEX=%ld is not below GTEST_TOTAL_SHARDS=%ld", i, n);
    *index = (int)i;
    *count = (int)n;
    return say(SB_SHARD_ENV_FOUND, msg, msglen,
               "shard %d/%d from GTEST_SHARD_INDEX=%ld, GTEST_TOTAL_SHARDS=%ld", *index + 1,
               *count, i, n);
}

/* JOB_COMPLETION_INDEX, which carries no total: total 0 when none was given. */
static sb_shard_env_status indexed_job(char *const *env, long total, int *index, int *count,
                                       char *msg, size_t msglen)
{
    const char *s = env_get(env, "JOB_COMPLETION_INDEX");
    long i;
    if (!s)
        return SB_SHARD_ENV_NONE;
    if (total == 0)
        return say(SB_SHARD_ENV_NONE, msg, msglen,
                   "JOB_COMPLETION_INDEX=%s gives no shard count: the whole sweep "
                   "(--shard auto/N makes it shard %s+1 of N)", s, s);
    if (!whole(s, 0, &i))
        return not_whole("JOB_COMPLETION_INDEX", s, msg, msglen);
    if (i >= total)
        return say(SB_SHARD_ENV_ERROR, msg, msglen,
                   "--shard auto/%ld: JOB_COMPLETION_INDEX=%ld is not below %ld", total, i, total);
    *index = (int)i;
    *count = (int)total;
    return say(SB_SHARD_ENV_FOUND, msg, msglen, "shard %d/%d from JOB_COMPLETION_INDEX=%ld",
               *index + 1, *count, i);
}

sb_shard_env_status sb_shard_from_env(const char *spec, char *const *env, int *index,
                                      int *count, char *msg, size_t msglen)
{
    long total = 0;
    msg[0] = '\0';
    if (spec && strcmp(spec, "auto") != 0 &&
        (strncmp(spec, "auto/", 5) != 0 || !whole(spec + 5, 1, &total)))
        return say(SB_SHARD_ENV_BAD_SPEC, msg, msglen,
                   "--shard: expected I/N, auto or auto/N with 1 <= I <= N <= %d, got '%s'",
                   SHARDS_MAX, spec);
    int i = 0, n = 0;
    sb_shard_env_status st = slurm(env, &i, &n, msg, msglen);
    if (st == SB_SHARD_ENV_NONE)
        st = gtest(env, &i, &n, msg, msglen);
    if (st == SB_SHARD_ENV_NONE)
        st = indexed_job(env, total, &i, &n, msg, msglen);
    if (st == SB_SHARD_ENV_FOUND && total > 0 && n != total) {
        char found[256];
        snprintf(found, sizeof found, "%s", msg);
        return say(SB_SHARD_ENV_ERROR, msg, msglen,
                   "--shard auto/%ld: the environment says %d shards (%s)", total, n, found);
    }
    if (st == SB_SHARD_ENV_NONE && spec)
        return say(SB_SHARD_ENV_ERROR, msg, msglen,
                   "--shard %s: no shard in the environment (SLURM_ARRAY_TASK_ID, "
                   "GTEST_SHARD_INDEX%s)", spec,
                   total ? " or JOB_COMPLETION_INDEX" : "; JOB_COMPLETION_INDEX with auto/N");
    if (st == SB_SHARD_ENV_FOUND) {
        *index = i;
        *count = n;
    }
    return st;
}

bool sb_shard_env_options(const char *spec, char *const *env, sb_sweep_options *o, int *rc)
{
    char msg[512];
    switch (sb_shard_from_env(spec, env, &o->shard_index, &o->shard_count, msg, sizeof msg)) {
    case SB_SHARD_ENV_NONE:
        if (msg[0])
            fprintf(stderr, "samebits sweep: %s\n", msg);
        return true;
    case SB_SHARD_ENV_FOUND:
        fprintf(stderr, "samebits sweep: %s%s\n", msg,
                spec ? "" : " (--shard 1/1 runs the whole sweep)");
        return true;
    case SB_SHARD_ENV_BAD_SPEC:
        fprintf(stderr, "samebits: %s\n", msg);
        *rc = SB_EXIT_INPUT;
        return false;
    case SB_SHARD_ENV_ERROR:
        fprintf(stderr, "samebits: %s\n", msg);
        *rc = SB_EXIT_SHARD_ENV;
        return false;
    }
    return false;
}
