/* Checkpoint and resume end to end, through the resume axis's run hook
 * (harness/run/resume.h: two `samebits run` processes, the second restoring
 * the first's checkpoint): a det run resumed at any thread count is the
 * golden, a loose run resumed is its own uninterrupted run at that thread
 * count (a checkpoint must not change what a thread count computes), a
 * cut checkpoint is refused in one line, and the locator re-runs a resumed
 * configuration through the same two processes. The samebits executable
 * is $SB_SAMEBITS. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/judge.h"
#include "run/resume.h"

Suite *make_resume_suite(void);

static char work[] = "/tmp/samebits.resume.XXXXXX";

static const char *samebits(void)
{
    const char *exe = getenv("SB_SAMEBITS");
    ck_assert_msg(exe && exe[0], "SB_SAMEBITS names the samebits executable");
    return exe;
}

static void case_load(sb_case *c, const char *path)
{
    char err[600];
    ck_assert_msg(sb_case_load(c, path, err, sizeof err) == SB_OK, "%s", err);
}

static sb_child_run child(const sb_case *c, int threads, int64_t max_steps, char *trace,
                          char *stderr_path, const char *tag)
{
    snprintf(trace, 1024, "%s/%s.t%d.trace", work, tag, threads);
    snprintf(stderr_path, 1024, "%s/%s.t%d.stderr", work, tag, threads);
    return (sb_child_run){.self_exe = samebits(), .c = c, .threads = threads,
                          .timeout_seconds = 600, .max_steps = max_steps, .trace_path = trace,
                          .stderr_path = stderr_path};
}

/* "resume at `at`" of c at `threads` (at = 0: the run that never stops). */
static void run(sb_trace *t, const sb_case *c, int threads, int64_t at, int64_t max_steps)
{
    char trace[1024], stderr_path[1024], err[600] = "";
    sb_child_run r = child(c, threads, max_steps, trace, stderr_path, at > 0 ? "resumed" : "whole");
    sb_child_result cr;
    sb_status st = at > 0 ? sb_resume_run(&r, at, &cr, t, err, sizeof err)
                          : sb_run_child(&r, &cr, t, err, sizeof err);
    ck_assert_msg(st == SB_OK && cr.end == SB_CHILD_EXITED && cr.exit_code == 0,
                  "%s at %d threads, resume at %lld: %s", c->path, threads, (long long)at, err);
    /* the pair leaves nothing of its own behind: its checkpoint, its
     * processes' traces */
    char left[1100];
    snprintf(left, sizeof left, "%s.ckpt", trace);
    ck_assert_int_ne(access(left, F_OK), 0);
    snprintf(left, sizeof left, "%s.stop", trace);
    ck_assert_int_ne(access(left, F_OK), 0);
    unlink(trace);
    unlink(stderr_path);
}

static void metrics_equal(const sb_trace *a, const sb_trace *b)
{
    ck_assert_int_eq(a->n_metrics, b->n_metrics);
    for (int i = 0; i < a->n_metrics; i++) {
        const sb_epoch_metrics *x = &a->metrics[i], *y = &b->metrics[i];
        ck_assert_int_eq(x->epoch, y->epoch);
        ck_assert_int_eq(x->steps, y->steps);
        /* the same text read back: the same doubles */
        ck_assert(memcmp(&x->train_loss, &y->train_loss, sizeof x->train_loss) == 0);
        ck_assert(memcmp(&x->test_loss, &y->test_loss, sizeof x->test_loss) == 0);
        ck_assert(memcmp(&x->test_accuracy, &y->test_accuracy, sizeof x->test_accuracy) == 0);
    }
}

/* det, both models, resumed at step 2 at 1, 2 and 3 threads: the golden,
 * record for record from step 2 on and as a whole, and its metrics. The
 * first two (2 threads) are tcase "checkpoint"'s, the rest "models"'s. */
static const struct {
    const char *path;
    int threads;
} det_runs[] = {{"cases/char_gpt_short.case", 2},       {"cases/keras_mnist_cnn_short.case", 2},
                {"cases/char_gpt_short.case", 1},       {"cases/char_gpt_short.case", 3},
                {"cases/keras_mnist_cnn_short.case", 1}, {"cases/keras_mnist_cnn_short.case", 3}};
#define N_DET_RUNS ((int)(sizeof det_runs / sizeof det_runs[0]))

START_TEST(det_resumed_is_the_golden)
{
    sb_case c;
    case_load(&c, det_runs[_i].path);
    const int threads = det_runs[_i].threads;
    sb_trace golden, t;
    char err[600];
    ck_assert_msg(sb_case_golden_read(&golden, &c, err, sizeof err) == SB_OK, "%s", err);
    run(&t, &c, threads, 2, 0);
    sb_divergence d;
    sb_trace_compare_from_step(&golden, &t, 2, 0, &d);
    ck_assert_msg(!d.found, "%s at %d threads resumed at 2: step %lld %s", c.path, threads,
                  (long long)d.step, d.probe);
    sb_trace_compare(&golden, &t, &d);
    ck_assert(!d.found);
    metrics_equal(&golden, &t);
    sb_trace_free(&golden);
    sb_trace_free(&t);
}
END_TEST

/* loose, both models (the CNN's seed case cut at 3 steps), at 2 threads:
 * the resumed run is the run that never stopped, bit for bit. */
static const struct {
    const char *path;
    int64_t max_steps;
} loose_cases[] = {{"cases/char_gpt_short_loose.case", 0},
                   {"cases/keras_mnist_cnn_seed_loose.case", 3}};

START_TEST(loose_resumed_is_its_uninterrupted_run)
{
    sb_case c;
    case_load(&c, loose_cases[_i].path);
    sb_trace whole, t;
    run(&whole, &c, 2, 0, loose_cases[_i].max_steps);
    run(&t, &c, 2, 2, loose_cases[_i].max_steps);
    sb_divergence d;
    sb_trace_compare(&whole, &t, &d);
    ck_assert_msg(!d.found, "%s resumed at 2: step %lld %s", c.path, (long long)d.step,
                  d.probe);
    ck_assert_uint_eq(whole.n_records, t.n_records);
    metrics_equal(&whole, &t);
    sb_trace_free(&whole);
    sb_trace_free(&t);
}
END_TEST

/* A checkpoint cut in half: the resuming process exits 2 with one line
 * naming the file. */
START_TEST(cut_checkpoint_is_refused)
{
    sb_case c;
    case_load(&c, "cases/char_gpt_short.case");
    char trace[1024], stderr_path[1024], ckpt[1100], err[600] = "";
    sb_child_run r = child(&c, 1, 0, trace, stderr_path, "cut");
    snprintf(ckpt, sizeof ckpt, "%s/cut.ckpt", work);
    r.checkpoint = ckpt;
    r.stop_at = 2;
    sb_child_result cr;
    ck_assert_int_eq(sb_child_spawn(&r, &cr, err, sizeof err), SB_OK);
    ck_assert(cr.end == SB_CHILD_EXITED && cr.exit_code == 0);
    FILE *f = fopen(ckpt, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    ck_assert_int_gt(size, 1000);
    ck_assert_int_eq(truncate(ckpt, size / 2), 0);
    r.stop_at = 0;
    ck_assert_int_eq(sb_child_spawn(&r, &cr, err, sizeof err), SB_OK);
    ck_assert(cr.end == SB_CHILD_EXITED && cr.exit_code == SB_EXIT_INPUT);
    char first[300], last[300];
    sb_child_stderr_line(first, sizeof first, stderr_path, true);
    sb_child_stderr_line(last, sizeof last, stderr_path, false);
    ck_assert_str_eq(first, last);
    ck_assert_msg(strncmp(first, ckpt, strlen(ckpt)) == 0 && strstr(first, "truncated"),
                  "%s", first);
    unlink(ckpt);
    unlink(stderr_path);
}
END_TEST

/* A resume mutant's divergence, located: the locator's re-run of the run
 * side stops and resumes as the run did, so it reproduces the run's hash
 * (a re-run that never stopped would give the golden's), and its reference
 * re-run is the run that never stopped, which gives the golden's. */
START_TEST(resumed_divergence_is_located)
{
    sb_case c;
    case_load(&c, "cases/mutant_step_counter_unsaved.case");
    c.run_resume_at = 2;
    sb_trace golden, t;
    char err[600];
    ck_assert_msg(sb_case_golden_read(&golden, &c, err, sizeof err) == SB_OK, "%s", err);
    run(&t, &c, 1, 2, 0);
    sb_divergence d;
    sb_trace_compare_from_step(&golden, &t, 2, 0, &d);
    ck_assert(d.found && !d.structural && d.inputs_identical);
    ck_assert_int_eq(d.step, 2);
    ck_assert_str_eq(d.probe, "adamw.step");
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/locate", work);
    ck_assert_msg(sb_locate(&c, samebits(), 1, dir, NULL, &d, err, sizeof err) == SB_OK, "%s",
                  err);
    ck_assert(!d.reference_unreproduced && !d.nondeterministic && d.have_elements);
    ck_assert_uint_eq(d.elem.differing, 1);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
    sb_trace_free(&golden);
    sb_trace_free(&t);
}
END_TEST

static void work_make(void)
{
    ck_assert_ptr_nonnull(mkdtemp(work));
}

static void work_remove(void)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    ck_assert_int_eq(system(cmd), 0);
}

/* Two tcases, each a test of its own (meson.build, CK_RUN_CASE):
 * "checkpoint", the checkpoint code on both models once and its refusals,
 * also under ASan + UBSan; "models", the rest of the thread counts and the
 * loose runs, in the normal build only (under ASan a CNN run costs 35 times
 * its time). */
Suite *make_resume_suite(void)
{
    Suite *s = suite_create("resume");
    TCase *checkpoint = tcase_create("checkpoint"), *models = tcase_create("models");
    TCase *both[] = {checkpoint, models};
    for (int k = 0; k < 2; k++) {
        tcase_add_unchecked_fixture(both[k], work_make, work_remove);
        tcase_set_timeout(both[k], 600);
        suite_add_tcase(s, both[k]);
    }
    tcase_add_loop_test(checkpoint, det_resumed_is_the_golden, 0, 2);
    tcase_add_test(checkpoint, cut_checkpoint_is_refused);
    tcase_add_test(checkpoint, resumed_divergence_is_located);
    tcase_add_loop_test(models, det_resumed_is_the_golden, 2, N_DET_RUNS);
    tcase_add_loop_test(models, loose_resumed_is_its_uninterrupted_run, 0, 2);
    return s;
}
