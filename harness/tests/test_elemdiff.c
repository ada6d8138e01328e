/* ULP distances and element diffs on crafted values. The expected numbers
 * are exact: every input is a power of two or a small sum of them, so the
 * differences and ratios are computed without rounding. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "sb_harness.h"

Suite *make_elemdiff_suite(void);

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static float float_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

START_TEST(ulp_across_zero)
{
    ck_assert_int_eq(sb_ulp_distance(0.0f, -0.0f), 0);
    ck_assert_int_eq(sb_ulp_distance(-0.0f, 0.0f), 0);
    float tiny = float_from_bits(1);    /* smallest positive denormal */
    ck_assert_int_eq(sb_ulp_distance(tiny, -tiny), 2);
    ck_assert_int_eq(sb_ulp_distance(tiny, 0.0f), 1);
    ck_assert_int_eq(sb_ulp_distance(-tiny, 0.0f), 1);
    ck_assert_int_eq(sb_ulp_distance(-tiny, -0.0f), 1);
    /* symmetric, and 1 and -1 are twice 1's distance from zero apart */
    int64_t one = sb_ulp_distance(1.0f, 0.0f);
    ck_assert_int_eq(one, 0x3f800000);
    ck_assert_int_eq(sb_ulp_distance(1.0f, -1.0f), 2 * one);
    ck_assert_int_eq(sb_ulp_distance(-1.0f, 1.0f), 2 * one);
}
END_TEST

START_TEST(ulp_neighbours_and_denormals)
{
    ck_assert_int_eq(sb_ulp_distance(1.0f, 1.0f), 0);
    ck_assert_int_eq(sb_ulp_distance(1.0f, nextafterf(1.0f, 2.0f)), 1);
    ck_assert_int_eq(sb_ulp_distance(1.0f, nextafterf(1.0f, 0.0f)), 1);
    ck_assert_int_eq(sb_ulp_distance(1.0f, 2.0f), 1 << 23);
    /* the largest denormal and the smallest normal are neighbours */
    ck_assert_int_eq(sb_ulp_distance(float_from_bits(0x007fffff), FLT_MIN), 1);
    ck_assert_int_eq(sb_ulp_distance(-float_from_bits(0x007fffff), -FLT_MIN), 1);
}
END_TEST

START_TEST(ulp_max_and_infinity)
{
    ck_assert_int_eq(sb_ulp_distance(FLT_MAX, INFINITY), 1);
    ck_assert_int_eq(sb_ulp_distance(-FLT_MAX, -INFINITY), 1);
    ck_assert_int_eq(sb_ulp_distance(INFINITY, INFINITY), 0);
    ck_assert_int_eq(sb_ulp_distance(INFINITY, -INFINITY), 2 * (int64_t)0x7f800000);
}
END_TEST

START_TEST(ulp_nan)
{
    float qnan = float_from_bits(0x7fc00000), other = float_from_bits(0x7fc00001);
    ck_assert_int_eq(sb_ulp_distance(qnan, qnan), 0);   /* same bits */
    ck_assert_int_eq(sb_ulp_distance(qnan, other), INT64_MAX);
    ck_assert_int_eq(sb_ulp_distance(qnan, 1.0f), INT64_MAX);
    ck_assert_int_eq(sb_ulp_distance(0.0f, qnan), INT64_MAX);
    ck_assert_int_eq(sb_ulp_distance(qnan, INFINITY), INT64_MAX);
}
END_TEST

START_TEST(diff_identical)
{
    float a[5] = {1, -2, 0, 3.5f, -0.0f};
    sb_elem_diff d;
    sb_elem_diff_f32(&d, a, a, NULL, 5);
    ck_assert_uint_eq(d.total, 5);
    ck_assert_uint_eq(d.differing, 0);
    ck_assert_uint_eq(d.n_ranges, 0);
    ck_assert(same_double(d.max_abs, 0.0) && same_double(d.max_ulp, 0.0));
    ck_assert(same_double(d.bound_ratio, 0.0));
    ck_assert(d.within_bound);
    ck_assert(!d.bounded);          /* identical bits need no bound */
}
END_TEST

START_TEST(diff_counts_and_ranges)
{
    enum { N = 16 };
    float a[N], b[N], bound[N];
    for (int i = 0; i < N; i++)
        a[i] = b[i] = (float)i, bound[i] = 0.5f;
    /* differing at 2,3,4 | 7 | 15: three ranges */
    b[2] = 2.25f;       /* abs 0.25, ratio 0.5 */
    b[3] = 3.125f;
    b[4] = 4.0f + 0x1p-21f;     /* 1 ulp of 4 */
    b[7] = 7.5f;        /* abs 0.5, ratio 1: still within */
    b[15] = 15.0f - 0x1p-20f;   /* 1 ulp below 15 */
    sb_elem_diff d;
    sb_elem_diff_f32(&d, a, b, bound, N);
    ck_assert_uint_eq(d.total, N);
    ck_assert_uint_eq(d.differing, 5);
    ck_assert_uint_eq(d.first_index, 2);
    ck_assert_uint_eq(d.n_ranges, 3);
    ck_assert_uint_eq(d.ranges[0][0], 2);
    ck_assert_uint_eq(d.ranges[0][1], 5);
    ck_assert_uint_eq(d.ranges[1][0], 7);
    ck_assert_uint_eq(d.ranges[1][1], 8);
    ck_assert_uint_eq(d.ranges[2][0], 15);
    ck_assert_uint_eq(d.ranges[2][1], 16);
    ck_assert(same_double(d.max_abs, 0.5));
    /* 0.25 / 2.25 is the largest relative change */
    ck_assert(same_double(d.max_rel, 0.25 / 2.25));
    /* 2.25 vs 2: 0.25 / ulp(2) = 0.25 / 2^-22 */
    ck_assert(same_double(d.max_ulp, 0x1p20));
    ck_assert(same_double(d.bound_ratio, 1.0));
    ck_assert(d.within_bound);
    ck_assert_uint_eq(d.nonfinite_a, 0);
    ck_assert_uint_eq(d.nonfinite_b, 0);

    b[7] = 7.5f + 0x1p-20f;    /* just past the bound */
    sb_elem_diff_f32(&d, a, b, bound, N);
    ck_assert(d.bound_ratio > 1.0);
    ck_assert(!d.within_bound);
}
END_TEST

START_TEST(diff_many_ranges_keeps_first_8)
{
    enum { N = 40 };
    float a[N], b[N];
    for (int i = 0; i < N; i++) {
        a[i] = 1.0f;
        b[i] = i % 2 ? 1.0f : 2.0f;  /* even indices differ: 20 ranges of one */
    }
    b[N - 1] = 2.0f;    /* joins 38 into [38, 40) */
    sb_elem_diff d;
    sb_elem_diff_f32(&d, a, b, NULL, N);
    ck_assert_uint_eq(d.differing, 21);
    ck_assert_uint_eq(d.n_ranges, 20);
    for (size_t r = 0; r < 8; r++) {
        ck_assert_uint_eq(d.ranges[r][0], 2 * r);
        ck_assert_uint_eq(d.ranges[r][1], 2 * r + 1);
    }
    /* no bound given: none is known, so no ratio, and a change is not within */
    ck_assert(!d.bounded);
    ck_assert(same_double(d.bound_ratio, 0.0));
    ck_assert(!d.within_bound);
}
END_TEST

START_TEST(diff_signed_zero_and_zero_bound)
{
    float a[2] = {0.0f, 1.0f}, b[2] = {-0.0f, 1.0f};
    float bound[2] = {0x1p-24f, 0x1p-24f}, zero[2] = {0, 0};
    sb_elem_diff d;
    sb_elem_diff_f32(&d, a, b, bound, 2);
    ck_assert_uint_eq(d.differing, 1);      /* bits differ ... */
    ck_assert(same_double(d.max_abs, 0.0)); /* ... values do not */
    ck_assert(same_double(d.max_rel, 0.0)); /* 0/0 counts as 0 */
    ck_assert(same_double(d.max_ulp, 0.0));
    ck_assert(same_double(d.bound_ratio, 0.0));
    ck_assert(d.within_bound);
    /* an exact op (a bound of zeros) may not even flip a zero's sign */
    sb_elem_diff_f32(&d, a, b, zero, 2);
    ck_assert(d.bounded);
    ck_assert(isinf(d.bound_ratio));
    ck_assert(!d.within_bound);
}
END_TEST

START_TEST(diff_nonfinite)
{
    float nan = float_from_bits(0x7fc00000);
    float a[4] = {1, nan, 3, INFINITY}, b[4] = {1, 2, INFINITY, INFINITY};
    float bound[4] = {1e30f, 1e30f, 1e30f, 1e30f};
    sb_elem_diff d;
    sb_elem_diff_f32(&d, a, b, bound, 4);
    ck_assert_uint_eq(d.nonfinite_a, 2);
    ck_assert_uint_eq(d.nonfinite_b, 2);
    ck_assert_uint_eq(d.differing, 2);      /* inf == inf bitwise */
    ck_assert_uint_eq(d.first_index, 1);
    ck_assert(isinf(d.max_abs) && isinf(d.max_rel));
    ck_assert(isinf(d.max_ulp));            /* NaN against a number */
    ck_assert(isinf(d.bound_ratio));        /* however large the bound */
    ck_assert(!d.within_bound);

    /* the same NaN bits on both sides is not a difference */
    float c[2] = {nan, 1}, e[2] = {nan, 1};
    sb_elem_diff_f32(&d, c, e, NULL, 2);
    ck_assert_uint_eq(d.differing, 0);
    ck_assert_uint_eq(d.nonfinite_a, 1);
    ck_assert(d.within_bound);
}
END_TEST

START_TEST(diff_i32_exact)
{
    int32_t a[6] = {0, 1, 2, 3, 4, 5}, b[6] = {0, 1, 7, 3, 4, 1};
    sb_elem_diff d;
    sb_elem_diff_i32(&d, a, b, 6);
    ck_assert_uint_eq(d.differing, 2);
    ck_assert_uint_eq(d.first_index, 2);
    ck_assert_uint_eq(d.n_ranges, 2);
    ck_assert(same_double(d.max_abs, 5.0));
    ck_assert(same_double(d.max_rel, 4.0 / 5.0));  /* 5 vs 1; 2 vs 7 is only 5/7 */
    ck_assert(!d.within_bound);
    sb_elem_diff_i32(&d, a, a, 6);
    ck_assert_uint_eq(d.differing, 0);
    ck_assert(d.within_bound);
}
END_TEST

START_TEST(diff_i64_exact)
{
    int64_t a[4] = {0, (int64_t)1 << 40, 2, 3}, b[4] = {0, ((int64_t)1 << 40) + 3, 2, 3};
    sb_tensor ta = {.dtype = SB_DTYPE_I64, .ndim = 1, .dim = {4}, .data = a};
    sb_tensor tb = {.dtype = SB_DTYPE_I64, .ndim = 1, .dim = {4}, .data = b};
    sb_elem_diff d;
    sb_elem_diff_ints(&d, &ta, &tb);
    ck_assert_uint_eq(d.differing, 1);
    ck_assert_uint_eq(d.first_index, 1);
    ck_assert(same_double(d.max_abs, 3.0));
    ck_assert(!d.within_bound);
    sb_elem_diff_ints(&d, &ta, &ta);
    ck_assert_uint_eq(d.differing, 0);
    ck_assert(d.within_bound);
}
END_TEST

Suite *make_elemdiff_suite(void)
{
    Suite *s = suite_create("elemdiff");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ulp_across_zero);
    tcase_add_test(tc, ulp_neighbours_and_denormals);
    tcase_add_test(tc, ulp_max_and_infinity);
    tcase_add_test(tc, ulp_nan);
    tcase_add_test(tc, diff_identical);
    tcase_add_test(tc, diff_counts_and_ranges);
    tcase_add_test(tc, diff_many_ranges_keeps_first_8);
    tcase_add_test(tc, diff_signed_zero_and_zero_bound);
    tcase_add_test(tc, diff_nonfinite);
    tcase_add_test(tc, diff_i32_exact);
    tcase_add_test(tc, diff_i64_exact);
    suite_add_tcase(s, tc);
    return s;
}
