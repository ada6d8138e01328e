/* The precision test (harness/judge/precision.h, kernels/sb_refd_floor.h):
 * float sums of one set of terms in many orders are never called a
 * precision loss, whatever order the golden took; the same sums with their
 * partials rounded to fp16 are. The sums are the real op dense_bwd_bias
 * (db[o] = sum over rows of dy[r][o]), evaluated in double, with its floor,
 * by the same functions the locator's re-runs use. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/precision.h"
#include "sb_refd.h"
#include "sb_refd_floor.h"

Suite *make_precision_suite(void);

enum { COLS = 32, MAX_ROWS = 8192 };

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
    return (double)(next(s) >> 11) * 0x1p-53;
}

/* The kinds of data: centred, one-signed, equal terms (whose serial sum
 * rounds the same way step after step), a large mean with a little spread,
 * and magnitudes over 2^29 of random sign. */
enum { DATA_CENTRED, DATA_POSITIVE, DATA_EQUAL, DATA_OFFSET, DATA_WIDE, DATA_KINDS };

static float draw(int kind, uint64_t *s)
{
    switch (kind) {
    case DATA_CENTRED: return (float)(2.0 * uniform(s) - 1.0);
    case DATA_POSITIVE: return (float)uniform(s);
    case DATA_EQUAL: return 0.1f;
    case DATA_OFFSET: return (float)(1.0 + 1e-3 * uniform(s));
    default: {
        double m = exp(20.0 * uniform(s) - 10.0);
        return (float)(next(s) & 1 ? m : -m);
    }
    }
}

/* The float orders of one column's sum x[0..n) (stride COLS). */
enum { ORDER_FORWARD, ORDER_REVERSE, ORDER_PAIRWISE, ORDER_CHUNKS, ORDER_LANES, ORDER_BY_SIGN,
       ORDERS };

static float pairwise(const float *x, int n)
{
    if (n == 1)
        return x[0];
    if (n == 0)
        return 0.0f;
    /* x is strided: the halves of a strided run */
    int h = n / 2;
    return pairwise(x, h) + pairwise(x + (size_t)h * COLS, n - h);
}

static float column_sum(const float *x, int n, int order, int parts)
{
    float s = 0.0f;
    switch (order) {
    case ORDER_FORWARD:
        for (int r = 0; r < n; r++)
            s += x[(size_t)r * COLS];
        return s;
    case ORDER_REVERSE:
        for (int r = n - 1; r >= 0; r--)
            s += x[(size_t)r * COLS];
        return s;
    case ORDER_PAIRWISE:
        return pairwise(x, n);
    case ORDER_CHUNKS:  /* one contiguous chunk per thread, partials in thread order */
        for (int t = 0; t < parts; t++) {
            float p = 0.0f;
            for (int r = n * t / parts; r < n * (t + 1) / parts; r++)
                p += x[(size_t)r * COLS];
            s += p;
        }
        return s;
    case ORDER_LANES:   /* rows dealt round-robin to lanes, lanes added in order */
        for (int t = 0; t < parts; t++) {
            float p = 0.0f;
            for (int r = t; r < n; r += parts)
                p += x[(size_t)r * COLS];
            s += p;
        }
        return s;
    default:            /* every positive term first, then every negative one */
        for (int r = 0; r < n; r++)
            s += x[(size_t)r * COLS] > 0.0f ? x[(size_t)r * COLS] : 0.0f;
        for (int r = 0; r < n; r++)
            s += x[(size_t)r * COLS] < 0.0f ? x[(size_t)r * COLS] : 0.0f;
        return s;
    }
}

/* x rounded to nearest (ties to even) to fp16's 11 significant bits; the
 * sums here stay inside fp16's range. */
static float round_fp16(float x)
{
    int e;
    float m = frexpf(x, &e);
    return ldexpf(rintf(m * 2048.0f) / 2048.0f, e);
}

/* The same chunks as ORDER_CHUNKS, each partial rounded to fp16 before the
 * partials are added: a reduced-precision split-K workspace. */
static float column_sum_fp16_partials(const float *x, int n, int parts)
{
    float s = 0.0f;
    for (int t = 0; t < parts; t++) {
        float p = 0.0f;
        for (int r = n * t / parts; r < n * (t + 1) / parts; r++)
            p += x[(size_t)r * COLS];
        s += round_fp16(p);
    }
    return s;
}

typedef struct fixture {
    sb_op_call call;
    float *dy;
    float golden[COLS], run[COLS];
    float golden_err[COLS], run_err[COLS], seq_err[COLS], floor[COLS];
} fixture;

static void fixture_fill(fixture *f, int n, int kind, uint64_t seed)
{
    f->call = (sb_op_call){.op = SB_OP_dense_bwd_bias, .dense = {.n = n, .in = 1, .out = COLS}};
    ck_assert_int_eq(sb_op_call_describe(&f->call), SB_OK);
    for (size_t i = 0; i < (size_t)n * COLS; i++)
        f->dy[i] = draw(kind, &seed);
    f->call.in[0].data = f->dy;
}

/* The golden: det's kernel, or the pairwise order. */
static void golden_compute(fixture *f, bool det)
{
    if (det) {
        sb_op_call c = f->call;
        c.out[0].data = f->golden;
        sb_op_call_run(sb_kernels(SB_FAMILY_DET), &c);
    } else {
        for (int o = 0; o < COLS; o++)
            f->golden[o] = pairwise(f->dy + o, f->call.dense.n);
    }
    float seq[COLS], floor[COLS];
    ck_assert(sb_refd_precision_eval(f->golden_err, seq, floor, &f->call, f->golden));
}

static double judged(fixture *f)
{
    ck_assert(sb_refd_precision_eval(f->run_err, f->seq_err, f->floor, &f->call, f->run));
    sb_elem_diff e;
    memset(&e, 0, sizeof e);
    sb_elem_precision(&e, f->golden_err, f->run_err, f->seq_err, f->floor, COLS);
    ck_assert(e.precision_tested);
    return e.precision_ratio;
}

static fixture *fixture_new(void)
{
    fixture *f = calloc(1, sizeof *f);
    ck_assert_ptr_nonnull(f);
    f->dy = malloc((size_t)MAX_ROWS * COLS * sizeof *f->dy);
    ck_assert_ptr_nonnull(f->dy);
    return f;
}

static void fixture_free(fixture *f)
{
    free(f->dy);
    free(f);
}

/* 5 kinds of data x 4 lengths x 4 seeds x 2 goldens x 14 orders: 2240
 * judged tensors, 71680 sums, none flagged. The largest ratio is printed:
 * harness/NUMERICS.md quotes it. */
START_TEST(test_reorderings_never_flagged)
{
    static const int lengths[] = {64, 1000, 4096, MAX_ROWS};
    static const int parts[] = {2, 3, 4, 7, 8};
    fixture *f = fixture_new();
    double worst = 0.0;
    int judged_count = 0;
    for (int kind = 0; kind < DATA_KINDS; kind++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
            for (uint64_t seed = 1; seed <= 4; seed++) {
                const int n = lengths[l];
                fixture_fill(f, n, kind, seed * 1000 + (uint64_t)kind);
                for (int g = 0; g < 2; g++) {
                    golden_compute(f, g == 0);
                    for (int order = 0; order < ORDERS; order++)
                        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
                            bool split = order == ORDER_CHUNKS || order == ORDER_LANES;
                            if (!split && p > 0)
                                continue;
                            for (int o = 0; o < COLS; o++)
                                f->run[o] = column_sum(f->dy + o, n, order, parts[p]);
                            double r = judged(f);
                            ck_assert_msg(!(r > 1.0),
                                          "data %d n %d seed %llu golden %d order %d parts %d: "
                                          "precision ratio %g",
                                          kind, n, (unsigned long long)seed, g, order,
                                          parts[p], r);
                            worst = fmax(worst, r);
                            judged_count++;
                        }
                }
            }
    printf("reorderings: %d tensors of %d sums judged, largest precision ratio %.4g\n",
           judged_count, COLS, worst);
    fixture_free(f);
}
END_TEST

/* Equal terms: the serial order rounds the same way at each step, its
 * error far above the random model's floor; the serial error keeps the
 * threshold above every order of the same terms. */
START_TEST(test_equal_terms_serial_error_above_floor)
{
    fixture *f = fixture_new();
    fixture_fill(f, MAX_ROWS, DATA_EQUAL, 1);
    golden_compute(f, false);
    for (int o = 0; o < COLS; o++)
        f->run[o] = column_sum(f->dy + o, MAX_ROWS, ORDER_FORWARD, 1);
    double r = judged(f);
    ck_assert(f->seq_err[0] > f->floor[0]);
    ck_assert(!(r > 1.0));
    fixture_free(f);
}
END_TEST

/* fp16 partials of 4096 one-signed terms at 2, 3 and 4 parts: each partial
 * loses about 2^-12 of itself, about 30 times the floor; flagged in every
 * trial, against det's golden and the pairwise one. */
START_TEST(test_fp16_partials_flagged)
{
    fixture *f = fixture_new();
    double least = HUGE_VAL;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        fixture_fill(f, 4096, DATA_POSITIVE, seed);
        for (int g = 0; g < 2; g++) {
            golden_compute(f, g == 0);
            for (int parts = 2; parts <= 4; parts++) {
                for (int o = 0; o < COLS; o++)
                    f->run[o] = column_sum_fp16_partials(f->dy + o, 4096, parts);
                double r = judged(f);
                ck_assert_msg(r > 1.0, "seed %llu parts %d: precision ratio %g",
                              (unsigned long long)seed, parts, r);
                least = fmin(least, r);
            }
        }
    }
    printf("fp16 partials: smallest precision ratio %.4g\n", least);
    fixture_free(f);
}
END_TEST

/* A golden whose error is 0 (integer terms, every sum exact) does not make
 * a reordering's error look large: the floor holds the threshold up. */
START_TEST(test_exact_golden_needs_the_floor)
{
    const float golden_err[2] = {0.0f, 0.0f}, seq_err[2] = {0.0f, 0.0f};
    const float run_err[2] = {1e-6f, 3e-6f}, floor[2] = {2e-6f, 2e-6f};
    sb_elem_diff e;
    memset(&e, 0, sizeof e);
    sb_elem_precision(&e, golden_err, run_err, seq_err, floor, 2);
    ck_assert(sb_elem_precision_lost(&e));
    ck_assert_uint_eq(e.precision_index, 1);
    ck_assert(fabs(e.precision_ratio - 1.5) < 1e-6);
    const float golden_err2[2] = {1e-6f, 1e-6f};
    sb_elem_precision(&e, golden_err2, run_err, seq_err, floor, 2);
    ck_assert(!sb_elem_precision_lost(&e));     /* 3e-6 < 8 x 1e-6 */
    ck_assert_uint_eq(e.precision_index, 1);    /* element 0: equal errors, left out */
    ck_assert(fabs(e.precision_ratio - 0.375) < 1e-6);
    char text[384];
    sb_elem_precision_text(text, sizeof text, &e);
    ck_assert_ptr_nonnull(strstr(text, "precision ratio"));
    e.precision_tested = false;
    sb_elem_precision_text(text, sizeof text, &e);
    ck_assert_str_eq(text, "");
}
END_TEST

/* The probabilistic gamma: below the worst case for long sums, equal to it
 * for short ones (lambda sqrt(m) u > m u below lambda^2 terms), and the
 * worst case again once the model is off. */
START_TEST(test_probabilistic_gamma)
{
    const double worst = sb_gamma(1e6);
    double was = sb_gamma_lambda_set(SB_PRECISION_LAMBDA);
    ck_assert(!(was > 0.0));
    const double probable = sb_gamma(1e6);
    const double short_sum = sb_gamma(50.0);
    sb_gamma_lambda_set(was);
    ck_assert(probable < worst / 50.0);
    ck_assert(fabs(probable - SB_PRECISION_LAMBDA * 1e3 * 0x1p-24) < 1e-3 * probable);
    ck_assert(!(short_sum < sb_gamma(50.0)) && !(short_sum > sb_gamma(50.0)));
    ck_assert(!(sb_gamma(1e6) < worst) && !(sb_gamma(1e6) > worst));
}
END_TEST

Suite *make_precision_suite(void)
{
    Suite *s = suite_create("precision");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_probabilistic_gamma);
    tcase_add_test(tc, test_exact_golden_needs_the_floor);
    tcase_add_test(tc, test_equal_terms_serial_error_above_floor);
    tcase_add_test(tc, test_fp16_partials_flagged);
    tcase_add_test(tc, test_reorderings_never_flagged);
    suite_add_tcase(s, tc);
    return s;
}
