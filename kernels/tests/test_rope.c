/* RoPE: hand values at angles whose cosine and sine are exact, the table
 * against its definition, the backward as the forward's inverse and
 * transpose, every family and thread count with ref's bits, and every result
 * within its double evaluation's bound. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "op_test.h"
#include "rope/rope.h"
#include "sb_refd.h"

Suite *make_rope_suite(void);

static sb_op_call call_new(sb_op op, sb_rope_shape s)
{
    sb_op_call c = {.op = op, .rope = s};
    op_test_call_alloc(&c);
    op_test_fill_rng(c.in[0].data, sb_tensor_count(&c.in[0]), -2.0f, 2.0f, 7, (uint32_t)op);
    return c;
}

/* Position 0 turns nothing: y = x bit for bit. Pair k = 0 turns by the
 * position p itself (base^0 = 1); at d = 2 every pair is pair 0. With x =
 * (1, 0) at p = 1: (cos 1, sin 1) rounded once to float; and the backward
 * of (cos 1, sin 1)'s rotation of (1, 0) brings back (1, 0) within the
 * table's rounding. */
START_TEST(test_hand_values)
{
    const sb_rope_shape s = {.n = 2, .t = 2, .h = 1, .d = 2, .base = 10000.0f};
    const float x[4] = {0.75f, -3.0f, 1.0f, 0.0f};
    float y[4], back[4];
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        k->rope_fwd(y, x, &s);
        ck_assert(op_test_same_bits(y, x, 2));
        ck_assert(op_test_feq(y[2], (float)cos(1.0)) && op_test_feq(y[3], (float)sin(1.0)));
        k->rope_bwd(back, y, &s);
        ck_assert(op_test_same_bits(back, x, 2));
        ck_assert(fabsf(back[2] - 1.0f) <= 0x1p-23f && fabsf(back[3]) <= 0x1p-23f);
    }
}
END_TEST

/* The table: pair k of position p is (cos, sin) of p base^(-2k/d) in double,
 * rounded once */
START_TEST(test_table)
{
    const sb_rope_shape s = {.n = 1, .t = 50, .h = 1, .d = 8, .base = 500.0f};
    float *cs = sb_rope_table_new(&s);
    for (int p = 0; p < s.t; p++)
        for (int k = 0; k < 4; k++) {
            const double a = p * pow(500.0, -2.0 * k / 8.0);
            ck_assert(op_test_feq(cs[2 * (p * 4 + k)], (float)cos(a)));
            ck_assert(op_test_feq(cs[2 * (p * 4 + k) + 1], (float)sin(a)));
        }
    free(cs);
}
END_TEST

/* The backward is the transpose of the forward: sum dy . fwd(x) equals
 * sum bwd(dy) . x, both in double, within the rounding of the products */
START_TEST(test_bwd_is_transpose)
{
    const sb_rope_shape s = {.n = 40, .t = 7, .h = 3, .d = 6, .base = 10000.0f};
    sb_op_call f = call_new(SB_OP_rope_fwd, s), b = call_new(SB_OP_rope_bwd, s);
    const size_t m = sb_tensor_count(&f.in[0]);
    float *y = op_test_run(&f, SB_FAMILY_DET, 2), *dx = op_test_run(&b, SB_FAMILY_DET, 2);
    const float *x = f.in[0].data, *dy = b.in[0].data;
    double lhs = 0.0, rhs = 0.0, mag = 0.0;
    for (size_t e = 0; e < m; e++) {
        lhs += (double)dy[e] * (double)y[e];
        rhs += (double)dx[e] * (double)x[e];
        mag += fabs((double)dy[e]) * (fabs((double)x[e]) + fabs((double)y[e]));
    }
    ck_assert_msg(fabs(lhs - rhs) <= 8.0 * 0x1p-24 * mag, "%g vs %g", lhs, rhs);
    free(y);
    free(dx);
    op_test_call_free(&f);
    op_test_call_free(&b);
}
END_TEST

static const sb_rope_shape shapes[] = {
    {.n = 1, .t = 1, .h = 1, .d = 2, .base = 10000.0f},
    {.n = 601, .t = 64, .h = 4, .d = 32, .base = 10000.0f},
    {.n = 97, .t = 13, .h = 3, .d = 10, .base = 500000.0f},
};

/* No reduction: det and loose are ref's bits at 1..8 threads, and every
 * result is within its double evaluation's bound */
START_TEST(test_families_and_bound)
{
    const sb_op ops[] = {SB_OP_rope_fwd, SB_OP_rope_bwd};
    for (int o = 0; o < 2; o++) {
        sb_op_call c = call_new(ops[o], shapes[_i]);
        const size_t m = sb_tensor_count(&c.out[0]);
        float *ref = op_test_run(&c, SB_FAMILY_REF, 1);
        for (int threads = 1; threads <= 8; threads++)
            for (int f = SB_FAMILY_DET; f <= SB_FAMILY_LOOSE; f++) {
                float *got = op_test_run(&c, (sb_family)f, threads);
                ck_assert_msg(op_test_same_bits(ref, got, m), "%s %s at %d threads",
                              sb_op_name(ops[o]), sb_family_name((sb_family)f), threads);
                free(got);
            }
        double *value = malloc(m * sizeof *value), *bound = malloc(m * sizeof *bound);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_REF);
        for (size_t e = 0; e < m; e++)
            ck_assert_msg(fabs((double)ref[e] - value[e]) <= bound[e], "%s [%zu]: %a vs %a",
                          sb_op_name(ops[o]), e, (double)ref[e], value[e]);
        free(value);
        free(bound);
        free(ref);
        op_test_call_free(&c);
    }
}
END_TEST

Suite *make_rope_suite(void)
{
    Suite *s = suite_create("rope");
    TCase *tc = tcase_create("rope");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_hand_values);
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_bwd_is_transpose);
    tcase_add_loop_test(tc, test_families_and_bound, 0, sizeof shapes / sizeof shapes[0]);
    suite_add_tcase(s, tc);
    return s;
}
