/* dense: det and loose against ref within the op's reordering bound, det
 * bitwise across thread counts, loose thread-dependent, NaN/Inf propagation,
 * and finite-difference checks of the three gradients. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "sb_kernels.h"

Suite *make_dense_suite(void);

/* ---- inputs and op calls --------------------------------------------------- */

static const sb_op dense_ops[] = {SB_OP_dense_fwd, SB_OP_dense_bwd_data,
                                  SB_OP_dense_bwd_weights, SB_OP_dense_bwd_bias};
#define N_OPS (sizeof dense_ops / sizeof dense_ops[0])

static void call_new(sb_op_call *c, sb_op op, sb_dense_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->dense = s;
    op_test_call_alloc(c);
}


/* the seed model's layers at a small batch, and shapes no tile divides */
static const sb_dense_shape shapes[] = {
    {8, 9216, 128},     /* dense1 */
    {32, 128, 10},      /* dense2 */
    {7, 13, 5},
    {13, 601, 37},      /* K crosses chunks of 256, N and M cross tiles */
    {1, 1, 1},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* ---- families against ref -------------------------------------------------- */

START_TEST(test_families_within_bound)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, dense_ops[o], shapes[_i]);
        op_test_check_families_within_bound(&c, 3);
        op_test_call_free(&c);
    }
}
END_TEST

START_TEST(test_det_bitwise_across_threads)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, dense_ops[o], shapes[_i]);
        op_test_check_det_bitwise(&c, 16);
        op_test_call_free(&c);
    }
}
END_TEST

/* loose must show the thread dependence the harness exists to explain: the
 * split-K forward pass over in = 9216 and the split-batch weight gradient
 * change bits with the thread count (and stay within bound, tested above). */
START_TEST(test_loose_depends_on_threads)
{
    const sb_op ops[] = {SB_OP_dense_fwd, SB_OP_dense_bwd_weights};
    const sb_dense_shape s = {128, 9216, 128};
    for (size_t o = 0; o < 2; o++) {
        sb_op_call c;
        call_new(&c, ops[o], s);
        float *one = op_test_run(&c, SB_FAMILY_LOOSE, 1);
        int differing = 0;
        for (int threads = 2; threads <= 4; threads++) {
            float *many = op_test_run(&c, SB_FAMILY_LOOSE, threads);
            differing += memcmp(one, many, sb_tensor_bytes(&c.out[0])) != 0;
            free(many);
        }
        ck_assert_msg(differing > 0, "%s loose gave the same bits for 1..4 threads",
                      sb_op_name(c.op));
        free(one);
        op_test_call_free(&c);
    }
}
END_TEST

/* A NaN or Inf input reaches exactly the outputs whose reduction reads it. */
START_TEST(test_nonfinite_propagates)
{
    const sb_dense_shape s = {5, 300, 40};
    sb_op_call c;
    call_new(&c, SB_OP_dense_fwd, s);
    float *x = c.in[0].data;
    x[2 * s.in + 7] = NAN;          /* row 2 of x: row 2 of y is NaN */
    ((float *)c.in[2].data)[3] = INFINITY;  /* bias 3: column 3 is +Inf except row 2 */
    for (sb_family f = SB_FAMILY_REF; f < SB_FAMILY_COUNT; f++) {
        float *y = op_test_run(&c, f, 2);
        for (int i = 0; i < s.n; i++)
            for (int o = 0; o < s.out; o++) {
                float v = y[i * s.out + o];
                if (i == 2)
                    ck_assert_msg(isnan(v), "%s y[%d][%d] = %g", sb_family_name(f), i, o, (double)v);
                else if (o == 3)
                    ck_assert_msg(isinf(v) && v > 0, "%s y[%d][3] = %g", sb_family_name(f), i, (double)v);
                else
                    ck_assert_msg(isfinite(v), "%s y[%d][%d] = %g", sb_family_name(f), i, o, (double)v);
            }
        free(y);
    }
    op_test_call_free(&c);
}
END_TEST

/* ---- finite differences ------------------------------------------------------
 * L = sum y*g over y = x w + b, evaluated in double. L is linear in each of
 * x, w, b, so the central difference (L(v+h) - L(v-h)) / 2h has no
 * truncation error; its rounding error is at most
 *   (gamma_d(N) S+ + gamma_d(N) S-) / 2h <= gamma_d(N) S / h,
 * N = terms in L, S = sum of |terms| with every input replaced by |input| + h
 * (so S >= S+ and S-), gamma_d(N) = N 2^-53 / (1 - N 2^-53). The float
 * gradient from the kernel is within gamma(n) sum|terms| = bound/2 of the
 * exact gradient, so the tolerance is bound/2 + gamma_d(N) S / h. */

static double dense_loss(const float *x, const float *w, const float *b, const float *g,
                         const sb_dense_shape *s, int which, size_t at, double delta, bool abs_mode)
{
    double L = 0.0;
    for (int i = 0; i < s->n; i++)
        for (int o = 0; o < s->out; o++) {
            double bv = (double)b[o] + (which == 2 && at == (size_t)o ? delta : 0.0);
            double y = abs_mode ? fabs(bv) : bv;
            for (int j = 0; j < s->in; j++) {
                double xv = (double)x[i * s->in + j] + (which == 0 && at == (size_t)(i * s->in + j) ? delta : 0.0);
                double wv = (double)w[j * s->out + o] + (which == 1 && at == (size_t)(j * s->out + o) ? delta : 0.0);
                y += abs_mode ? fabs(xv) * fabs(wv) : xv * wv;
            }
            L += abs_mode ? y * fabs((double)g[i * s->out + o]) : y * (double)g[i * s->out + o];
        }
    return L;
}

static double gamma_d(double n)
{
    const double u = 0x1p-53;
    return n * u / (1.0 - n * u);
}

START_TEST(test_gradients_finite_difference)
{
    const sb_dense_shape s = {3, 29, 7};
    const double h = 0.5;
    size_t nx = (size_t)s.n * s.in, nw = (size_t)s.in * s.out, ny = (size_t)s.n * s.out;
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
    float *b = malloc((size_t)s.out * sizeof(float)), *g = malloc(ny * sizeof(float));
    op_test_fill_uniform(x, nx, 1), op_test_fill_uniform(w, nw, 2), op_test_fill_uniform(b, (size_t)s.out, 3);
    op_test_fill_uniform(g, ny, 4);
    /* |input| + h everywhere: a sum of |terms| that covers both perturbations */
    float *xa = malloc(nx * sizeof(float)), *wa = malloc(nw * sizeof(float));
    float *ba = malloc((size_t)s.out * sizeof(float));
    for (size_t i = 0; i < nx; i++) xa[i] = fabsf(x[i]) + (float)h;
    for (size_t i = 0; i < nw; i++) wa[i] = fabsf(w[i]) + (float)h;
    for (int i = 0; i < s.out; i++) ba[i] = fabsf(b[i]) + (float)h;
    double fd_err = gamma_d((double)ny * (s.in + 2)) *
                    dense_loss(xa, wa, ba, g, &s, -1, 0, 0.0, true) / h;

    const size_t sizes[3] = {nx, nw, (size_t)s.out};
    for (int which = 0; which < 3; which++) {
        float *grad = malloc(sizes[which] * sizeof(float));
        float *bound = malloc(sizes[which] * sizeof(float));
        for (sb_family f = SB_FAMILY_REF; f < SB_FAMILY_COUNT; f++) {
            const sb_kernel_table *k = sb_kernels(f);
            omp_set_num_threads(2);
            if (which == 0)
                k->dense_bwd_data(grad, g, w, &s), sb_dense_bwd_data_bound(bound, g, w, &s);
            else if (which == 1)
                k->dense_bwd_weights(grad, g, x, &s), sb_dense_bwd_weights_bound(bound, g, x, &s);
            else
                k->dense_bwd_bias(grad, g, &s), sb_dense_bwd_bias_bound(bound, g, &s);
            for (size_t at = 0; at < sizes[which]; at++) {
                double fd = (dense_loss(x, w, b, g, &s, which, at, h, false) -
                             dense_loss(x, w, b, g, &s, which, at, -h, false)) / (2 * h);
                double tol = (double)bound[at] / 2.0 + fd_err;
                if (!(fabs((double)grad[at] - fd) <= tol))
                    ck_abort_msg("%s gradient %d [%zu]: %.9g vs fd %.9g (tol %g)",
                              sb_family_name(f), which, at, (double)grad[at], fd, tol);
            }
        }
        free(grad);
        free(bound);
    }
    free(x), free(w), free(b), free(g), free(xa), free(wa), free(ba);
}
END_TEST

Suite *make_dense_suite(void)
{
    Suite *s = suite_create("dense");
    TCase *tc = tcase_create("dense");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_families_within_bound, 0, (int)N_SHAPES);
    tcase_add_loop_test(tc, test_det_bitwise_across_threads, 0, (int)N_SHAPES);
    tcase_add_test(tc, test_loose_depends_on_threads);
    tcase_add_test(tc, test_nonfinite_propagates);
    tcase_add_test(tc, test_gradients_finite_difference);
    suite_add_tcase(s, tc);
    return s;
}
