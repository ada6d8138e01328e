/* sb_sweep_case with a stand-in for `samebits run`: a shell script that,
 * by thread count, writes the golden's trace, crashes, hangs, reports an
 * input error, fails, writes a trace with one probe changed, or writes a
 * trace stream and dies. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb_harness.h"
#include "sweep/config.h"

Suite *make_sweep_suite(void);

static char dir[] = "/tmp/samebits.test_sweep.XXXXXX";
static char script[128], good[128], changed[128], work[128];
static sb_case c;
static sb_trace golden;

/* A trace of two probes; `last` is the value of the second one's element 0. */
static void trace_make(sb_trace *t, float last)
{
    float a[4] = {1, 2, 3, 4}, b[4] = {last, 6, 7, 8};
    sb_tensor ta = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = a};
    sb_tensor tb = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = b};
    const char *inputs[] = {"x"};
    sb_probe_point px = {.name = "x", .op = "source", .tensor = &ta};
    sb_probe_point py = {.name = "y", .op = "relu_fwd", .tensor = &tb, .inputs = inputs,
                         .n_inputs = 1};
    sb_trace_init(t);
    sb_trace_header_from_case(&t->header, &c, 1);
    ck_assert_int_eq(sb_trace_add_probe(t, &px), SB_OK);
    ck_assert_int_eq(sb_trace_add_probe(t, &py), SB_OK);
}

static void trace_save(const sb_trace *t, const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sb_trace_write(t, f), SB_OK);
    ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(script, sizeof script, "%s/run.sh", dir);
    snprintf(good, sizeof good, "%s/good.trace", dir);
    snprintf(changed, sizeof changed, "%s/changed.trace", dir);
    snprintf(work, sizeof work, "%s/work", dir);
    ck_assert_int_eq(mkdir(work, 0777), 0);

    memset(&c, 0, sizeof c);
    snprintf(c.path, sizeof c.path, "fake.case");
    snprintf(c.name, sizeof c.name, "fake");
    memset(c.digest, 'a', 32);
    c.kind = SB_CASE_KERNEL;
    c.reference_threads = 1;
    c.repeats = 1;
    /* Long enough for a script that writes a few lines on a loaded machine
     * (scripts 3 and 10 sleep past it) */
    c.timeout_seconds = 2.0;
    for (int t = 0; t <= SB_MAX_THREADS; t++)
        c.expect[t] = SB_VERDICT_IDENTICAL;

    trace_make(&golden, 5);
    trace_save(&golden, good);
    sb_trace t;
    trace_make(&t, 5.5f);
    trace_save(&t, changed);
    sb_trace_free(&t);

    /* argv: run CASE --threads N --trace FILE [--max-steps S | --dump ...].
     * At 1 thread a step limit is refused (none must reach a kernel case or a
     * case of no more steps); at 7 it must be --max-steps 2. */
    FILE *f = fopen(script, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "#!/bin/sh\n"
            "case \"$4\" in\n"
            "1) [ \"$7\" = --max-steps ] && exit 1;"
            " if [ \"$OMP_SCHEDULE\" = dynamic ]; then cp %s \"$6\"; else cp %s \"$6\"; fi ;;\n"
            "2) kill -SEGV $$ ;;\n"
            "3) exec sleep 30 ;;\n"
            "4) echo 'fake.case:3: expected something else' >&2; exit 2 ;;\n"
            "5) echo 'first words' >&2; echo 'last words' >&2; exit 1 ;;\n"
            "6) cp %s \"$6\" ;;\n"
            "7) [ \"$7 $8\" = '--max-steps 2' ] || exit 1; cp %s \"$6\" ;;\n"
            "8) cp %s \"$6\" ;;\n"
            /* the golden's records, an op that starts, then an abort */
            "9) [ \"$7\" = --stream ] || exit 1;"
            " { echo 'samebits-stream 1'; sed -n 7,8p %s; echo 'start 0 z relu_fwd'; } > \"$8\";"
            " echo 'boom.c:3: assertion failed: n %% t == 0' >&2; echo 'later' >&2;"
            " kill -ABRT $$ ;;\n"
            /* a changed record, then a hang in the middle of a line */
            "10) { echo 'samebits-stream 1'; sed -n 7,8p %s; echo 'start 0 z relu_fwd';"
            " printf '0 z relu_fwd f32'; } > \"$8\"; exec sleep 30 ;;\n"
            "esac\n",
            changed, good, changed, good, good, good, changed);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(script, 0755), 0);
}

static void teardown(void)
{
    sb_trace_free(&golden);
    char *rm[] = {"rm", "-rf", dir, NULL};
    sb_child_result r;
    ck_assert_int_eq(sb_spawn(rm, 1, 30, &r), SB_OK);
    ck_assert_int_eq(r.exit_code, 0);
    strcpy(dir + strlen(dir) - 6, "XXXXXX");
}

static sb_status sweep(const int *threads, int n, sb_case_result *r, char *err, size_t errlen)
{
    sb_sweep_options o = {.self_exe = script, .work_dir = work, .threads = threads,
                          .n_threads = n};
    return sb_sweep_case(&c, &golden, &o, r, err, errlen);
}

START_TEST(crash_and_timeout_do_not_stop_the_sweep)
{
    const int threads[] = {1, 2, 3, 8};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 4, &r, err, sizeof err), SB_OK);
    ck_assert_int_eq(r.n_runs, 4);
    ck_assert_int_eq(r.runs[0].verdict, SB_VERDICT_IDENTICAL);
    ck_assert_int_eq(r.runs[1].verdict, SB_VERDICT_CRASH);
    ck_assert_ptr_nonnull(strstr(r.runs[1].message, "signal 11"));
    ck_assert_int_eq(r.runs[2].verdict, SB_VERDICT_TIMEOUT);
    ck_assert_ptr_nonnull(strstr(r.runs[2].message, "timed out"));
    ck_assert_int_eq(r.runs[3].verdict, SB_VERDICT_IDENTICAL);
    ck_assert_int_eq(r.runs[3].threads, 8);
    ck_assert(!r.as_expected);
    sb_case_result_free(&r);
}
END_TEST

START_TEST(failed_child_message_is_its_last_stderr_line)
{
    const int threads[] = {5};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 1, &r, err, sizeof err), SB_OK);
    ck_assert_int_eq(r.runs[0].verdict, SB_VERDICT_CRASH);
    ck_assert_str_eq(r.runs[0].message, "exited with status 1: last words");
    sb_case_result_free(&r);
}
END_TEST

START_TEST(input_error_stops_the_sweep_with_the_childs_message)
{
    const int threads[] = {1, 4, 8};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 3, &r, err, sizeof err), SB_ERR_INPUT);
    ck_assert_int_eq(r.n_runs, 1);
    ck_assert_ptr_nonnull(strstr(err, "fake.case:3: expected something else"));
    sb_case_result_free(&r);
}
END_TEST

/* Two runs at one count would write the same work files. */
START_TEST(repeated_thread_count_is_refused)
{
    const int threads[] = {1, 8, 1};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 3, &r, err, sizeof err), SB_ERR_USAGE);
    ck_assert_str_eq(err, "fake.case: thread count 1 is listed twice");
    ck_assert_int_eq(r.n_runs, 0);
    sb_case_result_free(&r);
}
END_TEST

START_TEST(changed_probe_is_found_and_judged)
{
    /* the locator's re-runs get no dumps from the stand-in, so nothing
     * shows the change is a reordering: it must not pass for one */
    const int threads[] = {6};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 1, &r, err, sizeof err), SB_OK);
    const sb_run_result *x = &r.runs[0];
    ck_assert(x->div.found);
    ck_assert_uint_eq(x->div.index, 1);
    ck_assert_str_eq(x->div.probe, "y");
    ck_assert(x->div.inputs_identical);
    ck_assert_int_eq(x->verdict, SB_VERDICT_BEYOND_BOUND);
    ck_assert_ptr_nonnull(strstr(x->message, "locate:"));
    ck_assert(!r.as_expected);
    sb_case_result_free(&r);
}
END_TEST

START_TEST(repeats_and_expectations)
{
    const int threads[] = {1};
    c.expect[1] = SB_VERDICT_IDENTICAL;
    sb_sweep_options o = {.self_exe = script, .work_dir = work, .threads = threads,
                          .n_threads = 1, .repeats = 3};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sb_sweep_case(&c, &golden, &o, &r, err, sizeof err), SB_OK);
    ck_assert_int_eq(r.n_runs, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(r.runs[i].repeat, i + 1);
        ck_assert_int_eq(r.runs[i].verdict, SB_VERDICT_IDENTICAL);
    }
    ck_assert(r.as_expected);
    sb_case_result_free(&r);
}
END_TEST

/* A training case of 5 steps (5 samples, batch 1, 1 epoch). */
static void train_case_make(void)
{
    c.kind = SB_CASE_TRAIN;
    snprintf(c.model, sizeof c.model, "keras_mnist_cnn");
    c.train_begin = 0;
    c.train_end = 5;
    c.train.batch = 1;
    c.train.epochs = 1;
}

START_TEST(max_steps_truncates_longer_training_cases)
{
    train_case_make();
    ck_assert_int_eq(sb_case_train_steps(&c), 5);
    c.expect[7] = SB_VERDICT_BEYOND_BOUND;
    const int threads[] = {7};
    sb_sweep_options o = {.self_exe = script, .work_dir = work, .threads = threads,
                          .n_threads = 1, .max_steps = 2};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sb_sweep_case(&c, &golden, &o, &r, err, sizeof err), SB_OK);
    ck_assert_msg(r.n_runs == 1 && r.runs[0].verdict == SB_VERDICT_IDENTICAL, "%s",
                  r.runs[0].message);
    ck_assert_int_eq(r.runs[0].max_steps, 2);
    /* identical in the first 2 steps, a divergence expected: not reached,
     * which does not make the case fail */
    ck_assert_int_eq(sb_run_outcome(&r.runs[0]), SB_OUTCOME_NOT_REACHED);
    ck_assert(r.as_expected);
    sb_case_result_free(&r);
}
END_TEST

START_TEST(max_steps_leaves_short_and_kernel_cases_whole)
{
    const int threads[] = {1};
    sb_sweep_options o = {.self_exe = script, .work_dir = work, .threads = threads,
                          .n_threads = 1, .max_steps = 2};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sb_sweep_case(&c, &golden, &o, &r, err, sizeof err), SB_OK);
    ck_assert_int_eq(r.runs[0].verdict, SB_VERDICT_IDENTICAL);
    ck_assert_int_eq(r.runs[0].max_steps, 0);
    sb_case_result_free(&r);

    train_case_make();
    c.train.max_steps = 2;      /* the case's own limit is no more than the sweep's */
    ck_assert_int_eq(sb_case_train_steps(&c), 2);
    ck_assert_int_eq(sb_sweep_case(&c, &golden, &o, &r, err, sizeof err), SB_OK);
    ck_assert_int_eq(r.runs[0].verdict, SB_VERDICT_IDENTICAL);
    ck_assert_int_eq(r.runs[0].max_steps, 0);
    sb_case_result_free(&r);
}
END_TEST

START_TEST(crash_is_located_from_the_stream)
{
    const int threads[] = {9};
    c.expect[9] = SB_VERDICT_CRASH;
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 1, &r, err, sizeof err), SB_OK);
    const sb_run_result *x = &r.runs[0];
    ck_assert_int_eq(x->verdict, SB_VERDICT_CRASH);
    ck_assert(x->crash.streamed);
    ck_assert(x->crash.in_op);
    ck_assert_str_eq(x->crash.op, "relu_fwd");
    ck_assert_str_eq(x->crash.probe, "z");
    ck_assert_str_eq(x->crash.after, "y");
    ck_assert_uint_eq(x->crash.records, 2);
    ck_assert_str_eq(x->crash.how, "killed by signal 6 (Aborted)");
    ck_assert_str_eq(x->crash.stderr_line, "boom.c:3: assertion failed: n % t == 0");
    ck_assert(!x->div.found);   /* what it made was the golden's */
    char where[640];
    sb_crash_describe(where, sizeof where, &x->crash);
    ck_assert_str_eq(where, "killed by signal 6 (Aborted) at step 0 in op relu_fwd (z), "
                            "after probe y");
    ck_assert(r.as_expected);
    sb_case_result_free(&r);
}
END_TEST

START_TEST(timed_out_run_reports_the_divergence_it_had_made)
{
    const int threads[] = {10};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 1, &r, err, sizeof err), SB_OK);
    const sb_run_result *x = &r.runs[0];
    ck_assert_int_eq(x->verdict, SB_VERDICT_TIMEOUT);
    /* the line cut short is left out */
    ck_assert(x->crash.streamed);
    ck_assert_uint_eq(x->crash.records, 2);
    ck_assert(x->crash.in_op);
    ck_assert_str_eq(x->crash.op, "relu_fwd");
    ck_assert(x->div.found);
    ck_assert_str_eq(x->div.probe, "y");
    ck_assert(x->div.inputs_identical);
    ck_assert(!x->div.structural);
    ck_assert(!x->div.have_elements);
    sb_case_result_free(&r);
}
END_TEST

/* A child that dies before its stream exists: the crash is still reported,
 * with nothing to say where. */
START_TEST(crash_without_a_stream_says_so)
{
    const int threads[] = {2};
    sb_case_result r;
    char err[256] = "";
    ck_assert_int_eq(sweep(threads, 1, &r, err, sizeof err), SB_OK);
    const sb_run_result *x = &r.runs[0];
    ck_assert_int_eq(x->verdict, SB_VERDICT_CRASH);
    ck_assert(!x->crash.streamed);
    char where[640];
    sb_crash_describe(where, sizeof where, &x->crash);
    ck_assert_str_eq(where, "killed by signal 11 (Segmentation fault), no trace stream to say "
                            "where");
    sb_case_result_free(&r);
}
END_TEST

/* An environment axis is a configuration per value, its variable set in
 * that configuration's child alone (the stand-in writes a changed trace
 * under OMP_SCHEDULE=dynamic), each named in the reports. */
START_TEST(environment_axis_reaches_each_child)
{
    sb_env_axis e;
    char err[256] = "";
    ck_assert(sb_env_axis_option(&e, "OMP_SCHEDULE=static , dynamic", false, err, sizeof err));
    ck_assert_int_eq(e.n_values, 2);
    ck_assert_str_eq(e.values[0], "static");
    const int threads[] = {1, 6};
    sb_sweep_options o = {.self_exe = script, .work_dir = work, .threads = threads,
                          .n_threads = 2, .env = &e, .n_env = 1};
    sb_case_result r;
    ck_assert_int_eq(sb_sweep_case(&c, &golden, &o, &r, err, sizeof err), SB_OK);
    ck_assert_int_eq(r.n_runs, 4);
    char name[128];
    sb_run_config_name(&r.runs[1], name, sizeof name);
    ck_assert_str_eq(name, "threads=1 OMP_SCHEDULE=dynamic");
    ck_assert_int_eq(r.runs[0].verdict, SB_VERDICT_IDENTICAL);
    ck_assert(r.runs[1].div.found);
    ck_assert_str_eq(r.runs[1].div.probe, "y");
    ck_assert(r.runs[2].div.found);     /* 6 threads: changed whatever the schedule */
    sb_case_result_free(&r);
}
END_TEST

/* The harness's own variables, the isa axis's and bad lists are refused. */
START_TEST(environment_axis_refuses_the_harness_variables)
{
    sb_env_axis e;
    char err[256] = "";
    ck_assert(!sb_env_axis_option(&e, "OMP_NUM_THREADS=1,2", false, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "OMP_NUM_THREADS is set by the harness"));
    ck_assert(!sb_env_axis_option(&e, "OMP_DYNAMIC=true", false, err, sizeof err));
    ck_assert(!sb_env_axis_option(&e, "SAMEBITS_ISA=avx2", false, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "--isa"));
    ck_assert(!sb_env_axis_option(&e, "OMP_SCHEDULE=static,,dynamic", false, err, sizeof err));
    ck_assert(!sb_env_axis_option(&e, "OMP_SCHEDULE", false, err, sizeof err));
    ck_assert(!sb_env_axis_option(&e, "1X=a", false, err, sizeof err));
    ck_assert(sb_env_axis_option(&e, "all", true, err, sizeof err));
    ck_assert_str_eq(e.name, "SAMEBITS_ISA");
}
END_TEST

/* The resume axis is one row of the space: each step a point at every
 * thread count of the golden's computation, after the uninterrupted ones,
 * named and filed by its step and judged by resume_expect; a kernel case
 * (no resume hook) or a step past the run's last is refused. */
START_TEST(resume_axis_is_a_point_per_step_and_thread_count)
{
    sb_case *t = malloc(sizeof *t);
    ck_assert_ptr_nonnull(t);
    char err[256] = "";
    ck_assert_msg(sb_case_load(t, "cases/char_gpt_short.case", err, sizeof err) == SB_OK, "%s",
                  err);
    const int threads[] = {1, 2}, steps[] = {1, 2};
    t->resume_expect = SB_VERDICT_BIT(SB_VERDICT_REORDERING);
    sb_sweep_options o = {.threads = threads, .n_threads = 2, .resume = steps, .n_resume = 2};
    sb_config *pts;
    int n;
    ck_assert_int_eq(sb_configs_make(t, &o, NULL, &pts, &n, err, sizeof err), SB_OK);
    ck_assert_int_eq(n, 6);
    char name[128], stem[256];
    sb_run_config_name(&pts[1].x, name, sizeof name);
    ck_assert_str_eq(name, "threads=2");
    ck_assert_int_eq(pts[1].x.axis, SB_AXIS_THREADS);
    ck_assert_int_eq(pts[1].x.expected_set, t->expect_set[2]);
    sb_run_config_name(&pts[5].x, name, sizeof name);
    ck_assert_str_eq(name, "resume=2 threads=2");
    ck_assert_int_eq(pts[5].x.axis, SB_AXIS_RESUME);
    ck_assert_int_eq(pts[5].x.expected_set, SB_VERDICT_BIT(SB_VERDICT_REORDERING));
    ck_assert(sb_config_stem(stem, sizeof stem, "w", "g", &pts[5].x));
    ck_assert_str_eq(stem, "w/g.k2.t2.r1");
    ck_assert(!sb_config_threads_only(&pts[5].x));
    sb_case *at = malloc(sizeof *at);
    ck_assert_ptr_nonnull(at);
    sb_config_case(at, t, &pts[5].x);
    ck_assert_int_eq(at->run_resume_at, 2);
    sb_config_case(at, t, &pts[1].x);
    ck_assert_int_eq(at->run_resume_at, 0);
    free(at);
    free(pts);
    const int last[] = {3};
    o.resume = last;
    o.n_resume = 1;
    ck_assert_int_eq(sb_configs_make(t, &o, NULL, &pts, &n, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "resume at 3"));
    o.resume = steps;
    ck_assert_int_eq(sb_configs_make(&c, &o, NULL, &pts, &n, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "a kernel case has no steps to resume at"));
    free(t);
}
END_TEST

/* A command case's resume steps are checked against its golden's steps
 * (not without one: a count of the points), a user kernel's against its
 * own; a case with no hook is refused whatever the step. */
START_TEST(resume_steps_of_producers)
{
    sb_case *p = malloc(sizeof *p);
    ck_assert_ptr_nonnull(p);
    char err[256] = "";
    ck_assert_msg(sb_case_load(p, "harness/examples/command/sgd.case", err, sizeof err) == SB_OK,
                  "%s", err);
    sb_trace g;
    ck_assert_msg(sb_case_golden_read(&g, p, err, sizeof err) == SB_OK, "%s", err);
    const int threads[] = {1}, five[] = {5}, six[] = {6};
    sb_sweep_options o = {.threads = threads, .n_threads = 1, .resume = five, .n_resume = 1};
    sb_config *pts;
    int n;
    ck_assert_int_eq(sb_configs_make(p, &o, &g, &pts, &n, err, sizeof err), SB_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(pts[1].x.resume_at, 5);
    free(pts);
    o.resume = six;
    ck_assert_int_eq(sb_configs_make(p, &o, &g, &pts, &n, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "/sgd.case: resume at 6: K must be in 1..5 (the golden's "
                                      "last step)"));
    ck_assert_int_eq(sb_configs_make(p, &o, NULL, &pts, &n, err, sizeof err), SB_OK);
    free(pts);
    /* a step of the case file's [sweep] resume is refused at its line */
    p->resume[1] = 8;
    o.resume = NULL;
    ck_assert_int_eq(sb_configs_make(p, &o, &g, &pts, &n, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "/sgd.case:24: resume at 8: K must be in 1..5"));
    o.resume = six;
    p->command_stop[0] = '\0';
    ck_assert_int_eq(sb_configs_make(p, &o, NULL, &pts, &n, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "resumes through the keys stop and restore"));

    /* a user's kernel: its own steps */
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "k");
    p->kind = SB_CASE_KERNEL;
    p->user = true;
    p->user_steps = 6;
    ck_assert_int_eq(sb_configs_make(p, &o, NULL, &pts, &n, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "k: resume at 6: K must be in 1..5 (the kernel's last "
                                      "step)"));
    o.resume = five;
    ck_assert_int_eq(sb_configs_make(p, &o, NULL, &pts, &n, err, sizeof err), SB_OK);
    free(pts);
    p->user_steps = 0;
    ck_assert_int_eq(sb_configs_make(p, &o, NULL, &pts, &n, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "the kernel has no resume hook"));
    sb_trace_free(&g);
    free(p);
}
END_TEST

Suite *make_sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, crash_and_timeout_do_not_stop_the_sweep);
    tcase_add_test(tc, failed_child_message_is_its_last_stderr_line);
    tcase_add_test(tc, input_error_stops_the_sweep_with_the_childs_message);
    tcase_add_test(tc, repeated_thread_count_is_refused);
    tcase_add_test(tc, changed_probe_is_found_and_judged);
    tcase_add_test(tc, repeats_and_expectations);
    tcase_add_test(tc, max_steps_truncates_longer_training_cases);
    tcase_add_test(tc, max_steps_leaves_short_and_kernel_cases_whole);
    tcase_add_test(tc, crash_is_located_from_the_stream);
    tcase_add_test(tc, timed_out_run_reports_the_divergence_it_had_made);
    tcase_add_test(tc, crash_without_a_stream_says_so);
    tcase_add_test(tc, environment_axis_reaches_each_child);
    tcase_add_test(tc, environment_axis_refuses_the_harness_variables);
    tcase_add_test(tc, resume_axis_is_a_point_per_step_and_thread_count);
    tcase_add_test(tc, resume_steps_of_producers);
    suite_add_tcase(s, tc);
    return s;
}
