/* The shard a sweep runs, from the environment a scheduler gives each of
 * its tasks (`sweep --shard auto`, harness/CLI.md): a Slurm job array's,
 * GoogleTest's sharding variables, or a Kubernetes Indexed Job's index. */
#ifndef SHARD_ENV_H
#define SHARD_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "sb_harness.h"

typedef enum {
    SB_SHARD_ENV_NONE,     /* no shard: the whole sweep (msg may hold a note) */
    SB_SHARD_ENV_FOUND,    /* *index (0-based) and *count set; msg says from where */
    SB_SHARD_ENV_BAD_SPEC, /* spec is neither auto nor auto/N: msg, an input error */
    SB_SHARD_ENV_ERROR,    /* a variable half set or out of range: msg, one line */
} sb_shard_env_status;

/* The shard from env (NAME=VALUE strings, NULL-terminated, as environ), for
 * spec NULL (no --shard: a shard where Slurm's or GoogleTest's variables
 * are set, the whole sweep where none is), "auto" (a shard must be found)
 * or "auto/N" (N shards: the index from JOB_COMPLETION_INDEX, or from the
 * others, whose count must then be N). Looked for in that order:
 * SLURM_ARRAY_TASK_ID with _MIN, _COUNT (and _STEP if set), then
 * GTEST_SHARD_INDEX with GTEST_TOTAL_SHARDS, then JOB_COMPLETION_INDEX.
 * A variable set to the empty string counts as unset. */
sb_shard_env_status sb_shard_from_env(const char *spec, char *const *env, int *index,
                                      int *count, char *msg, size_t msglen);

/* sb_shard_from_env into o's shard_index and shard_count, its message on
 * stderr (the shard found, or a note); false with *rc SB_EXIT_INPUT for a bad
 * spec, SB_EXIT_SHARD_ENV for a bad environment. */
bool sb_shard_env_options(const char *spec, char *const *env, sb_sweep_options *o, int *rc);

#endif
