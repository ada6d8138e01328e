/* sb_locate with a stand-in for `samebits run`: a shell script that records
 * its arguments and environment (and its thread count in <root>/calls) and
 * copies the trace and dumps prepared for its thread count. That exercises the argv, the work directories, reading
 * the traces and .npy dumps, the element diff and the not-repeatable check,
 * without depending on any kernel. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb_harness.h"

Suite *make_locate_suite(void);

enum { WIDTH = 8 };

static char root[64];
static char fake[128];
static sb_case c;

static const char fake_script[] =
    "#!/bin/sh\n"
    "args=\"$*\"\n"
    "while [ $# -gt 0 ]; do\n"
    "  case \"$1\" in\n"
    "  --threads) t=$2 ;;\n"
    "  --trace) trace=$2 ;;\n"
    "  --dump-dir) dir=$2 ;;\n"
    "  esac\n"
    "  shift\n"
    "done\n"
    "echo \"$t\" >> \"$(dirname \"$0\")/calls\"\n"
    "fx=\"$(dirname \"$0\")/fx/$t\"\n"
    "mkdir -p \"$dir/0\" && cp \"$fx/run.trace\" \"$trace\" && cp \"$fx\"/*.npy \"$dir/0/\" || exit 3\n"
    "printf '%s\\n%s\\n' \"$args\" \"$OMP_NUM_THREADS\" > \"$dir/args\"\n";

static void path_join(char *out, size_t len, const char *a, const char *b)
{
    snprintf(out, len, "%s/%s", a, b);
}

static void npy_put(const char *dir, const char *name, float *data)
{
    char p[512];
    path_join(p, sizeof p, dir, name);
    sb_tensor t = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {WIDTH}, .data = data};
    ck_assert_int_eq(sb_npy_write(p, &t), SB_OK);
}

/* The trace and dumps of a configuration whose op output is `y` (the
 * source x and the bound are the same everywhere). */
static void fixture_make(sb_trace *trace, int threads, float *y)
{
    static float x[WIDTH] = {1, 2, 3, 4, 5, 6, 7, 8};
    float bound[WIDTH];
    for (int i = 0; i < WIDTH; i++)
        bound[i] = 0x1p-19f;    /* 4 ulps of values in [4, 8) */
    static const char *const in[] = {"x"};
    sb_tensor tx = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {WIDTH}, .data = x};
    sb_tensor ty = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {WIDTH}, .data = y};
    sb_probe_point px = {.name = "x", .op = "source", .tensor = &tx};
    sb_probe_point py = {.name = "y", .op = "dense_fwd", .tensor = &ty, .inputs = in,
                         .n_inputs = 1};
    sb_trace_init(trace);
    sb_trace_header_from_case(&trace->header, &c, threads);
    ck_assert_int_eq(sb_trace_add_probe(trace, &px), SB_OK);
    ck_assert_int_eq(sb_trace_add_probe(trace, &py), SB_OK);

    char dir[256], sub[16], p[512];
    snprintf(sub, sizeof sub, "fx/%d", threads);
    path_join(dir, sizeof dir, root, sub);
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    path_join(p, sizeof p, dir, "run.trace");
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sb_trace_write(trace, f), SB_OK);
    fclose(f);
    npy_put(dir, "y.npy", y);
    npy_put(dir, "y.bound.npy", bound);
}

/* Reference at 1 thread; 4 threads move two elements by 1 and 3 ulps
 * (within the 4-ulp bound); 2 threads move one by 8 ulps (beyond it). */
static sb_trace golden, at4, at2;

static void setup(void)
{
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "locate_test");
    snprintf(c.path, sizeof c.path, "cases/locate_test.case");
    snprintf(c.digest, sizeof c.digest, "000102030405060708090a0b0c0d0e0f");
    c.family = SB_FAMILY_LOOSE;
    c.reference_threads = 1;
    c.timeout_seconds = 60;

    snprintf(root, sizeof root, "/tmp/sb_test_locate.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    char p[256];
    path_join(p, sizeof p, root, "fx");
    ck_assert_int_eq(mkdir(p, 0777), 0);
    path_join(fake, sizeof fake, root, "fake-run");
    FILE *f = fopen(fake, "w");
    ck_assert_ptr_nonnull(f);
    fputs(fake_script, f);
    fclose(f);
    ck_assert_int_eq(chmod(fake, 0755), 0);

    float y1[WIDTH] = {4, 5, 6, 7, 4.5f, 5.5f, 6.5f, 7.5f};
    float y4[WIDTH], y2[WIDTH];
    memcpy(y4, y1, sizeof y1);
    memcpy(y2, y1, sizeof y1);
    y4[2] = 6.0f + 0x1p-21f;        /* 1 ulp */
    y4[6] = 6.5f - 3 * 0x1p-21f;    /* 3 ulps */
    y2[5] = 5.5f + 8 * 0x1p-21f;    /* 8 ulps: twice the bound */
    fixture_make(&golden, 1, y1);
    fixture_make(&at4, 4, y4);
    fixture_make(&at2, 2, y2);
}

static void tree_remove(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        path_join(p, sizeof p, path, e->d_name);
        tree_remove(p);
    }
    closedir(d);
    rmdir(path);
}

static void teardown(void)
{
    sb_trace_free(&golden);
    sb_trace_free(&at4);
    sb_trace_free(&at2);
    tree_remove(root);
}

static void work_dir(char *out, size_t len)
{
    path_join(out, len, root, "work");
}

START_TEST(locate_reordering)
{
    sb_divergence d;
    sb_trace_compare(&golden, &at4, &d);
    ck_assert(d.found && !d.structural && d.inputs_identical);
    ck_assert_uint_eq(d.index, 1);
    char work[256], err[512] = "";
    work_dir(work, sizeof work);
    ck_assert_msg(sb_locate(&c, fake, 4, work, NULL, &d, err, sizeof err) == SB_OK, "%s", err);
    ck_assert(d.have_elements);
    ck_assert(!d.nondeterministic);
    ck_assert_uint_eq(d.elem.total, WIDTH);
    ck_assert_uint_eq(d.elem.differing, 2);
    ck_assert_uint_eq(d.elem.first_index, 2);
    ck_assert_uint_eq(d.elem.n_ranges, 2);
    ck_assert_int_eq((int)d.elem.max_ulp, 3);
    ck_assert(d.elem.within_bound);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_REORDERING);

    /* the child got the documented command line and thread count */
    char p[512], expect[1024], line[1024];
    path_join(p, sizeof p, work, "4/args");
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    snprintf(expect, sizeof expect,
             "run cases/locate_test.case --threads 4 --trace %s/4/run.trace --dump-list"
             " %s/4/dump.list --dump-dir %s/4\n", work, work, work);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, expect);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "4\n");
    fclose(f);
    /* the list named the probe at its step */
    path_join(p, sizeof p, work, "4/dump.list");
    f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "0\ty\n");
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
    /* and the reference re-ran at its own thread count */
    path_join(p, sizeof p, work, "1/0/y.npy");
    ck_assert_int_eq(access(p, R_OK), 0);
}
END_TEST

START_TEST(locate_beyond_bound)
{
    sb_divergence d;
    sb_trace_compare(&golden, &at2, &d);
    char work[256], err[512] = "";
    work_dir(work, sizeof work);
    ck_assert_msg(sb_locate(&c, fake, 2, work, NULL, &d, err, sizeof err) == SB_OK, "%s", err);
    ck_assert(d.have_elements);
    ck_assert_uint_eq(d.elem.differing, 1);
    ck_assert_uint_eq(d.elem.first_index, 5);
    /* 8 ulps of 2^-21 against a bound of 2^-19: exactly 2 */
    ck_assert_int_eq((int)d.elem.bound_ratio, 2);
    ck_assert(!d.elem.within_bound);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
}
END_TEST

/* The reference's re-run dumps no bound for the op (a user's op that says
 * nothing of its sums): the same reordering as locate_reordering is then
 * unbounded, not a reordering nor a bug; an exact op of the kernel list
 * stays beyond-bound without one. */
START_TEST(locate_no_bound_unbounded)
{
    char p[512];
    path_join(p, sizeof p, root, "fx/1/y.bound.npy");
    ck_assert_int_eq(unlink(p), 0);
    sb_divergence d;
    sb_trace_compare(&golden, &at4, &d);
    char work[256], err[512] = "";
    work_dir(work, sizeof work);
    ck_assert_msg(sb_locate(&c, fake, 4, work, NULL, &d, err, sizeof err) == SB_OK, "%s", err);
    ck_assert(d.have_elements);
    ck_assert(!d.elem.bounded);
    ck_assert_uint_eq(d.elem.differing, 2);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_UNBOUNDED);
    char why[512];
    sb_unbounded_text(why, sizeof why, &d);
    ck_assert_msg(strstr(why, "no bound is known for op dense_fwd (step 0 y)") == why, "%s", why);
    snprintf(d.op, sizeof d.op, "relu_fwd");
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
}
END_TEST

static void read_calls(char *out, size_t len)
{
    char p[512];
    path_join(p, sizeof p, root, "calls");
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* A repeat at the reference thread count diverged in the sweep with the
 * bits of 4 threads, but its re-runs give the golden's: no re-run reproduces
 * the run it explains, so nothing is diffed and the configuration is
 * nondeterministic. */
START_TEST(locate_not_reproduced)
{
    sb_divergence d;
    sb_trace_compare(&golden, &at4, &d);   /* whatever the sweep saw */
    char work[256], err[512] = "", p[512], calls[64];
    work_dir(work, sizeof work);
    ck_assert_msg(sb_locate(&c, fake, 1, work, NULL, &d, err, sizeof err) == SB_OK, "%s", err);
    ck_assert(d.nondeterministic);
    ck_assert(!d.reference_unreproduced);
    ck_assert(!d.have_elements);
    ck_assert_int_eq(d.reruns, SB_LOCATE_TRIES);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_NONDETERMINISTIC);
    /* the reference once, then every try of the run's configuration */
    read_calls(calls, sizeof calls);
    ck_assert_str_eq(calls, "1\n1\n1\n1\n");
    /* the two configurations did not share a directory */
    path_join(p, sizeof p, work, "1.again/args");
    ck_assert_int_eq(access(p, R_OK), 0);
}
END_TEST

/* An origin the locator could not diff (its re-runs failed): beyond-bound
 * only for an op that computes every element the same way in any order;
 * for one with a reduction nothing measured it, so it is unbounded. */
START_TEST(unlocated_origin_is_unbounded_unless_exact)
{
    sb_divergence d = {.found = true, .inputs_identical = true, .step = 0};
    snprintf(d.probe, sizeof d.probe, "dense1.fwd.out");
    snprintf(d.op, sizeof d.op, "dense_fwd");
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_UNBOUNDED);
    char why[512];
    sb_unbounded_text(why, sizeof why, &d);
    ck_assert_ptr_nonnull(strstr(why, "re-runs failed"));
    snprintf(d.op, sizeof d.op, "relu_fwd");
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
    d.structural = true;
    snprintf(d.op, sizeof d.op, "dense_fwd");
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
}
END_TEST

/* The reference re-run does not give the golden's hash (a golden of another
 * configuration): nothing is diffed, and the divergence is beyond bound. */
START_TEST(locate_reference_not_reproduced)
{
    sb_divergence d;
    sb_trace_compare(&at2, &at4, &d);       /* "golden" of 2 threads, reference at 1 */
    char work[256], err[512] = "";
    work_dir(work, sizeof work);
    ck_assert_msg(sb_locate(&c, fake, 4, work, NULL, &d, err, sizeof err) == SB_OK, "%s", err);
    ck_assert(d.reference_unreproduced);
    ck_assert(!d.nondeterministic);
    ck_assert(!d.have_elements);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
}
END_TEST


/* Locates of one case at the same record share the reference re-run; a
 * locate at another record makes its own and keeps it in its place. */
START_TEST(locate_reuses_reference)
{
    sb_locate_reference reference = {0};
    sb_divergence d4, d2, d4_again;
    sb_trace_compare(&golden, &at4, &d4);
    sb_trace_compare(&golden, &at2, &d2);
    sb_trace_compare(&golden, &at4, &d4_again);
    char work[256], at[3][300], err[512] = "", calls[64];
    work_dir(work, sizeof work);
    ck_assert_int_eq(mkdir(work, 0777), 0);
    for (int i = 0; i < 3; i++)
        snprintf(at[i], sizeof at[i], "%s/%d", work, i);

    ck_assert_msg(sb_locate(&c, fake, 4, at[0], &reference, &d4, err, sizeof err) == SB_OK,
                  "%s", err);
    ck_assert(reference.made);
    ck_assert_str_eq(reference.work_dir, at[0]);
    ck_assert_msg(sb_locate(&c, fake, 2, at[1], &reference, &d2, err, sizeof err) == SB_OK,
                  "%s", err);
    read_calls(calls, sizeof calls);
    ck_assert_str_eq(calls, "1\n4\n2\n");
    /* the shared reference gave the same element diff as a re-run of its own */
    ck_assert_uint_eq(d2.elem.differing, 1);
    ck_assert_uint_eq(d2.elem.first_index, 5);
    ck_assert_int_eq(sb_divergence_verdict(&d2), SB_VERDICT_BEYOND_BOUND);

    snprintf(reference.probe, sizeof reference.probe, "x");    /* another record */
    ck_assert_msg(sb_locate(&c, fake, 4, at[2], &reference, &d4_again, err, sizeof err) ==
                  SB_OK, "%s", err);
    read_calls(calls, sizeof calls);
    ck_assert_str_eq(calls, "1\n4\n2\n1\n4\n");
    ck_assert_str_eq(reference.work_dir, at[2]);
    ck_assert_str_eq(reference.probe, "y");
    ck_assert_uint_eq(d4_again.elem.differing, 2);
}
END_TEST

START_TEST(locate_child_fails)
{
    sb_divergence d;
    sb_trace_compare(&golden, &at4, &d);
    char work[256], err[512] = "";
    work_dir(work, sizeof work);
    /* no fixture for 3 threads: the stand-in exits with status 3 */
    ck_assert_int_eq(sb_locate(&c, fake, 3, work, NULL, &d, err, sizeof err), SB_ERR_IO);
    ck_assert_msg(strstr(err, "3 threads exited with status 3") != NULL, "%s", err);
    ck_assert(!d.have_elements);
}
END_TEST

START_TEST(locate_refuses_structural)
{
    sb_trace shorter;
    sb_trace_init(&shorter);
    sb_divergence d;
    sb_trace_compare(&golden, &shorter, &d);
    ck_assert(d.found && d.structural);
    char work[256], err[512] = "";
    work_dir(work, sizeof work);
    ck_assert_int_eq(sb_locate(&c, fake, 4, work, NULL, &d, err, sizeof err), SB_ERR_USAGE);
    ck_assert(strstr(err, "cases/locate_test.case:") == err);
}
END_TEST

Suite *make_locate_suite(void)
{
    Suite *s = suite_create("locate");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, locate_reordering);
    tcase_add_test(tc, locate_beyond_bound);
    tcase_add_test(tc, locate_no_bound_unbounded);
    tcase_add_test(tc, locate_not_reproduced);
    tcase_add_test(tc, locate_reference_not_reproduced);
    tcase_add_test(tc, unlocated_origin_is_unbounded_unless_exact);
    tcase_add_test(tc, locate_reuses_reference);
    tcase_add_test(tc, locate_child_fails);
    tcase_add_test(tc, locate_refuses_structural);
    suite_add_tcase(s, tc);
    return s;
}
