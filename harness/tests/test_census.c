/* The census of a crafted sweep: a golden of one source and two outputs (y
 * from the source, z from y), and run traces written where the sweep keeps
 * them. At 1 thread both repeats keep the golden's bits; at 2 threads y is
 * a located reordering in both repeats and z moves downstream of it; at 3
 * threads the repeats' y differ from each other; at 4 the run crashed; at
 * 1 thread with ONEDNN_MAX_CPU_ISA=AVX2 (a column of its own) y reorders. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sb_harness.h"
#include "support/support.h"
#include "sweep/config.h"

static char dir[64];
static sb_case census_case;
static sb_run_result runs[7];
static sb_trace golden;

/* A trace of a (source), y (from a) and z (from y), with y and z made
 * from the given values so that equal values give equal hashes. */
static void trace_make(sb_trace *t, float y_value, float z_value)
{
    static float a[4] = {1, 2, 3, 4};
    float y[4], z[4];
    for (int i = 0; i < 4; i++) {
        y[i] = y_value + (float)i;
        z[i] = z_value + (float)i;
    }
    sb_tensor ta = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = a};
    sb_tensor ty = ta, tz = ta;
    ty.data = y;
    tz.data = z;
    const char *from_a[] = {"a"}, *from_y[] = {"y"};
    sb_probe_point pa = {.name = "a", .op = "source", .tensor = &ta};
    sb_probe_point py = {.name = "y", .op = "op_y", .tensor = &ty, .inputs = from_a,
                         .n_inputs = 1};
    sb_probe_point pz = {.name = "z", .op = "op_z", .tensor = &tz, .inputs = from_y,
                         .n_inputs = 1};
    sb_trace_init(t);
    sb_trace_header_from_case(&t->header, &census_case, 1);
    ck_assert_int_eq(sb_trace_add_probe(t, &pa), SB_OK);
    ck_assert_int_eq(sb_trace_add_probe(t, &py), SB_OK);
    ck_assert_int_eq(sb_trace_add_probe(t, &pz), SB_OK);
}

static void trace_leave(int threads, int repeat, float y_value, float z_value)
{
    sb_trace t;
    trace_make(&t, y_value, z_value);
    char path[256];
    snprintf(path, sizeof path, "%s/census.t%d.r%d.trace", dir, threads, repeat);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sb_trace_write(&t, f), SB_OK);
    ck_assert_int_eq(fclose(f), 0);
    sb_trace_free(&t);
}

/* y (record 1) as a located origin within its bound. */
static void origin_y(sb_run_result *r, double ratio, double ulp)
{
    sb_divergence *d = &r->origins.list[0];
    *d = (sb_divergence){.found = true, .index = 1, .inputs_identical = true,
                         .have_elements = true};
    snprintf(d->probe, sizeof d->probe, "y");
    snprintf(d->op, sizeof d->op, "op_y");
    d->elem = (sb_elem_diff){.total = 4, .differing = 1, .bound_ratio = ratio,
                             .max_ulp = ulp, .within_bound = true, .bounded = true};
    r->origins.count = r->origins.n = r->origins.located = 1;
    r->verdict = SB_VERDICT_REORDERING;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/sb_test_census.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    memset(&census_case, 0, sizeof census_case);
    snprintf(census_case.name, sizeof census_case.name, "census");
    census_case.kind = SB_CASE_KERNEL;
    census_case.family = SB_FAMILY_LOOSE;
    census_case.reference_threads = 1;
    snprintf(census_case.digest, sizeof census_case.digest, "0123456789abcdef0123456789abcdef");
    trace_make(&golden, 10, 20);
    memset(runs, 0, sizeof runs);
    static const int threads[] = {1, 1, 2, 2, 3, 3, 4};
    for (int i = 0; i < 7; i++) {
        runs[i].threads = threads[i];
        runs[i].repeat = i == 6 ? 1 : 1 + i % 2;
    }
    trace_leave(1, 1, 10, 20);
    trace_leave(1, 2, 10, 20);
    origin_y(&runs[2], 0.25, 3);
    origin_y(&runs[3], 0.5, 2);
    trace_leave(2, 1, 11, 21);
    trace_leave(2, 2, 11, 21);
    origin_y(&runs[4], 0.125, 1);
    origin_y(&runs[5], 0.125, 1);
    trace_leave(3, 1, 11, 20);
    trace_leave(3, 2, 12, 20);
    runs[6].verdict = SB_VERDICT_CRASH;
}

static void teardown(void)
{
    sb_trace_free(&golden);
    sb_dir_remove_tree(dir);
}

static char *stream_of(void (*write)(FILE *, const sb_census *), const sb_census *cs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    write(f, cs);
    ck_assert_int_eq(fclose(f), 0);
    return buf;
}

/* The census's JSON, written to <dir>/census.json and read back. */
static json_t *census_json_written(const sb_census *cs)
{
    char path[256];
    snprintf(path, sizeof path, "%s/census.json", dir);
    ck_assert_int_eq(sb_census_json(path, cs, 1), SB_OK);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    ck_assert_ptr_nonnull(root);
    return root;
}

START_TEST(marks_per_output_and_count)
{
    sb_case_result r = {.c = &census_case, .runs = runs, .n_runs = 7};
    sb_census cs;
    ck_assert_int_eq(sb_census_build(&cs, &r, &golden, dir), SB_OK);
    ck_assert_int_eq(cs.n_columns, 4);
    ck_assert_int_eq(cs.n_rows, 2);     /* the source is no output */
    ck_assert_str_eq(cs.rows[0].probe, "y");
    ck_assert_int_eq(cs.rows[0].cell[0], '=');
    ck_assert_int_eq(cs.rows[0].cell[1], 'R');
    ck_assert_int_eq(cs.rows[0].cell[2], 'N');
    ck_assert_int_eq(cs.rows[0].cell[3], 'X');
    ck_assert(cs.rows[0].measured);
    ck_assert(cs.rows[0].worst_bound_ratio > 0.49 && cs.rows[0].worst_bound_ratio < 0.51);
    ck_assert(cs.rows[0].max_ulp > 2.9 && cs.rows[0].max_ulp < 3.1);
    ck_assert_str_eq(cs.rows[1].probe, "z");
    ck_assert_int_eq(cs.rows[1].cell[1], 'd');
    ck_assert_int_eq(cs.rows[1].cell[2], '=');
    ck_assert(!cs.rows[1].measured);

    char *text = stream_of(sb_census_text, &cs);
    ck_assert_ptr_nonnull(strstr(text, "census census (loose, reference 1 thread)\n"));
    ck_assert_ptr_nonnull(strstr(text, "\ny      op_y                   =   R   N   X  0.5"));
    ck_assert_ptr_nonnull(strstr(text, "\nz      op_z                   =   d   =   X  -"));
    free(text);
    char *md = stream_of(sb_census_markdown, &cs);
    ck_assert_ptr_nonnull(strstr(md, "| `y` | op_y | = | R | N | X | 0.5 | 3 |\n"));
    free(md);

    json_t *root = census_json_written(&cs);
    json_t *row = json_array_get(json_object_get(json_array_get(json_object_get(root, "censuses"),
                                                                0), "rows"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "cells"), "3")),
                     "N");
    ck_assert(json_number_value(json_object_get(row, "max_ulp")) > 2.9);
    json_decref(root);
    sb_census_free(&cs);

    sb_census_remove_traces(&r, dir);
    char path[256];
    snprintf(path, sizeof path, "%s/census.t2.r1.trace", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

/* An origin in an op that dumped no bound: 'U', ranked over 'R' within a
 * count, with its ULP measured and no bound ratio (null in the JSON). */
START_TEST(unbounded_mark)
{
    runs[3].origins.list[0].elem.bounded = false;
    runs[3].origins.list[0].elem.within_bound = false;
    runs[3].origins.list[0].elem.bound_ratio = 0.0;
    runs[2].origins.list[0].elem.bounded = false;
    runs[2].origins.list[0].elem.within_bound = false;
    runs[2].origins.list[0].elem.bound_ratio = 0.0;
    runs[2].verdict = runs[3].verdict = SB_VERDICT_UNBOUNDED;
    for (int i = 4; i < 6; i++)     /* 3 threads: the repeats differ, N */
        runs[i].origins.list[0].elem.bounded = false;
    sb_case_result r = {.c = &census_case, .runs = runs, .n_runs = 7};
    sb_census cs;
    ck_assert_int_eq(sb_census_build(&cs, &r, &golden, dir), SB_OK);
    ck_assert_int_eq(cs.rows[0].cell[1], 'U');
    ck_assert(cs.rows[0].measured && !cs.rows[0].bounded);
    char *text = stream_of(sb_census_text, &cs);
    ck_assert_msg(strstr(text, "\ny      op_y                   =   U   N   X  -            3\n") !=
                      NULL, "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "U unbounded (no bound known)"));
    free(text);
    json_t *root = census_json_written(&cs);
    json_t *row = json_array_get(json_object_get(json_array_get(json_object_get(root, "censuses"),
                                                                0), "rows"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "cells"), "2")),
                     "U");
    ck_assert(json_is_null(json_object_get(row, "worst_bound_ratio")));
    json_decref(root);
    sb_census_free(&cs);
}
END_TEST

/* A point of the environment axis is a column of its own, named by its
 * threads and variable, beside the thread count without it. */
START_TEST(environment_column)
{
    sb_run_result both[3] = {runs[0], runs[1], runs[2]};
    snprintf(both[2].env[0], sizeof both[2].env[0], "ONEDNN_MAX_CPU_ISA=AVX2");
    both[2].n_env = 1;
    both[2].threads = 1;
    char stem[1100], path[1200];
    ck_assert(sb_config_stem(stem, sizeof stem, dir, "census", &both[2]));
    snprintf(path, sizeof path, "%s/census.t2.r1.trace", dir);
    char moved[1200];
    snprintf(moved, sizeof moved, "%s.trace", stem);
    ck_assert_int_eq(rename(path, moved), 0);
    sb_case_result r = {.c = &census_case, .runs = both, .n_runs = 3};
    sb_census cs;
    ck_assert_int_eq(sb_census_build(&cs, &r, &golden, dir), SB_OK);
    ck_assert_int_eq(cs.n_columns, 2);
    ck_assert_int_eq(cs.rows[0].cell[0], '=');
    ck_assert_int_eq(cs.rows[0].cell[1], 'R');
    ck_assert_int_eq(cs.rows[1].cell[1], 'd');
    char *md = stream_of(sb_census_markdown, &cs);
    ck_assert_msg(strstr(md, "| census (loose) | op | 1 | 1 ONEDNN_MAX_CPU_ISA=AVX2 |") != NULL,
                  "%s", md);
    free(md);
    char *text = stream_of(sb_census_text, &cs);
    const char *want = "\ny      op_y                   =                         R  0.25";
    ck_assert_msg(strstr(text, want) != NULL, "%s", text);
    free(text);
    json_t *root = census_json_written(&cs);
    json_t *c0 = json_array_get(json_object_get(root, "censuses"), 0);
    json_t *row = json_array_get(json_object_get(c0, "rows"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "cells"),
                                                       "1 ONEDNN_MAX_CPU_ISA=AVX2")), "R");
    ck_assert_int_eq(json_array_size(json_object_get(c0, "threads")), 1);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(c0, "columns"), 1)),
                     "1 ONEDNN_MAX_CPU_ISA=AVX2");
    json_decref(root);
    sb_census_free(&cs);
}
END_TEST

Suite *make_census_suite(void);

Suite *make_census_suite(void)
{
    Suite *s = suite_create("census");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, marks_per_output_and_count);
    tcase_add_test(tc, unbounded_mark);
    tcase_add_test(tc, environment_column);
    suite_add_tcase(s, tc);
    return s;
}
