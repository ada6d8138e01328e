/* sb_spawn: how a child ended, its environment, timeouts, stderr capture. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/child.h"
#include "sb_harness.h"

Suite *make_spawn_suite(void);

static sb_child_result spawn_ok(char *const argv[], int threads, double timeout)
{
    sb_child_result r;
    ck_assert_int_eq(sb_spawn(argv, threads, timeout, &r), SB_OK);
    return r;
}

START_TEST(crash_is_signaled_and_what_follows_runs)
{
    char *crash[] = {"/bin/sh", "-c", "kill -SEGV $$", NULL};
    sb_child_result r = spawn_ok(crash, 1, 10);
    ck_assert_int_eq(r.end, SB_CHILD_SIGNALED);
    ck_assert_int_eq(r.signal, SIGSEGV);

    char *ok[] = {"true", NULL};
    r = spawn_ok(ok, 1, 10);
    ck_assert_int_eq(r.end, SB_CHILD_EXITED);
    ck_assert_int_eq(r.exit_code, 0);
}
END_TEST

START_TEST(hang_times_out_and_what_follows_runs)
{
    char *hang[] = {"sleep", "30", NULL};
    sb_child_result r = spawn_ok(hang, 1, 0.5);
    ck_assert_int_eq(r.end, SB_CHILD_TIMED_OUT);
    /* sleep dies of the SIGTERM, before the SIGKILL of the grace period */
    ck_assert(r.seconds >= 0.5);
    ck_assert_int_eq(r.signal, SIGTERM);

    char *exit7[] = {"/bin/sh", "-c", "exit 7", NULL};
    r = spawn_ok(exit7, 1, 10);
    ck_assert_int_eq(r.end, SB_CHILD_EXITED);
    ck_assert_int_eq(r.exit_code, 7);
}
END_TEST

START_TEST(term_ignored_gets_kill)
{
    /* a child that ignores SIGTERM is killed after the grace period (the
     * timeout leaves the shell time to set its trap, loaded or not) */
    char *stubborn[] = {"/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done", NULL};
    sb_child_result r = spawn_ok(stubborn, 1, 2.0);
    ck_assert_int_eq(r.end, SB_CHILD_TIMED_OUT);
    ck_assert_int_eq(r.signal, SIGKILL);
}
END_TEST

/* A job in its own process group (an mpirun and its ranks) dies whole on
 * timeout: the leader's child, which outlives a leader killed alone, too.
 * The leader writes its child's pid to a file and waits; the child ignores
 * SIGTERM, so only the group SIGKILL after the grace period ends it. */
START_TEST(group_timeout_kills_the_whole_job)
{
    char pid_file[] = "/tmp/samebits-test-spawn-XXXXXX";
    int fd = mkstemp(pid_file);
    ck_assert(fd >= 0);
    close(fd);
    char script[256];
    snprintf(script, sizeof script,
             "sh -c \"trap '' TERM; while :; do sleep 0.05; done\" & echo $! > %s; wait",
             pid_file);
    char *job[] = {"/bin/sh", "-c", script, NULL};
    /* the timeout leaves the shell time to write the pid file, loaded or not */
    sb_spawn_options o = {.threads = 1, .timeout_seconds = 2.0, .own_group = true};
    sb_child_result r;
    ck_assert_int_eq(sb_spawn_with(job, &o, &r), SB_OK);
    ck_assert_int_eq(r.end, SB_CHILD_TIMED_OUT);
    FILE *f = fopen(pid_file, "r");
    ck_assert(f != NULL);
    long child = 0;
    ck_assert_int_eq(fscanf(f, "%ld", &child), 1);
    fclose(f);
    unlink(pid_file);
    /* killed by the group SIGKILL, then reaped by init: give it a moment */
    bool gone = false;
    for (int i = 0; i < 1000 && !gone; i++) {
        gone = kill((pid_t)child, 0) != 0 && errno == ESRCH;
        if (!gone)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    ck_assert_msg(gone, "the job's child %ld outlived the timeout", child);
}
END_TEST

START_TEST(environment_reaches_the_child)
{
    setenv("OMP_DYNAMIC", "true", 1);
    char *check3[] = {"/bin/sh", "-c",
                      "test \"$OMP_NUM_THREADS\" = 3 && test \"$OMP_DYNAMIC\" = false", NULL};
    ck_assert_int_eq(spawn_ok(check3, 3, 10).exit_code, 0);
    ck_assert_int_eq(spawn_ok(check3, 5, 10).exit_code, 1);
    unsetenv("OMP_DYNAMIC");
}
END_TEST

START_TEST(proc_bind_dropped_only_when_asked)
{
    setenv("OMP_PROC_BIND", "close", 1);
    char *unset[] = {"/bin/sh", "-c", "test -z \"${OMP_PROC_BIND+set}\"", NULL};
    sb_child_result r;
    sb_spawn_options o = {.threads = 2, .timeout_seconds = 10, .unset_proc_bind = true};
    ck_assert_int_eq(sb_spawn_with(unset, &o, &r), SB_OK);
    ck_assert_int_eq(r.exit_code, 0);
    o.unset_proc_bind = false;
    ck_assert_int_eq(sb_spawn_with(unset, &o, &r), SB_OK);
    ck_assert_int_eq(r.exit_code, 1);
    unsetenv("OMP_PROC_BIND");
}
END_TEST

START_TEST(stderr_captured_to_file)
{
    char dir[] = "/tmp/samebits.test_spawn.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/err", dir);
    char *talk[] = {"/bin/sh", "-c", "echo first >&2; echo last >&2; exit 3", NULL};
    sb_spawn_options o = {.threads = 1, .timeout_seconds = 10, .stderr_path = path};
    sb_child_result r;
    ck_assert_int_eq(sb_spawn_with(talk, &o, &r), SB_OK);
    ck_assert_int_eq(r.exit_code, 3);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char text[64] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    ck_assert_str_eq(text, "first\nlast\n");
    unlink(path);
    rmdir(dir);
}
END_TEST

/* The line a report quotes of a child's stderr is one that says something:
 * not empty, not the rule of dashes that closes mpirun's boxes. */
START_TEST(quoted_line_skips_rules_of_dashes)
{
    char dir[] = "/tmp/samebits.test_spawn.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/err", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("------------------\nORTE was unable to start\n\n  * no route\n"
          "------------------\n\n", f);
    fclose(f);
    char line[64];
    sb_child_stderr_line(line, sizeof line, path, true);
    ck_assert_str_eq(line, "ORTE was unable to start");
    sb_child_stderr_line(line, sizeof line, path, false);
    ck_assert_str_eq(line, "  * no route");
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(missing_program_is_io_error)
{
    char *missing[] = {"/nonexistent/samebits-no-such-program", NULL};
    sb_child_result r;
    ck_assert_int_eq(sb_spawn(missing, 1, 1, &r), SB_ERR_IO);
    ck_assert_int_eq(r.start_errno, ENOENT);
}
END_TEST

Suite *make_spawn_suite(void)
{
    Suite *s = suite_create("spawn");
    TCase *tc = tcase_create("spawn");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, crash_is_signaled_and_what_follows_runs);
    tcase_add_test(tc, hang_times_out_and_what_follows_runs);
    tcase_add_test(tc, term_ignored_gets_kill);
    tcase_add_test(tc, group_timeout_kills_the_whole_job);
    tcase_add_test(tc, environment_reaches_the_child);
    tcase_add_test(tc, proc_bind_dropped_only_when_asked);
    tcase_add_test(tc, stderr_captured_to_file);
    tcase_add_test(tc, quoted_line_skips_rules_of_dashes);
    tcase_add_test(tc, missing_program_is_io_error);
    suite_add_tcase(s, tc);
    return s;
}
