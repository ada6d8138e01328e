/* --shard auto: the shard from each scheduler's environment, the default
 * where one is set, and the errors of a variable half set or out of range. */
#include <check.h>
#include <string.h>

#include "sweep/shard_env.h"

Suite *make_shard_env_suite(void);

static int idx, cnt;
static char msg[512];

static sb_shard_env_status from(const char *spec, char *const *env)
{
    idx = cnt = -1;
    return sb_shard_from_env(spec, env, &idx, &cnt, msg, sizeof msg);
}

START_TEST(slurm_array_gives_the_task_of_the_array)
{
    char *env[] = {"PATH=/bin", "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_MIN=1",
                   "SLURM_ARRAY_TASK_COUNT=4", NULL};
    ck_assert_int_eq(from("auto", env), SB_SHARD_ENV_FOUND);
    ck_assert_int_eq(idx, 2);
    ck_assert_int_eq(cnt, 4);
    ck_assert_ptr_nonnull(strstr(msg, "shard 3/4 from SLURM_ARRAY_TASK_ID=3"));
    /* no --shard: the same shard, by default */
    ck_assert_int_eq(from(NULL, env), SB_SHARD_ENV_FOUND);
    ck_assert_int_eq(idx, 2);
    /* an array from 0, and one with a step: 10-16:3 is 10, 13, 16 */
    char *zero[] = {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_COUNT=2",
                    NULL};
    ck_assert_int_eq(from("auto", zero), SB_SHARD_ENV_FOUND);
    ck_assert_int_eq(idx, 0);
    ck_assert_int_eq(cnt, 2);
    char *step[] = {"SLURM_ARRAY_TASK_ID=16", "SLURM_ARRAY_TASK_MIN=10",
                    "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_STEP=3", NULL};
    ck_assert_int_eq(from("auto", step), SB_SHARD_ENV_FOUND);
    ck_assert_int_eq(idx, 2);
    ck_assert_int_eq(cnt, 3);
}
END_TEST

START_TEST(slurm_half_set_or_outside_the_array_is_an_error)
{
    char *half[] = {"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_MIN=1", NULL};
    ck_assert_int_eq(from(NULL, half), SB_SHARD_ENV_ERROR);
    ck_assert_ptr_nonnull(strstr(msg, "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not"));
    ck_assert_int_eq(idx, -1);
    char *empty[] = {"SLURM_ARRAY_TASK_ID=", "SLURM_ARRAY_TASK_COUNT=4", NULL};
    ck_assert_int_eq(from("auto", empty), SB_SHARD_ENV_ERROR);
    ck_assert_ptr_nonnull(strstr(msg, "SLURM_ARRAY_TASK_COUNT is set but SLURM_ARRAY_TASK_ID is not"));
    char *past[] = {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=4",
                    NULL};
    ck_assert_int_eq(from("auto", past), SB_SHARD_ENV_ERROR);
    char *off_step[] = {"SLURM_ARRAY_TASK_ID=12", "SLURM_ARRAY_TASK_MIN=10",
                        "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_STEP=3", NULL};
    ck_assert_int_eq(from("auto", off_step), SB_SHARD_ENV_ERROR);
    char *word[] = {"SLURM_ARRAY_TASK_ID=x", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=4",
                    NULL};
    ck_assert_int_eq(from("auto", word), SB_SHARD_ENV_ERROR);
    ck_assert_ptr_nonnull(strstr(msg, "SLURM_ARRAY_TASK_ID=x"));
}
END_TEST

START_TEST(gtest_variables_give_the_shard)
{
    char *env[] = {"GTEST_TOTAL_SHARDS=5", "GTEST_SHARD_INDEX=0", NULL};
    ck_assert_int_eq(from(NULL, env), SB_SHARD_ENV_FOUND);
    ck_assert_int_eq(idx, 0);
    ck_assert_int_eq(cnt, 5);
    char *half[] = {"GTEST_SHARD_INDEX=1", NULL};
    ck_assert_int_eq(from("auto", half), SB_SHARD_ENV_ERROR);
    ck_assert_ptr_nonnull(strstr(msg, "GTEST_SHARD_INDEX is set but GTEST_TOTAL_SHARDS is not"));
    char *past[] = {"GTEST_TOTAL_SHARDS=2", "GTEST_SHARD_INDEX=2", NULL};
    ck_assert_int_eq(from(NULL, past), SB_SHARD_ENV_ERROR);
    /* Slurm's first when both are set */
    char *both[] = {"GTEST_TOTAL_SHARDS=2", "GTEST_SHARD_INDEX=1", "SLURM_ARRAY_TASK_ID=1",
                    "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=3", NULL};
    ck_assert_int_eq(from("auto", both), SB_SHARD_ENV_FOUND);
    ck_assert_int_eq(idx, 0);
    ck_assert_int_eq(cnt, 3);
}
END_TEST

START_TEST(job_completion_index_needs_the_total)
{
    char *env[] = {"JOB_COMPLETION_INDEX=3", NULL};
    ck_assert_int_eq(from("auto/4", env), SB_SHARD_ENV_FOUND);
    ck_assert_int_eq(idx, 3);
    ck_assert_int_eq(cnt, 4);
    /* without a total: no default shard, a note; asked for, an error */
    ck_assert_int_eq(from(NULL, env), SB_SHARD_ENV_NONE);
    ck_assert_ptr_nonnull(strstr(msg, "--shard auto/N"));
    ck_assert_int_eq(from("auto", env), SB_SHARD_ENV_ERROR);
    ck_assert_int_eq(from("auto/3", env), SB_SHARD_ENV_ERROR);
    /* a total that another environment contradicts */
    char *slurm[] = {"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=3",
                     NULL};
    ck_assert_int_eq(from("auto/4", slurm), SB_SHARD_ENV_ERROR);
    ck_assert_int_eq(from("auto/3", slurm), SB_SHARD_ENV_FOUND);
}
END_TEST

START_TEST(no_environment_no_shard)
{
    char *env[] = {"PATH=/bin", "SLURM_JOB_ID=7", NULL};
    ck_assert_int_eq(from(NULL, env), SB_SHARD_ENV_NONE);
    ck_assert_str_eq(msg, "");
    ck_assert_int_eq(idx, -1);
    ck_assert_int_eq(from("auto", env), SB_SHARD_ENV_ERROR);
    ck_assert_ptr_nonnull(strstr(msg, "no shard in the environment"));
    ck_assert_int_eq(from("auto/0", env), SB_SHARD_ENV_BAD_SPEC);
    ck_assert_int_eq(from("automatic", env), SB_SHARD_ENV_BAD_SPEC);
}
END_TEST

START_TEST(options_take_the_shard_and_the_exit_status)
{
    char *env[] = {"GTEST_TOTAL_SHARDS=4", "GTEST_SHARD_INDEX=3", NULL};
    char *half[] = {"GTEST_TOTAL_SHARDS=4", NULL};
    sb_sweep_options o = {0};
    int rc = -1;
    ck_assert(sb_shard_env_options(NULL, env, &o, &rc));
    ck_assert_int_eq(o.shard_index, 3);
    ck_assert_int_eq(o.shard_count, 4);
    ck_assert_int_eq(rc, -1);
    ck_assert(!sb_shard_env_options(NULL, half, &o, &rc));
    ck_assert_int_eq(rc, SB_EXIT_SHARD_ENV);
    ck_assert(!sb_shard_env_options("auto/x", env, &o, &rc));
    ck_assert_int_eq(rc, SB_EXIT_INPUT);
}
END_TEST

Suite *make_shard_env_suite(void)
{
    Suite *s = suite_create("shard_env");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, slurm_array_gives_the_task_of_the_array);
    tcase_add_test(tc, slurm_half_set_or_outside_the_array_is_an_error);
    tcase_add_test(tc, gtest_variables_give_the_shard);
    tcase_add_test(tc, job_completion_index_needs_the_total);
    tcase_add_test(tc, no_environment_no_shard);
    tcase_add_test(tc, options_take_the_shard_and_the_exit_status);
    suite_add_tcase(s, tc);
    return s;
}
