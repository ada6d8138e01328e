/* The negative log-likelihood (mean, sum, none; class weights; ignore
 * index; the (N, C, d) layout) and its gradients: hand values exact in
 * every family, det and loose within the bound of ref and det bitwise at
 * 1..8 threads, loose moving with the thread count, the mean against its
 * definition in double, each gradient the transpose of its loss, every
 * family within the double evaluation's bound, and log-softmax followed by
 * the mean as the cross-entropy. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "loss/nll.h"
#include "op_test.h"
#include "sb_kernels.h"

Suite *make_loss_suite(void);

static const sb_op nll_ops[] = {SB_OP_nll_loss_mean, SB_OP_nll_loss_sum, SB_OP_nll_loss_none,
                                SB_OP_nll_loss_mean_bwd, SB_OP_nll_loss_sum_bwd,
                                SB_OP_nll_loss_none_bwd};
#define N_OPS (sizeof nll_ops / sizeof nll_ops[0])

/* (N, C), (N, C, d), weighted or not, an ignored class or none, one row */
static const sb_nll_shape shapes[] = {
    {.n = 1000, .k = 10, .d = 1, .ignore_index = -100, .weighted = false},
    {.n = 1000, .k = 10, .d = 1, .ignore_index = 3, .weighted = true},
    {.n = 37, .k = 5, .d = 29, .ignore_index = 0, .weighted = true},
    {.n = 3, .k = 4, .d = 7, .ignore_index = -100, .weighted = false},
    {.n = 1, .k = 1, .d = 1, .ignore_index = -100, .weighted = true},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* Two rows of three classes, two positions each (logprob [2][3][2]):
 *   row 0: class columns (-1, -2, -4) at p = 0, (-8, -0.5, -0.25) at p = 1
 *   row 1: (-3, -6, -1) at p = 0, (-2, -4, -16) at p = 1
 * labels (0, 1; 2, 1), weights (2, 0.5, 4), ignore_index 1:
 *   weighted terms (2, 0; 4, 0), weights (2, 0; 4, 0): sum 6, mean 1
 *   unweighted terms (1, 0; 1, 0): sum 2, count 2, mean 1
 * and with nothing ignored, unweighted: (1, 0.5, 1, 4): sum 6.5, mean
 * 1.625; weighted: (2, 0.25, 4, 2) over weights 2 + 0.5 + 4 + 0.5 = 7:
 * 8.25 / 7, one rounding. All exact but the last. */
START_TEST(test_hand_values)
{
    const float lp[12] = {-1, -8, -2, -0.5f, -4, -0.25f, -3, -2, -6, -4, -1, -16};
    const int32_t labels[4] = {0, 1, 2, 1};
    const float w[3] = {2, 0.5f, 4};
    const struct {
        int ignore;
        bool weighted;
        float mean, sum, none[4];
    } want[] = {
        {1, true, 1.0f, 6.0f, {2, 0, 4, 0}},
        {1, false, 1.0f, 2.0f, {1, 0, 1, 0}},
        {-100, false, 1.625f, 6.5f, {1, 0.5f, 1, 4}},
        {-100, true, 8.25f / 7.0f, 8.25f, {2, 0.25f, 4, 2}},
    };
    for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
        const sb_nll_shape s = {.n = 2, .k = 3, .d = 2, .ignore_index = want[c].ignore,
                                .weighted = want[c].weighted};
        for (int f = 0; f < SB_FAMILY_COUNT; f++)
            for (int threads = 1; threads <= 3; threads += 2) {
                const sb_kernel_table *k = sb_kernels((sb_family)f);
                float mean, sum, none[4];
                omp_set_num_threads(threads);
                k->nll_loss_mean(&mean, lp, labels, w, &s);
                k->nll_loss_sum(&sum, lp, labels, w, &s);
                k->nll_loss_none(none, lp, labels, w, &s);
                const char *name = sb_family_name((sb_family)f);
                ck_assert_msg(op_test_feq(mean, want[c].mean), "%zu %s mean %a", c, name,
                              (double)mean);
                ck_assert_msg(op_test_feq(sum, want[c].sum), "%zu %s sum %a", c, name,
                              (double)sum);
                ck_assert_msg(op_test_same_bits(none, want[c].none, 4), "%zu %s none", c, name);
            }
    }
}
END_TEST

/* Every label ignored: the sum is 0 and the mean 0 / 0, NaN (PyTorch's). */
START_TEST(test_all_ignored)
{
    const sb_nll_shape s = {.n = 3, .k = 2, .d = 1, .ignore_index = 1, .weighted = false};
    const float lp[6] = {-1, -2, -3, -4, -5, -6};
    const int32_t labels[3] = {1, 1, 1};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float mean, sum;
        sb_kernels((sb_family)f)->nll_loss_mean(&mean, lp, labels, NULL, &s);
        sb_kernels((sb_family)f)->nll_loss_sum(&sum, lp, labels, NULL, &s);
        ck_assert(isnan(mean) && op_test_feq(sum, 0.0f));
    }
}
END_TEST

static void call_new(sb_op_call *c, sb_op op, sb_nll_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->nll = s;
    op_test_call_alloc(c);
}

/* det and loose within the bound of ref at 1..8 threads, det bitwise */
START_TEST(test_families)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, nll_ops[o], shapes[_i]);
        op_test_check_families_within_bound(&c, 8);
        op_test_check_det_bitwise(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST

/* loose adds per-thread partials: its sums move with the thread count (the
 * mean's gradient through its weight sum) */
START_TEST(test_loose_depends_on_threads)
{
    static const sb_op moving[] = {SB_OP_nll_loss_mean, SB_OP_nll_loss_sum,
                                   SB_OP_nll_loss_mean_bwd};
    for (size_t o = 0; o < sizeof moving / sizeof moving[0]; o++) {
        sb_op_call c;
        call_new(&c, moving[o], shapes[1]);
        op_test_check_loose_moves(&c, 4);
        op_test_call_free(&c);
    }
}
END_TEST

/* The gradients of the hand example above (test_hand_values), every value
 * exact: with ignore_index 1 and weights, positions (0, 0) and (1, 0) kept
 * (labels 0 and 2, weights 2 and 4, W = 6) at offsets 0 and (1 3 + 2) 2 =
 * 10 of lp [2][3][2]: mean of g = 3, q = 0.5: -1 and -2; sum of g = 3: -6
 * and -12; none of g = (1, 2, 3, 4): -2 and -12. Unweighted and nothing
 * ignored, the mean of g = 3 over W = 4 puts -0.75 at every target:
 * offsets 0, 3 (label 1 at p = 1), 10, 9. */
START_TEST(test_grad_hand_values)
{
    const int32_t labels[4] = {0, 1, 2, 1};
    const float w[3] = {2, 0.5f, 4}, g = 3, none[4] = {1, 2, 3, 4};
    const sb_nll_shape s = {.n = 2, .k = 3, .d = 2, .ignore_index = 1, .weighted = true};
    const sb_nll_shape plain = {.n = 2, .k = 3, .d = 2, .ignore_index = -100};
    float want_mean[12] = {0}, want_sum[12] = {0}, want_none[12] = {0}, want_plain[12] = {0};
    want_mean[0] = -1, want_mean[10] = -2;
    want_sum[0] = -6, want_sum[10] = -12;
    want_none[0] = -2, want_none[10] = -12;
    want_plain[0] = want_plain[3] = want_plain[10] = want_plain[9] = -0.75f;
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads += 2) {
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            float mean[12], sum[12], per[12], pl[12];
            omp_set_num_threads(threads);
            k->nll_loss_mean_bwd(mean, &g, labels, w, &s);
            k->nll_loss_sum_bwd(sum, &g, labels, w, &s);
            k->nll_loss_none_bwd(per, none, labels, w, &s);
            k->nll_loss_mean_bwd(pl, &g, labels, NULL, &plain);
            const char *name = sb_family_name((sb_family)f);
            ck_assert_msg(op_test_same_bits(mean, want_mean, 12), "%s mean", name);
            ck_assert_msg(op_test_same_bits(sum, want_sum, 12), "%s sum", name);
            ck_assert_msg(op_test_same_bits(per, want_none, 12), "%s none", name);
            ck_assert_msg(op_test_same_bits(pl, want_plain, 12), "%s unweighted mean", name);
        }
}
END_TEST

/* Every label ignored: every gradient is 0, the mean's too (its W is 0,
 * but no position is kept to divide). */
START_TEST(test_grad_all_ignored)
{
    const sb_nll_shape s = {.n = 3, .k = 2, .d = 1, .ignore_index = 1, .weighted = false};
    const int32_t labels[3] = {1, 1, 1};
    const float g[3] = {1, 2, 3}, zero[6] = {0};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float d[6];
        sb_kernels((sb_family)f)->nll_loss_mean_bwd(d, g, labels, NULL, &s);
        ck_assert(op_test_same_bits(d, zero, 6));
        sb_kernels((sb_family)f)->nll_loss_none_bwd(d, g, labels, NULL, &s);
        ck_assert(op_test_same_bits(d, zero, 6));
    }
}
END_TEST

/* Each gradient is its loss's transpose: the loss is linear in lp, so
 * sum dlp lp = g loss (mean, sum) or sum_e g_e loss_e (none), in double
 * from the float outputs, within the roundings of both sides (each term
 * off by at most a few u of its magnitude, the sums' gamma(m)). det at 3
 * threads. */
START_TEST(test_grad_is_transpose)
{
    static const sb_op loss[3] = {SB_OP_nll_loss_mean, SB_OP_nll_loss_sum, SB_OP_nll_loss_none};
    for (int r = 0; r < 3; r++) {
        sb_op_call c;
        call_new(&c, loss[r], shapes[_i]);
        const float *lp = c.in[0].data;
        const size_t m = sb_nll_count(&c.nll), n = sb_tensor_count(&c.in[0]);
        float *l = op_test_run(&c, SB_FAMILY_DET, 3);
        float *g = op_test_alloc_floats(m), *dlp = op_test_alloc_floats(n);
        op_test_fill_rng(g, m, -1.0f, 1.0f, 23, (uint32_t)r);
        omp_set_num_threads(3);
        const sb_kernel_table *det = sb_kernels(SB_FAMILY_DET);
        if (r == 0)
            det->nll_loss_mean_bwd(dlp, g, c.in[1].data, c.in[2].data, &c.nll);
        else if (r == 1)
            det->nll_loss_sum_bwd(dlp, g, c.in[1].data, c.in[2].data, &c.nll);
        else
            det->nll_loss_none_bwd(dlp, g, c.in[1].data, c.in[2].data, &c.nll);
        double lhs = 0.0, rhs = 0.0, mag = 0.0;
        for (size_t e = 0; e < (r == 2 ? m : 1); e++)
            lhs += (double)g[e] * (double)l[e];
        for (size_t e = 0; e < n; e++) {
            rhs += (double)dlp[e] * (double)lp[e];
            mag += fabs((double)dlp[e] * (double)lp[e]);
        }
        const double tol = (8.0 * 0x1p-24 + 2.0 * sb_gamma((double)m)) * (mag + fabs(lhs));
        ck_assert_msg(fabs(lhs - rhs) <= tol, "%s shape %d: %g vs %g (tolerance %g)",
                      sb_op_name(loss[r]), _i, lhs, rhs, tol);
        free(l), free(g), free(dlp);
        op_test_call_free(&c);
    }
}
END_TEST

/* every gradient in every family within its double evaluation's bound */
START_TEST(test_grad_within_double_bound)
{
    for (size_t o = 3; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, nll_ops[o], shapes[_i]);
        const size_t n = sb_tensor_count(&c.out[0]);
        double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
        ck_assert(value && bound);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
        for (int f = 0; f < SB_FAMILY_COUNT; f++) {
            float *got = op_test_run(&c, (sb_family)f, 3);
            for (size_t e = 0; e < n; e++)
                ck_assert_msg(fabs((double)got[e] - value[e]) <= bound[e], "%s %s [%zu]",
                              sb_op_name(c.op), sb_family_name((sb_family)f), e);
            free(got);
        }
        free(value), free(bound);
        op_test_call_free(&c);
    }
}
END_TEST

/* The weighted mean with an ignored class against its definition in
 * double, log-probabilities in [-8, 0) and weights in [0.5, 1.5) as a
 * model's: within the double evaluation's bound, which is far below the
 * loss (a bound as large as the value would pass anything). */
START_TEST(test_mean_against_double)
{
    sb_op_call c;
    call_new(&c, SB_OP_nll_loss_mean, shapes[2]);
    op_test_fill_rng(c.in[0].data, sb_tensor_count(&c.in[0]), -8.0f, 0.0f, 21, 0);
    op_test_fill_rng(c.in[2].data, sb_tensor_count(&c.in[2]), 0.5f, 1.5f, 21, 1);
    const float *lp = c.in[0].data, *w = c.in[2].data;
    const int32_t *y = c.in[1].data;
    const sb_nll_shape *s = &c.nll;
    double num = 0.0, den = 0.0;
    for (int i = 0; i < s->n; i++)
        for (int p = 0; p < s->d; p++) {
            const int32_t label = y[i * s->d + p];
            if (label == s->ignore_index)
                continue;
            num -= (double)w[label] * (double)lp[((size_t)i * s->k + (size_t)label) * s->d + p];
            den += (double)w[label];
        }
    double value, bound;
    sb_refd_eval(&value, &bound, &c, 0, SB_FAMILY_DET);
    ck_assert(fabs(value - num / den) <= 1e-12 * fabs(num / den));
    ck_assert(bound > 0.0 && bound < 1e-3 * fabs(value));
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float *got = op_test_run(&c, (sb_family)f, 3);
        ck_assert_msg(fabs((double)got[0] - num / den) <= bound, "%s: %a vs %a (bound %g)",
                      sb_family_name((sb_family)f), (double)got[0], num / den, bound);
        free(got);
    }
    op_test_call_free(&c);
}
END_TEST

/* log-softmax then the unweighted mean NLL is the cross-entropy: within the
 * two ops' bounds of xent_loss on the same logits */
START_TEST(test_log_softmax_nll_is_xent)
{
    enum { N = 257, K = 10 };
    const sb_class_shape cs = {.n = N, .k = K};
    const sb_nll_shape ns = {.n = N, .k = K, .d = 1, .ignore_index = -100};
    float *z = op_test_alloc_floats(N * K), *lp = op_test_alloc_floats(N * K);
    int32_t labels[N];
    op_test_fill_rng(z, N * K, -6.0f, 6.0f, 17, 0);
    for (int i = 0; i < N; i++)
        labels[i] = (int32_t)((i * 7) % K);
    const sb_kernel_table *det = sb_kernels(SB_FAMILY_DET);
    float xent, nll, xent_bound, nll_bound;
    det->log_softmax_fwd(lp, z, &cs);
    det->nll_loss_mean(&nll, lp, labels, NULL, &ns);
    det->xent_loss(&xent, z, labels, &cs);
    sb_xent_loss_bound(&xent_bound, z, labels, &cs);
    sb_nll_loss_mean_bound(&nll_bound, lp, labels, NULL, &ns);
    /* each log-probability within its bound (about 2(k+4)u) moves the mean
     * by as much */
    const float lp_moves = 2.0f * (K + 4) * 0x1p-24f * (1.0f + fabsf(nll));
    ck_assert_msg(fabsf(xent - nll) <= xent_bound + nll_bound + lp_moves, "%a vs %a",
                  (double)xent, (double)nll);
    free(z);
    free(lp);
}
END_TEST

Suite *make_loss_suite(void)
{
    Suite *s = suite_create("loss");
    TCase *def = tcase_create("definitions");
    tcase_add_test(def, test_hand_values);
    tcase_add_test(def, test_all_ignored);
    tcase_add_test(def, test_mean_against_double);
    tcase_add_test(def, test_log_softmax_nll_is_xent);
    tcase_add_test(def, test_grad_hand_values);
    tcase_add_test(def, test_grad_all_ignored);
    suite_add_tcase(s, def);
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_families, 0, N_SHAPES);
    tcase_add_test(tc, test_loose_depends_on_threads);
    tcase_add_loop_test(tc, test_grad_is_transpose, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_grad_within_double_bound, 0, N_SHAPES);
    suite_add_tcase(s, tc);
    return s;
}
