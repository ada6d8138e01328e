/* Golden files: atomic replacement, refusal of stale or broken goldens. */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb_harness.h"

Suite *make_golden_suite(void);

#define DIGEST "0f1e2d3c4b5a69788796a5b4c3d2e1f0"

static char dir[64];
static char golden[128];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/sb_test_golden.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(golden, sizeof golden, "%s/conv_small.golden", dir);
}

static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void teardown(void)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && unlink(path) != 0)
            rmdir(path);
    }
    closedir(d);
    rmdir(dir);
}

/* A trace of n records of one small tensor, header complete. */
static void build(sb_trace *t, int n, float value)
{
    sb_trace_init(t);
    snprintf(t->header.case_name, sizeof t->header.case_name, "conv_small");
    snprintf(t->header.case_digest, sizeof t->header.case_digest, DIGEST);
    snprintf(t->header.samebits_version, sizeof t->header.samebits_version, "0.1.0");
    snprintf(t->header.family, sizeof t->header.family, "det");
    t->header.threads = 1;
    snprintf(t->header.build, sizeof t->header.build, "test build");
    float v[4] = {value, 1, 2, 3};
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {2, 2}, .data = v};
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "layer%d.fwd.out", i);
        sb_probe_point p = {.step = i, .name = name, .op = "relu_fwd", .tensor = &x};
        ck_assert_int_eq(sb_trace_add_probe(t, &p), SB_OK);
    }
}

static size_t slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, size, f);
    ck_assert_uint_lt(n, size);
    fclose(f);
    return n;
}

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static char before[1 << 16], after[1 << 16];

START_TEST(write_then_read)
{
    sb_trace t, back;
    char err[512];
    build(&t, 3, 0.5f);
    ck_assert_int_eq(sb_golden_write(&t, golden, err, sizeof err), SB_OK);
    ck_assert_int_eq(count_entries(dir), 1);
    ck_assert_int_eq(sb_golden_read(&back, golden, DIGEST, err, sizeof err), SB_OK);
    ck_assert_uint_eq(back.n_records, 3);
    ck_assert(sb_hash_equal(&back.records[2].hash, &t.records[2].hash));
    sb_trace_free(&back);
    /* No digest to check: accepted as is. */
    ck_assert_int_eq(sb_golden_read(&back, golden, NULL, err, sizeof err), SB_OK);
    sb_trace_free(&back);

    /* Replacing an existing golden. */
    sb_trace_free(&t);
    build(&t, 4, 0.25f);
    ck_assert_int_eq(sb_golden_write(&t, golden, err, sizeof err), SB_OK);
    ck_assert_int_eq(sb_golden_read(&back, golden, DIGEST, err, sizeof err), SB_OK);
    ck_assert_uint_eq(back.n_records, 4);
    ck_assert_int_eq(count_entries(dir), 1);
    struct stat st;
    ck_assert_int_eq(stat(golden, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    sb_trace_free(&back);
    sb_trace_free(&t);
}
END_TEST

START_TEST(interrupted_write_keeps_old_golden)
{
    sb_trace old, big;
    char err[512];
    build(&old, 3, 0.5f);
    ck_assert_int_eq(sb_golden_write(&old, golden, err, sizeof err), SB_OK);
    size_t n_before = slurp(golden, before, sizeof before);

    /* The device "fills up" 4 KiB into the new file: RLIMIT_FSIZE makes every
     * write past it fail with EFBIG (SIGXFSZ ignored), as a full disk would
     * with ENOSPC. The new golden is about 20 KiB. */
    build(&big, 300, 0.75f);
    struct rlimit saved, small;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small = saved;
    small.rlim_cur = 4096;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    sb_status st = sb_golden_write(&big, golden, err, sizeof err);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, old_handler);

    ck_assert_int_eq(st, SB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "the old file left as it was: File too large"));
    size_t n_after = slurp(golden, after, sizeof after);
    ck_assert_uint_eq(n_after, n_before);
    ck_assert(memcmp(before, after, n_before) == 0);
    ck_assert_int_eq(count_entries(dir), 1); /* no temporary file left */

    /* The same write goes through once the device has room. */
    ck_assert_int_eq(sb_golden_write(&big, golden, err, sizeof err), SB_OK);
    sb_trace back;
    ck_assert_int_eq(sb_golden_read(&back, golden, DIGEST, err, sizeof err), SB_OK);
    ck_assert_uint_eq(back.n_records, 300);
    sb_trace_free(&back);
    sb_trace_free(&old);
    sb_trace_free(&big);
}
END_TEST

START_TEST(failed_rename_and_bad_header_leave_no_trace)
{
    sb_trace t;
    char err[512];
    build(&t, 2, 0.5f);
    /* A directory where the golden should be is refused before anything
     * is written. */
    char blocked[160], inside[200];
    snprintf(blocked, sizeof blocked, "%s/blocked.golden", dir);
    ck_assert_int_eq(mkdir(blocked, 0755), 0);
    snprintf(inside, sizeof inside, "%s/keep", blocked);
    write_bytes(inside, "x", 1);
    ck_assert_int_eq(sb_golden_write(&t, blocked, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "is a directory, expected a file"));
    ck_assert_int_eq(count_entries(dir), 1);
    ck_assert_int_eq(count_entries(blocked), 1);
    unlink(inside);
    rmdir(blocked);

    /* An incomplete header is refused before anything is replaced. */
    sb_trace_free(&t);
    build(&t, 0, 0);
    ck_assert_int_eq(sb_golden_write(&t, golden, err, sizeof err), SB_OK);
    size_t n = slurp(golden, before, sizeof before);
    t.header.case_digest[0] = '\0';
    ck_assert_int_eq(sb_golden_write(&t, golden, err, sizeof err), SB_ERR_USAGE);
    ck_assert_uint_eq(slurp(golden, after, sizeof after), n);
    ck_assert(memcmp(before, after, n) == 0);
    ck_assert_int_eq(count_entries(dir), 1);

    /* A directory that does not exist. */
    char nowhere[160];
    snprintf(nowhere, sizeof nowhere, "%s/missing/x.golden", dir);
    ck_assert_int_eq(sb_golden_write(&t, nowhere, err, sizeof err), SB_ERR_IO);
    sb_trace_free(&t);
}
END_TEST

START_TEST(refusals_say_how_to_regenerate)
{
    sb_trace t, back;
    char err[512], prefix[200];
    build(&t, 5, 0.5f);
    ck_assert_int_eq(sb_golden_write(&t, golden, err, sizeof err), SB_OK);
    sb_trace_free(&t);
    size_t n = slurp(golden, before, sizeof before);

    /* The case changed since the golden was made. */
    ck_assert_int_eq(sb_golden_read(&back, golden, "ffffffffffffffffffffffffffffffff", err,
                                    sizeof err), SB_ERR_INPUT);
    snprintf(prefix, sizeof prefix, "%s:3: expected case digest ffff", golden);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(err, "found " DIGEST));
    ck_assert_ptr_nonnull(strstr(err, "`samebits golden conv_small`"));
    ck_assert_uint_eq(back.n_records, 0);
    ck_assert_ptr_null(back.records);

    /* Another format version. */
    before[15] = '9';
    write_bytes(golden, before, n);
    ck_assert_int_eq(sb_golden_read(&back, golden, DIGEST, err, sizeof err), SB_ERR_INPUT);
    snprintf(prefix, sizeof prefix, "%s:1: expected format version 1", golden);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(err, "`samebits golden conv_small`"));
    before[15] = '1';

    /* Truncated mid-line: line 8 (the second record) is cut short. */
    const char *cut = strstr(before, "\n1 layer1.fwd.out");
    ck_assert_ptr_nonnull(cut);
    write_bytes(golden, before, (size_t)(cut - before) + 10);
    ck_assert_int_eq(sb_golden_read(&back, golden, DIGEST, err, sizeof err), SB_ERR_INPUT);
    snprintf(prefix, sizeof prefix, "%s:8: expected a line ending in a newline", golden);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(err, "`samebits golden conv_small`"));

    /* Truncated at a line boundary: the missing end line gives it away. */
    write_bytes(golden, before, (size_t)(cut - before) + 1);
    ck_assert_int_eq(sb_golden_read(&back, golden, DIGEST, err, sizeof err), SB_ERR_INPUT);
    snprintf(prefix, sizeof prefix, "%s:8: expected a record", golden);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(err, "file truncated?"));

    /* No golden at all. */
    unlink(golden);
    ck_assert_int_eq(sb_golden_read(&back, golden, DIGEST, err, sizeof err), SB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    ck_assert_ptr_nonnull(strstr(err, "`samebits golden conv_small`"));

    /* A user's program names its own command. */
    ck_assert_int_eq(sb_golden_read_hinted(&back, golden, DIGEST, "./prog golden conv_small",
                                           err, sizeof err), SB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    ck_assert_msg(strstr(err, "; regenerate it with `./prog golden conv_small`") != NULL, "%s", err);
    ck_assert_ptr_null(strstr(err, "samebits golden"));
}
END_TEST

/* x (an input of the run), then y = OP(x) and z = relu(y): x and y hold
 * x_value and y_value, z holds y_value. */
static void build_op(sb_trace *t, const char *op, float x_value, float y_value)
{
    build(t, 0, 0);
    float xv[2] = {x_value, 1}, yv[2] = {y_value, 1};
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {2}, .data = xv};
    sb_tensor y = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {2}, .data = yv};
    const char *x_in[] = {"x"}, *y_in[] = {"y"};
    sb_probe_point p[] = {
        {.name = "x", .op = "source", .tensor = &x},
        {.name = "y", .op = op, .tensor = &y, .inputs = x_in, .n_inputs = 1},
        {.name = "z", .op = "relu_fwd", .tensor = &y, .inputs = y_in, .n_inputs = 1},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        ck_assert_int_eq(sb_trace_add_probe(t, &p[i]), SB_OK);
}

/* sb_golden_update of t in mode: its status, outcome and line. */
static sb_status update(const sb_trace *t, sb_golden_mode mode, sb_golden_outcome *outcome,
                        char *said, size_t saidlen)
{
    char err[512] = "";
    sb_status st = sb_golden_update(t, golden, mode, outcome, said, saidlen, err, sizeof err);
    if (st != SB_OK)
        snprintf(said, saidlen, "%s", err);
    return st;
}

START_TEST(goldens_change_only_when_asked)
{
    sb_trace old, reordered, bug, input_moved;
    sb_golden_outcome out;
    char said[1024];
    build_op(&old, "dense_fwd", 1, 2);
    build_op(&reordered, "dense_fwd", 1, 2.0000002f);
    build_op(&bug, "relu_fwd", 1, 2.5f);
    build_op(&input_moved, "dense_fwd", 3, 2);

    /* --check of a missing golden: nothing written */
    ck_assert_int_eq(update(&old, SB_GOLDEN_MODE_CHECK, &out, said, sizeof said), SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_CHANGED);
    ck_assert_int_eq(count_entries(dir), 0);
    /* a new golden needs no flag */
    ck_assert_int_eq(update(&old, SB_GOLDEN_MODE_NEW, &out, said, sizeof said), SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_NEW);
    ck_assert_str_eq(said, "new (3 probes)");
    size_t n = slurp(golden, before, sizeof before);

    /* a change: refused without --update, never with --check, each origin named */
    ck_assert_int_eq(update(&reordered, SB_GOLDEN_MODE_NEW, &out, said, sizeof said), SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_CHANGED);
    ck_assert_str_eq(said, "changed: first at step 0 probe y; 1 origin: possible reordering at "
                           "step 0 y (dense_fwd); not written: rewrite it with --update");
    ck_assert_int_eq(update(&reordered, SB_GOLDEN_MODE_CHECK, &out, said, sizeof said), SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_CHANGED);
    ck_assert_ptr_nonnull(strstr(said, "; not written (--check)"));
    /* --update=reordering refuses an op with no reduction and a moved input */
    ck_assert_int_eq(update(&bug, SB_GOLDEN_MODE_REORDERING, &out, said, sizeof said), SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_CHANGED);
    ck_assert_msg(strstr(said, "1 origin: beyond bound at step 0 y (relu_fwd); not written: "
                               "--update=reordering takes reorderings only"), "%s", said);
    ck_assert_int_eq(update(&input_moved, SB_GOLDEN_MODE_REORDERING, &out, said, sizeof said),
                     SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_CHANGED);
    ck_assert_msg(strstr(said, "beyond bound (an input of the run) at step 0 x (source)"), "%s",
                  said);
    ck_assert_uint_eq(slurp(golden, after, sizeof after), n);
    ck_assert(memcmp(before, after, n) == 0);

    /* ... and takes a reordering */
    ck_assert_int_eq(update(&reordered, SB_GOLDEN_MODE_REORDERING, &out, said, sizeof said),
                     SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_UPDATED);
    ck_assert_ptr_nonnull(strstr(said, "; rewritten"));
    ck_assert_int_eq(update(&reordered, SB_GOLDEN_MODE_CHECK, &out, said, sizeof said), SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_UNCHANGED);
    /* --update takes any change */
    ck_assert_int_eq(update(&bug, SB_GOLDEN_MODE_UPDATE, &out, said, sizeof said), SB_OK);
    ck_assert_int_eq(out, SB_GOLDEN_UPDATED);

    /* another case's golden is never rewritten, whatever the mode */
    n = slurp(golden, before, sizeof before);
    snprintf(old.header.case_name, sizeof old.header.case_name, "other_case");
    ck_assert_int_eq(update(&old, SB_GOLDEN_MODE_UPDATE, &out, said, sizeof said), SB_ERR_INPUT);
    ck_assert_msg(strstr(said, "the golden of case conv_small, not of other_case: never "
                               "rewritten"), "%s", said);
    ck_assert_uint_eq(slurp(golden, after, sizeof after), n);
    ck_assert(memcmp(before, after, n) == 0);
    ck_assert_int_eq(count_entries(dir), 1);
    sb_trace_free(&old);
    sb_trace_free(&reordered);
    sb_trace_free(&bug);
    sb_trace_free(&input_moved);
}
END_TEST

Suite *make_golden_suite(void)
{
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("golden");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, write_then_read);
    tcase_add_test(tc, interrupted_write_keeps_old_golden);
    tcase_add_test(tc, failed_rename_and_bad_header_leave_no_trace);
    tcase_add_test(tc, refusals_say_how_to_regenerate);
    tcase_add_test(tc, goldens_change_only_when_asked);
    suite_add_tcase(s, tc);
    return s;
}
