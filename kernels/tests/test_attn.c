/* Self-attention, causal or not, with grouped key/value heads: values
 * worked out by hand, the gradient against central differences of a
 * double-precision forward pass, grouped heads against the same heads
 * repeated, det bitwise equal at 1..8 threads, ref/det/loose within the
 * reordering bound, and every family within the forward error bound of the
 * double evaluation. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "op_test.h"

Suite *make_attn_suite(void);

static const double u = 0x1p-24;

/* One sequence of two tokens, one head of width 4 (scale 1/2, exact).
 * Row i of qkv: q_i, k_i, v_i. Token 1's scores: q1.k0 / 2 = q1.k1 / 2 =
 * 1/2, so expf(0) = 1 twice, S = 2 and p = (1/2, 1/2): every operation is
 * exact, and y0 = v0 (p00 = 1), y1 = (v0 + v1) / 2.
 * Gradients, dy0 = (1, 0, 0, 1), dy1 = (2, -1, 0, 1):
 *   dp10 = dy1.v0 = 4, dp11 = dy1.v1 = 0, D1 = 2: ds10 = 1/2 (4 - 2) / 2 = 1/2,
 *   ds11 = 1/2 (0 - 2) / 2 = -1/2; ds00 = 1 (dp00 - dp00) / 2 = 0.
 *   dq0 = 0, dq1 = ds10 k0 + ds11 k1 = (1/2, -1/2, 0, 0)
 *   dk0 = ds00 q0 + ds10 q1 = (1/2, 1/2, 0, 0), dk1 = ds11 q1 = (-1/2, -1/2, 0, 0)
 *   dv0 = p00 dy0 + p10 dy1 = (2, -1/2, 0, 3/2), dv1 = p11 dy1 = (1, -1/2, 0, 1/2) */
static const float hand_qkv[2 * 12] = {
    2, 0, 0, 0, /* q0 */ 1, 0, 0, 0, /* k0 */ 1, 2, 3, 4, /* v0 */
    1, 1, 0, 0, /* q1 */ 0, 1, 0, 0, /* k1 */ -1, 0, 1, 2, /* v1 */
};
static const float hand_dy[2 * 4] = {1, 0, 0, 1, 2, -1, 0, 1};
static const float hand_y[2 * 4] = {1, 2, 3, 4, 0, 1, 2, 3};
static const float hand_dqkv[2 * 12] = {
    0, 0, 0, 0, 0.5f, 0.5f, 0, 0, 2, -0.5f, 0, 1.5f,
    0.5f, -0.5f, 0, 0, -0.5f, -0.5f, 0, 0, 1, -0.5f, 0, 0.5f,
};
static const sb_attn_shape hand_shape = {.b = 1, .t = 2, .h = 1, .d = 4};

START_TEST(test_exact_by_hand)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        float y[8], dqkv[24];
        k->attention_fwd(y, hand_qkv, &hand_shape);
        k->attention_bwd(dqkv, hand_dy, hand_qkv, &hand_shape);
        for (int e = 0; e < 8; e++)
            ck_assert_msg(op_test_feq(y[e], hand_y[e]), "%s y[%d] = %g",
                          sb_family_name((sb_family)f), e, (double)y[e]);
        for (int e = 0; e < 24; e++)
            ck_assert_msg(op_test_feq(dqkv[e], hand_dqkv[e]), "%s dqkv[%d] = %g",
                          sb_family_name((sb_family)f), e, (double)dqkv[e]);
    }
}
END_TEST

/* Unequal scores: q1 = (1, 1, 0, 0), k0 = (1, -1, 0, 0), k1 = (1, 1, 0, 0)
 * give s10 = 0, s11 = 1, so p11 = e / (1 + e) = 0.7310585786300049 and
 * p10 = 0.2689414213699951; with v0 = (1, 2, 3, 4), v1 = (-1, 0, 1, 2),
 * y1 = p10 v0 + p11 v1. The float result: expf within 1 ulp (2u), the sum
 * and the quotient one rounding each, the products and their sum one each:
 * relative errors of at most 6u on each term of y1, so
 * |y1 - exact| <= 6u (p10 |v0| + p11 |v1|) (+ slack: 8u). */
START_TEST(test_softmax_by_hand)
{
    float qkv[24] = {0};
    const float row0[12] = {0.5f, 0, 0, 0, 1, -1, 0, 0, 1, 2, 3, 4};
    const float row1[12] = {1, 1, 0, 0, 1, 1, 0, 0, -1, 0, 1, 2};
    memcpy(qkv, row0, sizeof row0);
    memcpy(qkv + 12, row1, sizeof row1);
    const double p11 = exp(1.0) / (1.0 + exp(1.0)), p10 = 1.0 - p11;
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float y[8];
        sb_kernels((sb_family)f)->attention_fwd(y, qkv, &hand_shape);
        for (int c = 0; c < 4; c++) {
            ck_assert(op_test_feq(y[c], row0[8 + c]));
            const double v0 = (double)row0[8 + c], v1 = (double)row1[8 + c];
            const double want = p10 * v0 + p11 * v1;
            const double tol = 8.0 * u * (p10 * fabs(v0) + p11 * fabs(v1));
            ck_assert_msg(fabs((double)y[4 + c] - want) <= tol, "%s y1[%d] = %.9g, want %.9g",
                          sb_family_name((sb_family)f), c, (double)y[4 + c], want);
        }
    }
}
END_TEST

/* ---- the gradient against central differences -------------------------- */

/* L(x) = sum dy . y(x) with y the attention of qkv = x, all in double:
 * the definition of attn.h with exact arithmetic (written out here again,
 * independently of the kernels and of attn_refd.c). */
static double loss_double(const double *x, const float *dy, const sb_attn_shape *s)
{
    const int t = s->t, d = s->d, kv = s->kv_heads == 0 ? s->h : s->kv_heads;
    const int width = s->h * d, ld = (s->h + 2 * kv) * d;
    const double scale = (double)sb_attn_scale(d);
    double loss = 0.0, p[64];
    ck_assert_int_le(t, 64);
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->h; h++) {
            const int g = h / (s->h / kv);
            const double *q = x + b * t * ld + h * d, *k = x + b * t * ld + width + g * d;
            const double *v = k + kv * d;
            for (int i = 0; i < t; i++) {
                const int n = s->noncausal ? t : i + 1;
                double m = -(double)INFINITY, sum = 0.0;
                for (int j = 0; j < n; j++) {
                    double dot = 0.0;
                    for (int c = 0; c < d; c++)
                        dot += q[i * ld + c] * k[j * ld + c];
                    p[j] = dot * scale;
                    m = fmax(m, p[j]);
                }
                for (int j = 0; j < n; j++)
                    sum += p[j] = exp(p[j] - m);
                for (int c = 0; c < d; c++) {
                    double y = 0.0;
                    for (int j = 0; j < n; j++)
                        y += p[j] / sum * v[j * ld + c];
                    loss += (double)dy[(b * t + i) * width + h * d + c] * y;
                }
            }
        }
    return loss;
}

static double central_difference(double *x, size_t e, double step, const float *dy,
                                 const sb_attn_shape *s)
{
    const double keep = x[e];
    x[e] = keep + step;
    const double up = loss_double(x, dy, s);
    x[e] = keep - step;
    const double down = loss_double(x, dy, s);
    x[e] = keep;
    return (up - down) / (2.0 * step);
}

/* dL/dx_e against the float kernels. Tolerance: the kernel's forward error
 * bound E_e (attn_refd.c: what any family's float result may differ from
 * the exact gradient), plus the difference quotient's own error. With
 * inputs in [-1, 1) and steps of 2^-12 and 2^-13, the quotient's truncation
 * error (h^2/6 |L'''|) is estimated from the two steps: for a smooth L the
 * error of the finer one is about |D(h) - D(h/2)| / 3, taken here at 1x
 * (three times the estimate). The double loss itself rounds: each of its
 * terms dy_e y_e passes through fewer than 64 roundings (d + t + 8 here),
 * so L errs by at most 64 2^-53 sum|dy| (|y| <= max|v| < 1), and the
 * quotient by twice that over 2h. Multi-head causal, and four query heads
 * on two key/value heads with no mask. */
static void check_gradient(const sb_attn_shape *s)
{
    const int kv = s->kv_heads == 0 ? s->h : s->kv_heads;
    const size_t nx = (size_t)s->b * s->t * (s->h + 2 * kv) * s->d;
    const size_t ny = (size_t)s->b * s->t * s->h * s->d;
    float *qkv = op_test_alloc_floats(nx), *dy = op_test_alloc_floats(ny);
    float *dqkv = op_test_alloc_floats(nx);
    double *x = malloc(nx * sizeof *x), *value = malloc(nx * sizeof *value);
    double *err = malloc(nx * sizeof *err);
    ck_assert(x && value && err);
    op_test_fill_uniform(qkv, nx, 11);
    op_test_fill_uniform(dy, ny, 12);
    for (size_t e = 0; e < nx; e++)
        x[e] = (double)qkv[e];
    sb_attn_bwd_eval(value, err, dy, qkv, s);
    double dy_mag = 0.0;
    for (size_t e = 0; e < ny; e++)
        dy_mag += fabs((double)dy[e]);
    const double fine_step = 0x1p-13, rounding = 64.0 * 0x1p-53 * dy_mag / fine_step;
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernels((sb_family)f)->attention_bwd(dqkv, dy, qkv, s);
        for (size_t e = 0; e < nx; e++) {
            const double coarse = central_difference(x, e, 0x1p-12, dy, s);
            const double fine = central_difference(x, e, fine_step, dy, s);
            const double tol = err[e] + fabs(coarse - fine) + rounding;
            ck_assert_msg(fabs((double)dqkv[e] - fine) <= tol,
                          "%s kv %d dqkv[%zu] = %.9g, difference quotient %.9g, tolerance %.3g",
                          sb_family_name((sb_family)f), kv, e, (double)dqkv[e], fine, tol);
            /* the double evaluation is the same gradient */
            ck_assert_msg(fabs(value[e] - fine) <= fabs(coarse - fine) + rounding,
                          "refd kv %d dqkv[%zu] = %.12g, difference quotient %.12g", kv, e,
                          value[e], fine);
        }
    }
    free(qkv), free(dy), free(dqkv), free(x), free(value), free(err);
}

START_TEST(test_gradient_finite_difference)
{
    check_gradient(&(sb_attn_shape){.b = 2, .t = 5, .h = 2, .d = 4});
    check_gradient(&(sb_attn_shape){.b = 2, .t = 5, .h = 4, .d = 4, .kv_heads = 2,
                                    .noncausal = true});
}
END_TEST

/* No mask, one head of width 1 (scale 1), three tokens: q0 = 0 scores
 * every key 0, so p = 1/3 each and y0 = (v0 + v1 + v2) / 3 = 2 (v = 1, 2, 3:
 * 1/3 rounds, the three products and their sum round, all within 4u of 2);
 * causal, y0 = v0 = 1 exactly. */
START_TEST(test_noncausal_sees_later_keys)
{
    const float qkv[9] = {0, 5, 1, 0, -7, 2, 0, 9, 3};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float y[3];
        sb_kernels((sb_family)f)->attention_fwd(y, qkv, &(sb_attn_shape){.b = 1, .t = 3, .h = 1,
                                                                          .d = 1, .noncausal = true});
        for (int i = 0; i < 3; i++)
            ck_assert_msg(fabs((double)y[i] - 2.0) <= 8.0 * u, "%s y[%d] = %.9g",
                          sb_family_name((sb_family)f), i, (double)y[i]);
        sb_kernels((sb_family)f)->attention_fwd(y, qkv, &(sb_attn_shape){.b = 1, .t = 3, .h = 1,
                                                                          .d = 1});
        ck_assert(op_test_feq(y[0], 1.0f));
    }
}
END_TEST

/* ---- grouped heads against repeated heads -------------------------------- */

/* The multi-head qkv whose head j's k and v are key/value head j / group's
 * of the grouped qkv g (shape s, its multi-head twin m). */
static void repeat_heads(float *mqkv, const float *gqkv, const sb_attn_shape *s)
{
    const int kv = s->kv_heads, group = s->h / kv, d = s->d;
    const int gld = (s->h + 2 * kv) * d, mld = 3 * s->h * d;
    for (int r = 0; r < s->b * s->t; r++) {
        const float *g = gqkv + (ptrdiff_t)r * gld;
        float *m = mqkv + (ptrdiff_t)r * mld;
        memcpy(m, g, (size_t)s->h * d * sizeof *m);
        for (int j = 0; j < s->h; j++) {
            memcpy(m + (s->h + j) * d, g + (s->h + j / group) * d, (size_t)d * sizeof *m);
            memcpy(m + (2 * s->h + j) * d, g + (s->h + kv + j / group) * d,
                   (size_t)d * sizeof *m);
        }
    }
}

/* Grouped heads are the same heads repeated: the forward bit for bit in
 * every family at 1 and 3 threads; the backward's dq bit for bit, and a
 * key/value head's dk and dv the repeated heads' dk and dv added in head
 * order (attn.h), bit for bit. 37 tokens cut det's key chunks inside rows;
 * causal and not. */
START_TEST(test_grouped_is_repeated_heads)
{
    for (int mask = 0; mask < 2; mask++) {
        const sb_attn_shape gs = {.b = 2, .t = 37, .h = 6, .d = 8, .kv_heads = 2,
                                  .noncausal = mask == 1};
        sb_attn_shape ms = gs;
        ms.kv_heads = 0;
        const int group = 3, d = 8, gld = 10 * d, mld = 18 * d, rows = 2 * 37;
        const size_t gn = (size_t)rows * gld, mn = (size_t)rows * mld, yn = (size_t)rows * 6 * d;
        float *gqkv = op_test_alloc_floats(gn), *mqkv = op_test_alloc_floats(mn);
        float *dy = op_test_alloc_floats(yn), *gy = op_test_alloc_floats(yn);
        float *my = op_test_alloc_floats(yn), *gd = op_test_alloc_floats(gn);
        float *md = op_test_alloc_floats(mn);
        op_test_fill_uniform(gqkv, gn, 21);
        op_test_fill_uniform(dy, yn, 22);
        repeat_heads(mqkv, gqkv, &gs);
        for (int f = 0; f < SB_FAMILY_COUNT; f++)
            for (int threads = 1; threads <= 3; threads += 2) {
                const sb_kernel_table *k = sb_kernels((sb_family)f);
                omp_set_num_threads(threads);
                k->attention_fwd(gy, gqkv, &gs);
                k->attention_fwd(my, mqkv, &ms);
                ck_assert_msg(op_test_same_bits(gy, my, yn), "%s fwd, mask %d",
                              sb_family_name((sb_family)f), mask);
                k->attention_bwd(gd, dy, gqkv, &gs);
                k->attention_bwd(md, dy, mqkv, &ms);
                for (int r = 0; r < rows; r++)
                    for (int c = 0; c < 6 * d; c++)
                        ck_assert(op_test_same_bits(&gd[r * gld + c], &md[r * mld + c], 1));
                for (int r = 0; r < rows; r++)
                    for (int part = 1; part <= 2; part++) /* k, v */
                        for (int g = 0; g < 2; g++)
                            for (int c = 0; c < d; c++) {
                                const float *heads = md + r * mld + part * 6 * d;
                                float sum = heads[(g * group) * d + c];
                                for (int m = 1; m < group; m++)
                                    sum += heads[(g * group + m) * d + c];
                                const float got = gd[r * gld + (6 + (part - 1) * 2 + g) * d + c];
                                ck_assert_msg(op_test_same_bits(&got, &sum, 1),
                                              "%s row %d part %d head %d col %d: %.9g, %.9g",
                                              sb_family_name((sb_family)f), r, part, g, c,
                                              (double)got, (double)sum);
                            }
            }
        free(gqkv), free(mqkv), free(dy), free(gy), free(my), free(gd), free(md);
    }
}
END_TEST

/* ---- families and threads -------------------------------------------------- */

/* 3 x 3 pairs and 37 tokens: det's 16-key chunks end inside rows, pairs do
 * not divide evenly among 2, 4, 5, 7 or 8 threads. */
static sb_op_call shaped(sb_op op, sb_attn_shape s)
{
    sb_op_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.attn = s;
    op_test_call_alloc(&c);
    return c;
}

static const sb_attn_shape mixed = {.b = 3, .t = 37, .h = 3, .d = 8};
/* 3 x 2 groups of two query heads, causal and not */
static const sb_attn_shape grouped = {.b = 3, .t = 37, .h = 4, .d = 8, .kv_heads = 2};
static const sb_attn_shape grouped_noncausal = {.b = 3, .t = 37, .h = 4, .d = 8, .kv_heads = 2,
                                                .noncausal = true};

/* Both ops at the mixed shape: det the same bits at 1..8 threads, det and
 * loose within the reordering bound of ref at 1..8 threads. */
START_TEST(test_families_across_threads)
{
    const sb_op ops[] = {SB_OP_attention_fwd, SB_OP_attention_bwd};
    const sb_attn_shape shapes[] = {mixed, grouped, grouped_noncausal};
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            sb_op_call c = shaped(ops[i], shapes[k]);
            op_test_check_det_bitwise(&c, 8);
            op_test_check_families_within_bound(&c, 8);
            op_test_call_free(&c);
        }
}
END_TEST

/* Up to 16 tokens every sum is one det chunk: det is ref, bit for bit; and
 * loose on one thread is one chunk per sum at any length, so it is ref's
 * plain loops at shapes that take every block of the vector loops (attn.h:
 * 32 and 16 keys or columns, and the rest one at a time). */
START_TEST(test_one_chunk_is_ref)
{
    const sb_op ops[] = {SB_OP_attention_fwd, SB_OP_attention_bwd};
    const sb_attn_shape loose_shapes[] = {mixed, {.b = 1, .t = 53, .h = 2, .d = 48},
                                          {.b = 2, .t = 40, .h = 1, .d = 37},
                                          {.b = 1, .t = 20, .h = 2, .d = 24},
                                          grouped, grouped_noncausal};
    for (size_t i = 0; i < 2; i++) {
        for (int kv = 1; kv <= 2; kv++) {
            sb_op_call c = shaped(ops[i], (sb_attn_shape){.b = 2, .t = 16, .h = 2, .d = 8,
                                                          .kv_heads = kv, .noncausal = kv == 1});
            float *ref = op_test_run(&c, SB_FAMILY_REF, 1);
            float *det = op_test_run(&c, SB_FAMILY_DET, 3);
            ck_assert_msg(op_test_same_bits(ref, det, sb_tensor_count(&c.out[0])), "%s, kv %d",
                          sb_op_name(ops[i]), kv);
            free(ref), free(det);
            op_test_call_free(&c);
        }
        for (size_t k = 0; k < sizeof loose_shapes / sizeof loose_shapes[0]; k++) {
            sb_op_call c = shaped(ops[i], loose_shapes[k]);
            float *ref = op_test_run(&c, SB_FAMILY_REF, 1);
            float *loose = op_test_run(&c, SB_FAMILY_LOOSE, 1);
            ck_assert_msg(op_test_same_bits(ref, loose, sb_tensor_count(&c.out[0])),
                          "%s, t %d d %d", sb_op_name(ops[i]), loose_shapes[k].t,
                          loose_shapes[k].d);
            free(ref), free(loose);
            op_test_call_free(&c);
        }
    }
}
END_TEST

/* The model's shape (t 64, d 32) with the loose family at 2 threads: its
 * sums have other chunks than det's, and must still be within bound. */
START_TEST(test_model_shape_within_refd_bound)
{
    const sb_op ops[] = {SB_OP_attention_fwd, SB_OP_attention_bwd};
    for (size_t i = 0; i < 2; i++) {
        sb_op_call c = shaped(ops[i], (sb_attn_shape){.b = 1, .t = 64, .h = 2, .d = 32});
        const size_t n = sb_tensor_count(&c.out[0]);
        double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
        ck_assert(value && bound);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
        for (int f = 0; f < SB_FAMILY_COUNT; f++) {
            float *got = op_test_run(&c, (sb_family)f, 2);
            for (size_t e = 0; e < n; e++)
                if (!(fabs((double)got[e] - value[e]) <= bound[e]))
                    ck_abort_msg("%s %s [%zu]: %.9g, double %.12g, bound %.3g",
                                 sb_op_name(ops[i]), sb_family_name((sb_family)f), e,
                                 (double)got[e], value[e], bound[e]);
            free(got);
        }
        free(value), free(bound);
        op_test_call_free(&c);
    }
}
END_TEST

/* Logits of +-1000 (q and k of magnitude ~45, d 1: scale 1) stay finite:
 * the row max is subtracted before expf. */
START_TEST(test_large_scores_finite)
{
    const sb_attn_shape s = {.b = 1, .t = 3, .h = 1, .d = 1};
    const float qkv[9] = {30, 30, 1, -40, 25, 2, 35, -30, 3};
    float y[3];
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernels((sb_family)f)->attention_fwd(y, qkv, &s);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(isfinite(y[i]), "%s y[%d]", sb_family_name((sb_family)f), i);
        /* query 2 (q 35) with keys 30, 25, -30: scores 1050, 875, -1050 */
        ck_assert(op_test_feq(y[2], 1.0f));
    }
}
END_TEST

Suite *make_attn_suite(void)
{
    Suite *s = suite_create("attn");
    TCase *tc = tcase_create("values");
    tcase_add_test(tc, test_exact_by_hand);
    tcase_add_test(tc, test_softmax_by_hand);
    tcase_add_test(tc, test_gradient_finite_difference);
    tcase_add_test(tc, test_large_scores_finite);
    tcase_add_test(tc, test_noncausal_sees_later_keys);
    suite_add_tcase(s, tc);
    tc = tcase_create("families");
    tcase_add_test(tc, test_families_across_threads);
    tcase_add_test(tc, test_one_chunk_is_ref);
    tcase_add_test(tc, test_model_shape_within_refd_bound);
    tcase_add_test(tc, test_grouped_is_repeated_heads);
    suite_add_tcase(s, tc);
    return s;
}
