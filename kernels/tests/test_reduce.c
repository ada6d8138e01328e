/* ReduceMean: hand values exact in every family, det and loose within the
 * bound of ref and det bitwise at 1..8 threads, loose moving with the
 * thread count, every family within its double evaluation's bound, and
 * another order of the sum within the reordering bound. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "sb_kernels.h"
#include "sb_refd.h"

Suite *make_reduce_suite(void);

/* the last axis, the middle of three, all of a long vector (several det
 * chunks), the first, and one element */
static const sb_reduce_shape shapes[] = {
    {.outer = 64, .r = 128, .inner = 1}, {.outer = 3, .r = 700, .inner = 5},
    {.outer = 1, .r = 100003, .inner = 1}, {.outer = 1, .r = 33, .inner = 40},
    {.outer = 1, .r = 1, .inner = 1},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void call_new(sb_op_call *c, sb_reduce_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = SB_OP_reduce_mean;
    c->reduce = s;
    op_test_call_alloc(c);
}

/* x [2][3][2] = (1, 2; 3, 4; 5, 12 | -1, 0; 0.5, 0; 0.5, 3) over the middle
 * axis: (9/3, 18/3; 0, 3/3) = (3, 6; 0, 1), every step exact */
START_TEST(test_hand_values)
{
    const sb_reduce_shape s = {.outer = 2, .r = 3, .inner = 2};
    const float x[12] = {1, 2, 3, 4, 5, 12, -1, 0, 0.5f, 0, 0.5f, 3};
    const float want[4] = {3, 6, 0, 1};
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads++) {
            float y[4];
            omp_set_num_threads(threads);
            sb_kernels((sb_family)f)->reduce_mean(y, x, &s);
            ck_assert_msg(op_test_same_bits(y, want, 4), "%s at %d threads",
                          sb_family_name((sb_family)f), threads);
        }
}
END_TEST

START_TEST(test_families)
{
    sb_op_call c;
    call_new(&c, shapes[_i]);
    op_test_check_families_within_bound(&c, 8);
    op_test_check_det_bitwise(&c, 8);
    op_test_call_free(&c);
}
END_TEST

START_TEST(test_loose_depends_on_threads)
{
    sb_op_call c;
    call_new(&c, shapes[2]);
    op_test_check_loose_moves(&c, 4);
    op_test_call_free(&c);
}
END_TEST

/* every family within the bound of its own order's double evaluation */
START_TEST(test_within_double_bound)
{
    sb_op_call c;
    call_new(&c, shapes[_i]);
    const size_t n = sb_tensor_count(&c.out[0]);
    double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float *got = op_test_run(&c, (sb_family)f, 3);
        sb_refd_eval(value, bound, &c, 0, (sb_family)f);
        for (size_t e = 0; e < n; e++)
            ck_assert_msg(fabs((double)got[e] - value[e]) <= bound[e], "%s [%zu]: %a vs %a (%g)",
                          sb_family_name((sb_family)f), e, (double)got[e], value[e], bound[e]);
        free(got);
    }
    free(value);
    free(bound);
    op_test_call_free(&c);
}
END_TEST

/* The sum in reverse order is another order: within the reordering bound of
 * ref, and different from ref somewhere over 64 outputs of 128 terms. */
START_TEST(test_bound_covers_reverse_order)
{
    sb_op_call c;
    call_new(&c, shapes[0]);
    const sb_reduce_shape *s = &c.reduce;
    float *ref = op_test_run(&c, SB_FAMILY_REF, 1);
    float *bound = op_test_alloc_floats(64);
    const float *x = c.in[0].data;
    sb_reduce_mean_bound(bound, x, s);
    int differ = 0;
    for (int o = 0; o < s->outer; o++) {
        float sum = 0.0f;
        for (int i = s->r - 1; i >= 0; i--)
            sum += x[o * s->r + i];
        const float rev = sum / (float)s->r;
        ck_assert(fabsf(rev - ref[o]) <= bound[o]);
        ck_assert(bound[o] < 1e-5f);
        differ += !op_test_feq(rev, ref[o]);
    }
    ck_assert_int_gt(differ, 0);
    free(ref);
    free(bound);
    op_test_call_free(&c);
}
END_TEST

Suite *make_reduce_suite(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("reduce");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_hand_values);
    tcase_add_loop_test(tc, test_families, 0, N_SHAPES);
    tcase_add_test(tc, test_loose_depends_on_threads);
    tcase_add_loop_test(tc, test_within_double_bound, 0, N_SHAPES);
    tcase_add_test(tc, test_bound_covers_reverse_order);
    suite_add_tcase(s, tc);
    return s;
}
