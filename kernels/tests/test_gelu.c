/* GELU (tanh and erf forms) and the residual add: values against PyTorch's
 * (tanh) and the definition in double (erf), special
 * values, every family and thread count with ref's bits (no reduction), the
 * float kernels within their double evaluation's bound over a sweep of
 * inputs, the backward against finite differences of the forward in double,
 * and the residual add in place. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise/elementwise.h"
#include "op_test.h"
#include "sb_refd.h"

Suite *make_gelu_suite(void);

#define U 0x1p-24

/* gelu(x) and its derivative from torch.nn.functional.gelu(x,
 * approximate='tanh') in float64 (PyTorch 1.13), whose constants are the
 * double sqrt(2/pi) and 0.044715. */
static const struct {
    double x, y, dydx;
} torch_gelu[] = {
    {1.0, 0.84119199060827676, 1.0829640838457826},
    {-1.0, -0.15880800939172324, -0.082964083845782521},
    {0.5, 0.34571400982514394, 0.86736990353464238},
    {-0.75, -0.17003944483437966, 0.0010617438625856179},
    {2.5, 2.4849157339100012, 1.0379515762126661},
    {-3.0, -0.0036373920817729943, -0.011584166630969648},
};
#define N_TORCH (sizeof torch_gelu / sizeof torch_gelu[0])

/* An op over n floats, inputs drawn in [lo, hi). */
static sb_op_call call_new(sb_op op, size_t n, float lo, float hi)
{
    sb_op_call c = {.op = op, .n = n};
    op_test_call_alloc(&c);
    for (int i = 0; i < c.n_in; i++)
        op_test_fill_rng(c.in[i].data, n, lo, hi, 5 + (uint64_t)i, (uint32_t)op);
    return c;
}

/* The float kernels against PyTorch. Ours are the float definition (float
 * constants k and a = 0.044715, each within u relatively of PyTorch's
 * doubles); a constant c moves a result f by at most |df/dc| u |c|. With
 * w = x + a x^3, |th| <= 1 and 1 - th^2 <= 1:
 *   |dy/dk| <= |x| |w| / 2             |dy/da| <= k |x|^4 / 2
 *   |dy'/dk| <= |w| / 2 + |x| |w| k s + |x| s / 2,   s = 1 + 3 a x^2
 *   |dy'/da| <= 2 k |x|^3 + k^2 |x|^4 s
 * The tolerance is that plus our double evaluation's bound. */
static double refd_bound(sb_op op, float *x, float *dy)
{
    sb_op_call c = {.op = op, .n = 1};
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    c.in[0].data = op == SB_OP_gelu_fwd || op == SB_OP_gelu_erf_fwd ? x : dy;
    c.in[1].data = x;
    double value, bound;
    sb_refd_eval(&value, &bound, &c, 0, SB_FAMILY_REF);
    return bound;
}

START_TEST(test_gelu_against_torch)
{
    const double k = (double)SB_GELU_K, a = (double)SB_GELU_A;
    for (size_t i = 0; i < N_TORCH; i++) {
        float x = (float)torch_gelu[i].x, y, dx, one = 1.0f;
        sb_gelu_fwd_ref(&y, &x, 1);
        sb_gelu_bwd_ref(&dx, &one, &x, 1);
        const double ax = fabs(torch_gelu[i].x), w = ax + a * ax * ax * ax;
        const double s = 1.0 + 3.0 * a * ax * ax, x3 = ax * ax * ax;
        const double moved_y = U * k * ax * w / 2 + U * a * k * x3 * ax / 2;
        const double moved_dy = U * k * (w / 2 + ax * w * k * s + ax * s / 2) +
                                U * a * (2 * k * x3 + k * k * x3 * ax * s);
        ck_assert_msg(fabs((double)y - torch_gelu[i].y) <=
                          refd_bound(SB_OP_gelu_fwd, &x, NULL) + moved_y,
                      "gelu(%g) = %.9g, PyTorch %.9g", torch_gelu[i].x, (double)y,
                      torch_gelu[i].y);
        ck_assert_msg(fabs((double)dx - torch_gelu[i].dydx) <=
                          refd_bound(SB_OP_gelu_bwd, &x, &one) + moved_dy,
                      "gelu'(%g) = %.9g, PyTorch %.9g", torch_gelu[i].x, (double)dx,
                      torch_gelu[i].dydx);
    }
}
END_TEST

/* 0 -> 0 with slope 1/2; tanh saturates to +-1, so gelu(x) is x far right
 * and (-)0 far left, with slopes 1 and 0; NaN passes through both. */
START_TEST(test_gelu_special_values)
{
    const float x[5] = {0.0f, 100.0f, -100.0f, NAN, 1e30f};
    const float dy[5] = {2.0f, 1.0f, 1.0f, 1.0f, 1.0f};
    float y[5], dx[5];
    sb_gelu_fwd_ref(y, x, 5);
    sb_gelu_bwd_ref(dx, dy, x, 5);
    ck_assert(op_test_feq(y[0], 0.0f) && op_test_feq(dx[0], 1.0f));
    ck_assert(op_test_feq(y[1], 100.0f) && op_test_feq(dx[1], 1.0f));
    ck_assert(op_test_feq(y[2], 0.0f) && op_test_feq(dx[2], 0.0f));
    ck_assert(isnan(y[3]) && isnan(dx[3]));
    /* x^3 overflows to inf: tanh(inf) = 1 and y = x; the slope is then
     * 0 * inf (1 - th^2 times x^2's term): NaN, as the float formula gives */
    ck_assert(op_test_feq(y[4], 1e30f) && isnan(dx[4]));
}
END_TEST

/* The erf form against its definition in double, x Phi(x) and its slope
 * Phi(x) + x phi(x), at the points of the tanh form's table and further
 * out. Ours rounds sqrt(1/2) and 1/sqrt(2 pi) to float (each within u
 * relatively): sqrt(1/2) moves erf's argument by at most u |x| sqrt(1/2)
 * and erf by 2/sqrt(pi) times that, which moves y by |x|/2 and the slope's
 * cdf by 1/2 of it; 1/sqrt(2 pi) moves x pdf by at most u |x| pdf. The
 * tolerance is that plus our double evaluation's bound. */
START_TEST(test_gelu_erf_against_definition)
{
    const double xs[] = {1.0, -1.0, 0.5, -0.75, 2.5, -3.0, 5.0, -5.5};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        float x = (float)xs[i], y, dx, one = 1.0f;
        sb_gelu_erf_fwd_ref(&y, &x, 1);
        sb_gelu_erf_bwd_ref(&dx, &one, &x, 1);
        const double cdf = 0.5 * (1.0 + erf(xs[i] / sqrt(2.0)));
        const double pdf = exp(-xs[i] * xs[i] / 2.0) / sqrt(6.283185307179586);
        const double ax = fabs(xs[i]), moved_erf = 1.1283791670955126 * U * ax * sqrt(0.5);
        ck_assert_msg(fabs((double)y - xs[i] * cdf) <=
                          refd_bound(SB_OP_gelu_erf_fwd, &x, NULL) + ax / 2 * moved_erf,
                      "gelu_erf(%g) = %.9g, want %.9g", xs[i], (double)y, xs[i] * cdf);
        ck_assert_msg(fabs((double)dx - (cdf + xs[i] * pdf)) <=
                          refd_bound(SB_OP_gelu_erf_bwd, &x, &one) + moved_erf / 2 +
                              U * ax * pdf,
                      "gelu_erf'(%g) = %.9g, want %.9g", xs[i], (double)dx,
                      cdf + xs[i] * pdf);
    }
}
END_TEST

/* 0 -> 0 with slope 1/2; erf saturates to +-1 and exp to 0, so gelu(x) is x
 * far right (slope 1) and -0 far left (slope 0); NaN passes through both. */
START_TEST(test_gelu_erf_special_values)
{
    const float x[4] = {0.0f, 100.0f, -100.0f, NAN};
    const float dy[4] = {2.0f, 1.0f, 1.0f, 1.0f};
    float y[4], dx[4];
    sb_gelu_erf_fwd_ref(y, x, 4);
    sb_gelu_erf_bwd_ref(dx, dy, x, 4);
    ck_assert(op_test_feq(y[0], 0.0f) && op_test_feq(dx[0], 1.0f));
    ck_assert(op_test_feq(y[1], 100.0f) && op_test_feq(dx[1], 1.0f));
    ck_assert(op_test_same_bits(&y[2], &(float){-0.0f}, 1) && op_test_feq(dx[2], 0.0f));
    ck_assert(isnan(y[3]) && isnan(dx[3]));
}
END_TEST

/* No reduction: det and loose are ref's bits at every thread count. */
START_TEST(test_families_have_ref_bits)
{
    const sb_op ops[] = {SB_OP_gelu_fwd, SB_OP_gelu_bwd, SB_OP_residual_add, SB_OP_gelu_erf_fwd,
                         SB_OP_gelu_erf_bwd};
    const size_t lengths[] = {1, 1000, 3 * 4096 + 5};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            sb_op_call c = call_new(ops[o], lengths[l], -6.0f, 6.0f);
            float *ref = op_test_run(&c, SB_FAMILY_REF, 1);
            for (int threads = 1; threads <= 8; threads++)
                for (int f = SB_FAMILY_DET; f <= SB_FAMILY_LOOSE; f++) {
                    float *got = op_test_run(&c, (sb_family)f, threads);
                    ck_assert_msg(op_test_same_bits(ref, got, lengths[l]), "%s %s at %d threads",
                                  sb_op_name(ops[o]), sb_family_name((sb_family)f), threads);
                    free(got);
                }
            free(ref);
            op_test_call_free(&c);
        }
}
END_TEST

/* The bounds hold: every float result within its double evaluation's
 * bound, over 2^16 inputs in [-8, 8) (both tails of tanh and the middle). */
START_TEST(test_within_double_bound)
{
    const sb_op ops[] = {SB_OP_gelu_fwd, SB_OP_gelu_bwd, SB_OP_residual_add, SB_OP_gelu_erf_fwd,
                         SB_OP_gelu_erf_bwd};
    const size_t n = (size_t)1 << 16;
    double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        sb_op_call c = call_new(ops[o], n, -8.0f, 8.0f);
        float *got = op_test_run(&c, SB_FAMILY_DET, 2);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
        for (size_t e = 0; e < n; e++)
            if (!(fabs((double)got[e] - value[e]) <= bound[e]))
                ck_abort_msg("%s [%zu]: %a vs %a, bound %g", sb_op_name(ops[o]), e, (double)got[e],
                             value[e], bound[e]);
        free(got);
        op_test_call_free(&c);
    }
    free(value);
    free(bound);
}
END_TEST

/* gelu in double with the kernels' float constants */
static double gelu_double(double x)
{
    const double k = (double)SB_GELU_K, a = (double)SB_GELU_A;
    return 0.5 * x * (1.0 + tanh(k * (x + a * x * x * x)));
}

/* dx = dy gelu'(x) against the central difference of gelu in double:
 * D(h) = gelu'(x) + C h^2 + ..., and D(h/2)'s truncation is about
 * |D(h) - D(h/2)| / 3; the tolerance is |D(h) - D(h/2)| (room for the h^4
 * terms), the rounding of the differences (4 2^-53 (|gelu| + |x|) / h), and
 * the float kernel's own bound from its double evaluation. */
START_TEST(test_gelu_bwd_finite_difference)
{
    const size_t n = 2000;
    sb_op_call c = call_new(SB_OP_gelu_bwd, n, -5.0f, 5.0f);
    float *dx = op_test_run(&c, SB_FAMILY_DET, 2);
    double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
    sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
    const float *dy = c.in[0].data, *x = c.in[1].data;
    const double h = 0x1p-10;
    for (size_t e = 0; e < n; e++) {
        const double xe = (double)x[e];
        const double coarse = (gelu_double(xe + h) - gelu_double(xe - h)) / (2 * h);
        const double fine = (gelu_double(xe + h / 2) - gelu_double(xe - h / 2)) / h;
        const double rounding = 4.0 * 0x1p-53 * (fabs(xe) + 1.0) * (2.0 / h);
        const double want = (double)dy[e] * fine;
        const double tol =
            bound[e] + fabs((double)dy[e]) * (fabs(coarse - fine) + rounding);
        ck_assert_msg(fabs((double)dx[e] - want) <= tol, "x %a: %a vs finite difference %a (tol %g)",
                      (double)x[e], (double)dx[e], want, tol);
    }
    free(value);
    free(bound);
    free(dx);
    op_test_call_free(&c);
}
END_TEST

/* y = a + b, exact on small integers, and in place (y = a), the residual
 * stream's use, at every family and thread count */
START_TEST(test_residual_add_in_place)
{
    enum { N = 4099 };
    float *a = op_test_alloc_floats(N), *b = op_test_alloc_floats(N), *y = op_test_alloc_floats(N);
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 4; threads++) {
            for (int i = 0; i < N; i++)
                a[i] = (float)(i % 17 - 8), b[i] = (float)(i % 5);
            omp_set_num_threads(threads);
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            k->residual_add(y, a, b, N);
            k->residual_add(a, a, b, N);
            for (int i = 0; i < N; i++)
                ck_assert(op_test_feq(y[i], (float)(i % 17 - 8 + i % 5)));
            ck_assert(op_test_same_bits(a, y, N));
        }
    free(a);
    free(b);
    free(y);
}
END_TEST

Suite *make_gelu_suite(void)
{
    Suite *s = suite_create("gelu");
    TCase *tc = tcase_create("gelu");
    tcase_add_test(tc, test_gelu_against_torch);
    tcase_add_test(tc, test_gelu_special_values);
    tcase_add_test(tc, test_gelu_erf_against_definition);
    tcase_add_test(tc, test_gelu_erf_special_values);
    tcase_add_test(tc, test_families_have_ref_bits);
    tcase_add_test(tc, test_within_double_bound);
    tcase_add_test(tc, test_gelu_bwd_finite_difference);
    tcase_add_test(tc, test_residual_add_in_place);
    suite_add_tcase(s, tc);
    return s;
}
