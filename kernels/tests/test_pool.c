/* Average and max pooling with any window and stride and their gradients:
 * hand values exact in every family (overlapping windows, a stride past the
 * window, a window of the whole plane), the tie and NaN rules of the max,
 * the argmax indices into x, 2x2 at stride 2 with maxpool_fwd's bits, each
 * gradient the forward's transpose, det and loose within the bound of ref
 * and det bitwise at 1..8 threads (the gradients: every family ref's bits),
 * every family within its double evaluation's bound (the indices equal to
 * theirs). */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "sb_kernels.h"
#include "sb_refd.h"

Suite *make_pool_suite(void);

static const sb_op pool_ops[] = {SB_OP_avgpool_fwd, SB_OP_maxpool_window_fwd, SB_OP_avgpool_bwd,
                                 SB_OP_maxpool_window_bwd};
#define N_OPS (sizeof pool_ops / sizeof pool_ops[0])

static const sb_window_shape shapes[] = {
    {.n = 4, .c = 5, .h = 13, .w = 11, .kh = 3, .kw = 3, .sh = 2, .sw = 2},
    {.n = 2, .c = 3, .h = 9, .w = 10, .kh = 2, .kw = 5, .sh = 3, .sw = 1},
    {.n = 3, .c = 2, .h = 7, .w = 7, .kh = 7, .kw = 7, .sh = 1, .sw = 1},
    {.n = 1, .c = 1, .h = 1, .w = 1, .kh = 1, .kw = 1, .sh = 1, .sw = 1},
    {.n = 2, .c = 3, .h = 9, .w = 8, .kh = 3, .kw = 4, .sh = 1, .sw = 1},
    {.n = 1, .c = 1, .h = 40, .w = 33, .kh = 5, .kw = 6, .sh = 2, .sw = 3},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* A 4x5 plane x[i][j] = 5i + j, windows 2x3 at stride (2, 1): outputs 2 x 3,
 * window (a, b) covering rows 2a, 2a+1 and columns b..b+2: its mean is the
 * value at its centre, 5 (2a + 0.5) + b + 1 = 10a + b + 3.5, its max the
 * bottom-right 5 (2a + 1) + b + 2 = 10a + b + 7. Every step exact. */
START_TEST(test_hand_values)
{
    const sb_window_shape s = {.n = 1, .c = 1, .h = 4, .w = 5, .kh = 2, .kw = 3, .sh = 2, .sw = 1};
    float x[20];
    for (int i = 0; i < 20; i++)
        x[i] = (float)i;
    float want_mean[6], want_max[6];
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++) {
            want_mean[a * 3 + b] = (float)(10 * a + b) + 3.5f;
            want_max[a * 3 + b] = (float)(10 * a + b + 7);
        }
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads += 2) {
            float mean[6], max[6];
            omp_set_num_threads(threads);
            sb_kernels((sb_family)f)->avgpool_fwd(mean, x, &s);
            sb_kernels((sb_family)f)->maxpool_window_fwd(max, x, &s);
            ck_assert(op_test_same_bits(mean, want_mean, 6));
            ck_assert(op_test_same_bits(max, want_max, 6));
        }
}
END_TEST

/* Ties: the first maximum in row-major order keeps its bits (+0 before -0
 * gives +0, -0 before +0 gives -0); a NaN anywhere in a window makes it NaN. */
START_TEST(test_ties_and_nan)
{
    const sb_window_shape s = {.n = 1, .c = 3, .h = 2, .w = 2, .kh = 2, .kw = 2, .sh = 1, .sw = 1};
    const float x[12] = {0.0f, -0.0f, -1, -2, -0.0f, 0.0f, -1, -2, 1, 2, NAN, 3};
    float y[3];
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernels((sb_family)f)->maxpool_window_fwd(y, x, &s);
        ck_assert(op_test_same_bits(&y[0], &(float){0.0f}, 1));
        ck_assert(op_test_same_bits(&y[1], &(float){-0.0f}, 1));
        ck_assert(isnan(y[2]));
    }
}
END_TEST

/* The argmax's index into the whole of x (ONNX's MaxPool Indices): two
 * planes of the 4x5 plane above, the second 20 elements on, every maximum
 * at its window's bottom-right, 5 (2a + 1) + b + 2 in its plane; a tie
 * keeps the first, a NaN window points at its first NaN. */
START_TEST(test_indices)
{
    const sb_window_shape s = {.n = 1, .c = 2, .h = 4, .w = 5, .kh = 2, .kw = 3, .sh = 2, .sw = 1};
    float x[40];
    for (int i = 0; i < 40; i++)
        x[i] = (float)i;
    int32_t want[12];
    for (int plane = 0; plane < 2; plane++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 3; b++)
                want[plane * 6 + a * 3 + b] = plane * 20 + 5 * (2 * a + 1) + b + 2;
    const sb_window_shape t = {.n = 2, .c = 1, .h = 2, .w = 2, .kh = 2, .kw = 2, .sh = 1, .sw = 1};
    const float ties[8] = {1, 3, 3, 0, -1, NAN, 2, NAN};
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads += 2) {
            int32_t got[12], tie[2];
            omp_set_num_threads(threads);
            sb_kernels((sb_family)f)->maxpool_window_indices(got, x, &s);
            ck_assert(memcmp(got, want, sizeof want) == 0);
            sb_kernels((sb_family)f)->maxpool_window_indices(tie, ties, &t);
            ck_assert_int_eq(tie[0], 1);
            ck_assert_int_eq(tie[1], 5);
        }
}
END_TEST

/* The indices point at the maxima: x[index] has the max pool's bits, at
 * every shape, in every family and thread count. */
START_TEST(test_indices_point_at_max)
{
    sb_op_call c;
    memset(&c, 0, sizeof c);
    c.op = SB_OP_maxpool_window_fwd;
    c.window = shapes[_i];
    op_test_call_alloc(&c);
    const float *x = c.in[0].data;
    const size_t n = sb_tensor_count(&c.out[0]);
    float *max = op_test_run(&c, SB_FAMILY_REF, 1), *at = op_test_alloc_floats(n);
    int32_t *idx = malloc(n * sizeof *idx);
    ck_assert_ptr_nonnull(idx);
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 8; threads++) {
            omp_set_num_threads(threads);
            sb_kernels((sb_family)f)->maxpool_window_indices(idx, x, &c.window);
            for (size_t e = 0; e < n; e++) {
                ck_assert(idx[e] >= 0 && (size_t)idx[e] < sb_tensor_count(&c.in[0]));
                at[e] = x[idx[e]];
            }
            ck_assert(op_test_same_bits(at, max, n));
        }
    free(max), free(at), free(idx);
    op_test_call_free(&c);
}
END_TEST

/* The double evaluation of the indices (the numerics mode's) is det's
 * indices exactly, bound 0, at every shape, and on the ties and NaNs of
 * test_indices: the first maximum, the first NaN. */
static void expect_double_indices(float *x, const sb_window_shape *s, const int32_t *want)
{
    sb_op_call c;
    memset(&c, 0, sizeof c);
    c.op = SB_OP_maxpool_window_indices;
    c.window = *s;
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    c.in[0].data = x;
    const size_t n = sb_tensor_count(&c.out[0]);
    double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
    ck_assert(value && bound);
    sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
    for (size_t e = 0; e < n; e++) {
        const double w = (double)want[e];
        ck_assert_msg(!(value[e] < w) && !(value[e] > w), "[%zu]: %g vs %d", e, value[e], want[e]);
        ck_assert(!(bound[e] > 0.0) && !(bound[e] < 0.0));
    }
    free(value), free(bound);
}

START_TEST(test_indices_double)
{
    const sb_window_shape t = {.n = 2, .c = 1, .h = 2, .w = 2, .kh = 2, .kw = 2, .sh = 1, .sw = 1};
    float ties[8] = {1, 3, 3, 0, -1, NAN, 2, NAN};
    expect_double_indices(ties, &t, (const int32_t[]){1, 5});
    sb_op_call c;
    memset(&c, 0, sizeof c);
    c.op = SB_OP_maxpool_window_indices;
    c.window = shapes[_i];
    op_test_call_alloc(&c);
    omp_set_num_threads(3);
    sb_kernels(SB_FAMILY_DET)->maxpool_window_indices(c.out[0].data, c.in[0].data, &c.window);
    expect_double_indices(c.in[0].data, &c.window, c.out[0].data);
    op_test_call_free(&c);
}
END_TEST

/* 2x2 windows at stride 2 are maxpool_fwd's: the same bits */
START_TEST(test_two_by_two_is_maxpool)
{
    const sb_pool_shape ps = {.n = 2, .c = 3, .h = 9, .w = 8};
    const sb_window_shape ws = {.n = 2, .c = 3, .h = 9, .w = 8, .kh = 2, .kw = 2, .sh = 2, .sw = 2};
    const size_t n = 2 * 3 * 9 * 8, out = 2 * 3 * 4 * 4;
    float *x = op_test_alloc_floats(n), *a = op_test_alloc_floats(out), *b = op_test_alloc_floats(out);
    op_test_fill_rng(x, n, -1.0f, 1.0f, 9, 0);
    sb_kernels(SB_FAMILY_DET)->maxpool_fwd(a, x, &ps);
    sb_kernels(SB_FAMILY_DET)->maxpool_window_fwd(b, x, &ws);
    ck_assert(op_test_same_bits(a, b, out));
    free(x), free(a), free(b);
}
END_TEST

/* A 3x3 plane under 2x2 windows at stride 1 (four windows, the centre in
 * all four) with dy = (1, 2, 3, 4): the average's terms dy / 4 = 0.25 ..
 * 1 added into each window's elements, and with x's maximum at the centre
 * (a 9 among 0s and 1s) the max's four terms all into the centre, 10.
 * Then 2x2 windows at stride 3 over 5x5: row and column 2 lie in no
 * window, +0. Every step exact. */
START_TEST(test_grad_hand_values)
{
    const sb_window_shape s = {.n = 1, .c = 1, .h = 3, .w = 3, .kh = 2, .kw = 2, .sh = 1, .sw = 1};
    const float dy[4] = {1, 2, 3, 4};
    const float x[9] = {0, 1, 0, 1, 9, 1, 0, 1, 0};
    const float want_avg[9] = {0.25f, 0.75f, 0.5f, 1.0f, 2.5f, 1.5f, 0.75f, 1.75f, 1.0f};
    const float want_max[9] = {0, 0, 0, 0, 10, 0, 0, 0, 0};
    const sb_window_shape gap = {.n = 1, .c = 1, .h = 5, .w = 5, .kh = 2, .kw = 2, .sh = 3, .sw = 3};
    float want_gap[25] = {0};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int r = 0; r < 2; r++)
                for (int t = 0; t < 2; t++)
                    want_gap[(3 * a + r) * 5 + 3 * b + t] = dy[a * 2 + b] / 4.0f;
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads += 2) {
            float avg[9], max[9], g[25];
            omp_set_num_threads(threads);
            sb_kernels((sb_family)f)->avgpool_bwd(avg, dy, &s);
            sb_kernels((sb_family)f)->maxpool_window_bwd(max, dy, x, &s);
            sb_kernels((sb_family)f)->avgpool_bwd(g, dy, &gap);
            ck_assert(op_test_same_bits(avg, want_avg, 9));
            ck_assert(op_test_same_bits(max, want_max, 9));
            ck_assert(op_test_same_bits(g, want_gap, 25));
        }
}
END_TEST

/* Each gradient is its forward's transpose, the max's at the argmax of x:
 * sum dy y = sum dx x, in double from the float outputs, within the
 * roundings of both sides (each term of either sum is off by at most 2u
 * of its magnitude, plus the gradient's sums: gamma of the most windows an
 * element is in, kh kw). Checked in det at 3 threads. */
START_TEST(test_grad_is_transpose)
{
    const sb_window_shape s = shapes[_i];
    sb_op_call fwd;
    memset(&fwd, 0, sizeof fwd);
    fwd.window = s;
    for (int max = 0; max < 2; max++) {
        fwd.op = max ? SB_OP_maxpool_window_fwd : SB_OP_avgpool_fwd;
        op_test_call_alloc(&fwd);
        const float *x = fwd.in[0].data;
        const size_t nx = sb_tensor_count(&fwd.in[0]), ny = sb_tensor_count(&fwd.out[0]);
        float *y = op_test_run(&fwd, SB_FAMILY_DET, 3);
        float *dy = op_test_alloc_floats(ny), *dx = op_test_alloc_floats(nx);
        op_test_fill_rng(dy, ny, -1.0f, 1.0f, 5, (uint32_t)_i);
        omp_set_num_threads(3);
        if (max)
            sb_kernels(SB_FAMILY_DET)->maxpool_window_bwd(dx, dy, x, &s);
        else
            sb_kernels(SB_FAMILY_DET)->avgpool_bwd(dx, dy, &s);
        double lhs = 0.0, rhs = 0.0, mag = 0.0;
        for (size_t o = 0; o < ny; o++) {
            lhs += (double)dy[o] * (double)y[o];
            mag += fabs((double)dy[o] * (double)y[o]);
        }
        for (size_t e = 0; e < nx; e++)
            rhs += (double)dx[e] * (double)x[e];
        const double tol = (4.0 * 0x1p-24 + sb_gamma((double)(s.kh * s.kw))) * 2.0 * mag;
        ck_assert_msg(fabs(lhs - rhs) <= tol, "%s shape %d: %g vs %g (tolerance %g)",
                      max ? "max" : "average", _i, lhs, rhs, tol);
        free(y), free(dy), free(dx);
        op_test_call_free(&fwd);
    }
}
END_TEST

/* The gradients' loose scatter (planes in parallel) and det's gather give
 * ref's bits at every thread count, overlapping windows included */
START_TEST(test_grad_families_are_ref)
{
    for (size_t o = 2; o < N_OPS; o++) {
        sb_op_call c;
        memset(&c, 0, sizeof c);
        c.op = pool_ops[o];
        c.window = shapes[_i];
        op_test_call_alloc(&c);
        float *want = op_test_run(&c, SB_FAMILY_REF, 1);
        const size_t n = sb_tensor_count(&c.out[0]);
        for (int f = 0; f < SB_FAMILY_COUNT; f++)
            for (int threads = 1; threads <= 8; threads++) {
                float *got = op_test_run(&c, (sb_family)f, threads);
                ck_assert_msg(op_test_same_bits(got, want, n), "%s %s at %d threads",
                              sb_op_name(c.op), sb_family_name((sb_family)f), threads);
                free(got);
            }
        free(want);
        op_test_call_free(&c);
    }
}
END_TEST

static void call_new(sb_op_call *c, sb_op op, sb_window_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->window = s;
    op_test_call_alloc(c);
}

START_TEST(test_families)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, pool_ops[o], shapes[_i]);
        op_test_check_families_within_bound(&c, 8);
        op_test_check_det_bitwise(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST

START_TEST(test_within_double_bound)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, pool_ops[o], shapes[_i]);
        const size_t n = sb_tensor_count(&c.out[0]);
        double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
        float *got = op_test_run(&c, SB_FAMILY_DET, 3);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
        for (size_t e = 0; e < n; e++)
            ck_assert_msg(fabs((double)got[e] - value[e]) <= bound[e], "%s [%zu]: %a vs %a",
                          sb_op_name(pool_ops[o]), e, (double)got[e], value[e]);
        free(got);
        free(value);
        free(bound);
        op_test_call_free(&c);
    }
}
END_TEST

Suite *make_pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_hand_values);
    tcase_add_test(tc, test_ties_and_nan);
    tcase_add_test(tc, test_two_by_two_is_maxpool);
    tcase_add_test(tc, test_indices);
    tcase_add_loop_test(tc, test_indices_point_at_max, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_indices_double, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_families, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_within_double_bound, 0, N_SHAPES);
    tcase_add_test(tc, test_grad_hand_values);
    tcase_add_loop_test(tc, test_grad_is_transpose, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_grad_families_are_ref, 0, N_SHAPES);
    suite_add_tcase(s, tc);
    return s;
}
