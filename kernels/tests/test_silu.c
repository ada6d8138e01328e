/* SiLU and the SwiGLU product: values against the definition in double,
 * special values, every family and thread count with ref's bits (no
 * reduction), the float kernels within their double evaluation's bound over
 * a sweep of inputs, and the gradients against finite differences of the
 * forward in double. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "op_test.h"
#include "sb_refd.h"

Suite *make_silu_suite(void);

static const sb_op silu_ops[] = {SB_OP_silu_fwd, SB_OP_silu_bwd, SB_OP_swiglu_fwd,
                                 SB_OP_swiglu_bwd_a, SB_OP_swiglu_bwd_b};
#define N_OPS (sizeof silu_ops / sizeof silu_ops[0])

/* An op over n floats, inputs drawn in [lo, hi). */
static sb_op_call call_new(sb_op op, size_t n, float lo, float hi)
{
    sb_op_call c = {.op = op, .n = n};
    op_test_call_alloc(&c);
    for (int i = 0; i < c.n_in; i++)
        op_test_fill_rng(c.in[i].data, n, lo, hi, 11 + (uint64_t)i, (uint32_t)op);
    return c;
}

/* silu(x) = x / (1 + e^-x) in double, as PyTorch's torch.nn.functional.silu
 * defines it */
static double silu_double(double x)
{
    return x / (1.0 + exp(-x));
}

/* Hand values: silu(0) = 0 with slope 1/2 exactly; t saturates to +-1 far
 * out, so silu(100) = 100 with slope 1 and silu(-100) = -0 with slope +0;
 * a NaN passes through; silu(inf) = inf and silu(-inf) = -inf * 0 = NaN, as
 * x / (1 + e^-x) gives; silu'(+-inf) meets inf * 0 and is NaN. And
 * silu(+-1), silu'(+-1) within their bound of the double definition
 * (silu(1) = 0.731058578630005, silu'(1) = 0.927670511291066). */
START_TEST(test_silu_values)
{
    const float x[7] = {0.0f, 100.0f, -100.0f, NAN, INFINITY, 1.0f, -1.0f};
    const float dy[7] = {1, 1, 1, 1, 1, 1, 1};
    float y[7], dx[7];
    sb_silu_fwd_ref(y, x, 7);
    sb_silu_bwd_ref(dx, dy, x, 7);
    ck_assert(op_test_same_bits(&y[0], &(float){0.0f}, 1));
    ck_assert(op_test_same_bits(&dx[0], &(float){0.5f}, 1));
    ck_assert(op_test_feq(y[1], 100.0f) && op_test_feq(dx[1], 1.0f));
    ck_assert(op_test_same_bits(&y[2], &(float){-0.0f}, 1));
    ck_assert(op_test_same_bits(&dx[2], &(float){0.0f}, 1));
    ck_assert(isnan(y[3]) && isnan(dx[3]));
    ck_assert(isinf(y[4]) && y[4] > 0 && isnan(dx[4]));
    const float minus_inf = -INFINITY;
    float y_minus_inf;
    sb_silu_fwd_ref(&y_minus_inf, &minus_inf, 1);
    ck_assert(isnan(y_minus_inf));
    const double want[2] = {0.731058578630005, -0.268941421369995};
    const double want_slope[2] = {0.927670511291066, 0.072329488708934};
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(fabs((double)y[5 + i] - want[i]) < 3e-7, "silu(%g) = %.9g", (double)x[5 + i],
                      (double)y[5 + i]);
        ck_assert_msg(fabs((double)dx[5 + i] - want_slope[i]) < 3e-7, "silu'(%g) = %.9g",
                      (double)x[5 + i], (double)dx[5 + i]);
    }
}
END_TEST

/* SwiGLU is silu(a) b, its gradients silu'(a) (dy b) and dy silu(a): with
 * b = 2 and dy = 3 (exact scalings) they are the SiLU kernels' bits scaled */
START_TEST(test_swiglu_is_silu_times_b)
{
    enum { N = 257 };
    float *a = op_test_alloc_floats(N), *b = op_test_alloc_floats(N), *dy = op_test_alloc_floats(N);
    float *s = op_test_alloc_floats(N), *ds = op_test_alloc_floats(N), *got = op_test_alloc_floats(N);
    float *three = op_test_alloc_floats(N), *six = op_test_alloc_floats(N);
    op_test_fill_rng(a, N, -10.0f, 10.0f, 3, 0);
    for (int i = 0; i < N; i++)
        b[i] = 2.0f, dy[i] = 3.0f, three[i] = 3.0f, six[i] = 6.0f;
    const sb_kernel_table *det = sb_kernels(SB_FAMILY_DET);
    sb_silu_fwd_ref(s, a, N);
    det->swiglu_fwd(got, a, b, N);
    for (int i = 0; i < N; i++)
        ck_assert(op_test_feq(got[i], 2.0f * s[i]) || (isnan(got[i]) && isnan(s[i])));
    det->swiglu_bwd_b(got, dy, a, N);
    for (int i = 0; i < N; i++)
        ck_assert(op_test_feq(got[i], 3.0f * s[i]));
    sb_silu_bwd_ref(ds, six, a, N);
    det->swiglu_bwd_a(got, three, a, b, N);
    ck_assert(op_test_same_bits(got, ds, N));
    free(a), free(b), free(dy), free(s), free(ds), free(got), free(three), free(six);
}
END_TEST

/* No reduction: det and loose are ref's bits at every thread count. */
START_TEST(test_families_have_ref_bits)
{
    const size_t lengths[] = {1, 1009, 3 * 4096 + 5};
    for (size_t o = 0; o < N_OPS; o++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            sb_op_call c = call_new(silu_ops[o], lengths[l], -12.0f, 12.0f);
            float *ref = op_test_run(&c, SB_FAMILY_REF, 1);
            for (int threads = 1; threads <= 8; threads++)
                for (int f = SB_FAMILY_DET; f <= SB_FAMILY_LOOSE; f++) {
                    float *got = op_test_run(&c, (sb_family)f, threads);
                    ck_assert_msg(op_test_same_bits(ref, got, lengths[l]), "%s %s at %d threads",
                                  sb_op_name(silu_ops[o]), sb_family_name((sb_family)f), threads);
                    free(got);
                }
            free(ref);
            op_test_call_free(&c);
        }
}
END_TEST

/* Every float result within its double evaluation's bound, over 2^16 inputs
 * in [-20, 20) (both tails of the sigmoid and the middle), and the double
 * evaluation of silu within that bound of x / (1 + e^-x). */
START_TEST(test_within_double_bound)
{
    const size_t n = (size_t)1 << 16;
    double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c = call_new(silu_ops[o], n, -20.0f, 20.0f);
        float *got = op_test_run(&c, SB_FAMILY_DET, 2);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
        for (size_t e = 0; e < n; e++) {
            if (!(fabs((double)got[e] - value[e]) <= bound[e]))
                ck_abort_msg("%s [%zu]: %a vs %a, bound %g", sb_op_name(silu_ops[o]), e,
                             (double)got[e], value[e], bound[e]);
            if (silu_ops[o] == SB_OP_silu_fwd) {
                const double x = (double)((const float *)c.in[0].data)[e];
                ck_assert(fabs((double)got[e] - silu_double(x)) <= bound[e]);
            }
        }
        free(got);
        op_test_call_free(&c);
    }
    free(value);
    free(bound);
}
END_TEST

/* dx = dy silu'(x), and SwiGLU's da = dy b silu'(a), against the central
 * difference of silu in double: D(h) = silu'(x) + C h^2 + ..., D(h/2)'s
 * truncation about |D(h) - D(h/2)| / 3; the tolerance is |D(h) - D(h/2)|,
 * the rounding of the differences (4 2^-53 (|x| + 1) / h) and the float
 * kernel's own bound. A slope off by one term (s alone, or x s(1 - s)
 * alone) is off by far more at these x. */
START_TEST(test_gradients_finite_difference)
{
    const size_t n = 2000;
    const sb_op ops[] = {SB_OP_silu_bwd, SB_OP_swiglu_bwd_a};
    for (size_t o = 0; o < 2; o++) {
        sb_op_call c = call_new(ops[o], n, -6.0f, 6.0f);
        float *dx = op_test_run(&c, SB_FAMILY_DET, 2);
        double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
        const float *dy = c.in[0].data, *x = c.in[1].data;
        const float *b = ops[o] == SB_OP_swiglu_bwd_a ? c.in[2].data : NULL;
        const double h = 0x1p-10;
        for (size_t e = 0; e < n; e++) {
            const double xe = (double)x[e], scale = (double)dy[e] * (b ? (double)b[e] : 1.0);
            const double coarse = (silu_double(xe + h) - silu_double(xe - h)) / (2 * h);
            const double fine = (silu_double(xe + h / 2) - silu_double(xe - h / 2)) / h;
            const double rounding = 4.0 * 0x1p-53 * (fabs(xe) + 1.0) * (2.0 / h);
            const double tol = bound[e] + fabs(scale) * (fabs(coarse - fine) + rounding);
            ck_assert_msg(fabs((double)dx[e] - scale * fine) <= tol,
                          "%s x %a: %a vs finite difference %a (tol %g)", sb_op_name(ops[o]),
                          (double)x[e], (double)dx[e], scale * fine, tol);
        }
        free(value);
        free(bound);
        free(dx);
        op_test_call_free(&c);
    }
}
END_TEST

Suite *make_silu_suite(void)
{
    Suite *s = suite_create("silu");
    TCase *tc = tcase_create("silu");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_silu_values);
    tcase_add_test(tc, test_swiglu_is_silu_times_b);
    tcase_add_test(tc, test_families_have_ref_bits);
    tcase_add_test(tc, test_within_double_bound);
    tcase_add_test(tc, test_gradients_finite_difference);
    suite_add_tcase(s, tc);
    return s;
}
