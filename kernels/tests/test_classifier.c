/* softmax, log-softmax and its gradient (rows of classes and ONNX's
 * (N, C, d) layout), cross-entropy, its gradient and accuracy: det and loose against
 * ref (within the op's reordering bound where the op reduces, exact where it
 * does not), det bitwise across thread counts, loose xent moving with the
 * thread count, extreme logits, NaN rules, label checks, and the gradient
 * against finite differences of the loss in double. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "op_test.h"
#include "sb_kernels.h"
#include "sb_refd.h"
#include "sb_rng.h"

Suite *make_classifier_suite(void);

#define MAX_THREADS 16
#define U 0x1p-24   /* unit roundoff of float */
#define INPUT_SEED 3   /* the RNG seed of this file's inputs (op_test_fill_rng) */

static const sb_family parallel_families[] = {SB_FAMILY_DET, SB_FAMILY_LOOSE};
#define N_PARALLEL (sizeof parallel_families / sizeof parallel_families[0])

static int32_t *make_labels(int n, int k, uint32_t step)
{
    int32_t *y = malloc((size_t)n * sizeof *y);
    ck_assert_ptr_nonnull(y);
    for (int i = 0; i < n; i++)
        y[i] = (int32_t)(sb_rng_u32(3, SB_STREAM_CASE_INPUT + 1, step, (uint64_t)i) % (uint32_t)k);
    return y;
}

/* ---- log-softmax ---------------------------------------------------------- */

static const sb_class_shape log_softmax_shapes[] = {
    {.n = 1001, .k = 10}, {.n = 7, .k = 1000}, {.n = 1, .k = 1},
    {.n = 5, .k = 300, .d = 7}, {.n = 3, .k = 1, .d = 4}, {.n = 2, .k = 17, .d = 1},
};
#define N_LOG_SOFTMAX_SHAPES (sizeof log_softmax_shapes / sizeof log_softmax_shapes[0])

/* det and loose within the bound of ref at 1..8 threads, det bitwise, the
 * forward and the gradient */
START_TEST(test_log_softmax_families)
{
    for (size_t i = 0; i < N_LOG_SOFTMAX_SHAPES; i++)
        for (int bwd = 0; bwd < 2; bwd++) {
            sb_op_call c = {.op = bwd ? SB_OP_log_softmax_bwd : SB_OP_log_softmax_fwd,
                            .cls = log_softmax_shapes[i]};
            op_test_call_alloc(&c);
            op_test_check_families_within_bound(&c, 8);
            op_test_check_det_bitwise(&c, 8);
            op_test_call_free(&c);
        }
}
END_TEST

/* The (N, C, d) layout is rows of classes d apart: z [n][k][d] gives,
 * in every family, the bits of the n d rows z[i][.][p] laid out as
 * [n d][k] (the forward and the gradient) */
START_TEST(test_log_softmax_positions_are_rows)
{
    enum { N = 3, K = 11, D = 5 };
    const sb_class_shape pos = {.n = N, .k = K, .d = D}, rows = {.n = N * D, .k = K};
    float z[N * K * D], dy[N * K * D], zr[N * K * D], dyr[N * K * D];
    op_test_fill_rng(z, N * K * D, -4.0f, 4.0f, INPUT_SEED, 11);
    op_test_fill_rng(dy, N * K * D, -1.0f, 1.0f, INPUT_SEED, 12);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < K; j++)
            for (int p = 0; p < D; p++) {
                zr[(i * D + p) * K + j] = z[(i * K + j) * D + p];
                dyr[(i * D + p) * K + j] = dy[(i * K + j) * D + p];
            }
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *t = sb_kernels((sb_family)f);
        float lp[N * K * D], lpr[N * K * D], dz[N * K * D], dzr[N * K * D];
        omp_set_num_threads(3);
        t->log_softmax_fwd(lp, z, &pos);
        t->log_softmax_fwd(lpr, zr, &rows);
        t->log_softmax_bwd(dz, dy, lp, &pos);
        t->log_softmax_bwd(dzr, dyr, lpr, &rows);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < K; j++)
                for (int p = 0; p < D; p++) {
                    const int a = (i * K + j) * D + p, b = (i * D + p) * K + j;
                    ck_assert(op_test_same_bits(&lp[a], &lpr[b], 1));
                    ck_assert(op_test_same_bits(&dz[a], &dzr[b], 1));
                }
    }
}
END_TEST

/* The gradient by hand: lp = 0 has exp 1 and lp = -inf exp 0, so with
 * dy = (1, 2, 4), sum 7, lp (0, -inf, 0) gives (1 - 7, 2 - 0, 4 - 7) and
 * lp (0, 0, 0) gives (-6, -5, -3); the classes of a positions' layout
 * [1][3][2] alike. Every step exact. */
START_TEST(test_log_softmax_bwd_values)
{
    const sb_class_shape rows = {.n = 2, .k = 3}, pos = {.n = 1, .k = 3, .d = 2};
    const float lp[6] = {0, -INFINITY, 0, 0, 0, 0}, dy[6] = {1, 2, 4, 1, 2, 4};
    const float want[6] = {-6, 2, -3, -6, -5, -3};
    const float lp_pos[6] = {0, 0, -INFINITY, 0, 0, 0}, dy_pos[6] = {1, 1, 2, 2, 4, 4};
    const float want_pos[6] = {-6, -6, 2, -5, -3, -3};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float dz[6];
        sb_kernels((sb_family)f)->log_softmax_bwd(dz, dy, lp, &rows);
        ck_assert(op_test_same_bits(dz, want, 6));
        sb_kernels((sb_family)f)->log_softmax_bwd(dz, dy_pos, lp_pos, &pos);
        ck_assert(op_test_same_bits(dz, want_pos, 6));
    }
}
END_TEST

/* The gradient of the log-softmax of z, dz_j = dy_j - p_j sum dy with p
 * the softmax of z in double, from det's log-probabilities of z: within
 * the gradient's double-evaluation bound plus what the log-probabilities'
 * own bound moves exp(lp) by (their bound, relative, times the term). */
START_TEST(test_log_softmax_bwd_against_double)
{
    for (size_t i = 0; i < N_LOG_SOFTMAX_SHAPES; i++) {
        sb_op_call c = {.op = SB_OP_log_softmax_bwd, .cls = log_softmax_shapes[i]};
        op_test_call_alloc(&c);
        const sb_class_shape *s = &c.cls;
        const size_t n = sb_tensor_count(&c.out[0]), d = s->d > 1 ? (size_t)s->d : 1;
        float *z = op_test_alloc_floats(n), *lp = c.in[1].data;
        const float *dy = c.in[0].data;
        op_test_fill_rng(z, n, -6.0f, 6.0f, INPUT_SEED, 13);
        sb_op_call fwd = {.op = SB_OP_log_softmax_fwd, .cls = *s};
        ck_assert_int_eq(sb_op_call_describe(&fwd), SB_OK);
        fwd.in[0].data = z;
        double *lp_value = malloc(n * sizeof *lp_value), *lp_bound = malloc(n * sizeof *lp_bound);
        double *value = malloc(n * sizeof *value), *bound = malloc(n * sizeof *bound);
        ck_assert(lp_value && lp_bound && value && bound);
        sb_refd_eval(lp_value, lp_bound, &fwd, 0, SB_FAMILY_DET);
        omp_set_num_threads(3);
        sb_kernels(SB_FAMILY_DET)->log_softmax_fwd(lp, z, s);
        sb_refd_eval(value, bound, &c, 0, SB_FAMILY_DET);
        float *dz = op_test_run(&c, SB_FAMILY_DET, 3);
        for (size_t row = 0; row < (size_t)s->n * d; row++) {
            const size_t at = (row / d) * (size_t)s->k * d + row % d;
            double sum = 0.0, mag = 0.0;
            for (size_t j = 0; j < (size_t)s->k; j++) {
                sum += (double)dy[at + j * d];
                mag += fabs((double)dy[at + j * d]);
            }
            for (size_t j = 0; j < (size_t)s->k; j++) {
                const size_t e = at + j * d;
                const double p = exp(lp_value[e]);
                const double want = (double)dy[e] - p * sum;
                const double tol = bound[e] + p * expm1(lp_bound[e]) * mag * 1.01;
                ck_assert_msg(fabs((double)dz[e] - want) <= tol, "shape %zu [%zu]: %a vs %a",
                              i, e, (double)dz[e], want);
            }
        }
        free(z), free(dz), free(lp_value), free(lp_bound), free(value), free(bound);
        op_test_call_free(&c);
    }
}
END_TEST

/* Hand values: a row of four equal logits is -logf(4) throughout, bit for
 * bit; logits (1000, 0, 1000, 0) give -logf(2) and -1000 - logf(2)
 * (exp(-1000) is 0 in float, the sum 2), where log(softmax) would take the
 * log of 0; a NaN logit makes its row NaN. */
START_TEST(test_log_softmax_values)
{
    const sb_class_shape s = {.n = 3, .k = 4};
    const float z[12] = {5, 5, 5, 5, 1000, 0, 1000, 0, 1, NAN, 2, 3};
    const float quarter = -logf(4.0f);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float lp[12];
        sb_kernels((sb_family)f)->log_softmax_fwd(lp, z, &s);
        for (int j = 0; j < 4; j++)
            ck_assert(op_test_feq(lp[j], quarter));
        ck_assert(op_test_feq(lp[4], -logf(2.0f)) && op_test_feq(lp[5], -1000.0f - logf(2.0f)));
        for (int j = 8; j < 12; j++)
            ck_assert(isnan(lp[j]));
    }
}
END_TEST

/* The row sum in reverse, with the kernels' own steps, is another order: it
 * stays within the bound, and differs from ref's somewhere on 2000 rows. */
START_TEST(test_log_softmax_bound_covers_reordering)
{
    const sb_class_shape s = {.n = 2000, .k = 13};
    const size_t nk = (size_t)s.n * (size_t)s.k;
    float *z = op_test_alloc_floats(nk), *want = op_test_alloc_floats(nk);
    float *bound = op_test_alloc_floats(nk);
    op_test_fill_rng(z, nk, -4.0f, 4.0f, INPUT_SEED, 5);
    sb_kernels(SB_FAMILY_REF)->log_softmax_fwd(want, z, &s);
    sb_log_softmax_fwd_bound(bound, z, &s);
    size_t differ = 0;
    for (int i = 0; i < s.n; i++) {
        const float *r = z + (size_t)i * s.k;
        float m = r[0], rev = 0.0f;
        for (int j = 1; j < s.k; j++)
            m = r[j] > m ? r[j] : m;
        for (int j = s.k - 1; j >= 0; j--)
            rev += expf(r[j] - m);
        const float ls = logf(rev);
        for (int j = 0; j < s.k; j++) {
            const size_t at = (size_t)i * s.k + (size_t)j;
            const float a = (r[j] - m) - ls;
            ck_assert_msg(fabsf(a - want[at]) <= bound[at], "reverse order beyond bound at %zu", at);
            /* a bound of 0 would call every reordering a bug, a huge one
             * would excuse every bug: about 2(k-1)u plus the roundings */
            ck_assert(bound[at] > 0.0f &&
                      bound[at] <= 2.0f * (float)(s.k + 4) * (float)U * (1.0f + fabsf(want[at])));
            differ += !op_test_feq(a, want[at]);
        }
    }
    ck_assert_uint_gt(differ, 0);
    free(z), free(want), free(bound);
}
END_TEST

/* ---- softmax -------------------------------------------------------------- */

START_TEST(test_softmax_families_within_bound)
{
    const sb_class_shape s = {.n = 1001, .k = 10};
    const size_t nk = (size_t)s.n * (size_t)s.k;
    float *z = op_test_alloc_floats(nk), *want = op_test_alloc_floats(nk);
    float *bound = op_test_alloc_floats(nk);
    float *p = op_test_alloc_floats(nk), *det1 = op_test_alloc_floats(nk);
    op_test_fill_rng(z, nk, -8.0f, 8.0f, INPUT_SEED, 1);
    sb_kernels(SB_FAMILY_REF)->softmax_fwd(want, z, &s);
    sb_softmax_fwd_bound(bound, z, &s);
    for (size_t i = 0; i < nk; i++) {
        ck_assert(isfinite(want[i]) && want[i] >= 0.0f && want[i] <= 1.0f);
        /* the bound is about 2(k-1)u*p + 2u*p (bound.c); a bound of 0 would
         * call every reordering a bug, a huge one would excuse every bug */
        ck_assert(bound[i] > 0.0f && bound[i] <= 2.0f * (float)(s.k + 1) * (float)U * want[i]);
    }
    sb_kernels(SB_FAMILY_DET)->softmax_fwd(det1, z, &s);
    for (size_t f = 0; f < N_PARALLEL; f++) {
        const sb_kernel_table *k = sb_kernels(parallel_families[f]);
        for (int t = 1; t <= MAX_THREADS; t++) {
            omp_set_num_threads(t);
            k->softmax_fwd(p, z, &s);
            for (size_t i = 0; i < nk; i++)
                ck_assert_msg(fabsf(p[i] - want[i]) <= bound[i], "%s %d threads [%zu]",
                              sb_family_name(parallel_families[f]), t, i);
            if (parallel_families[f] == SB_FAMILY_DET)
                ck_assert_msg(op_test_same_bits(p, det1, nk), "det softmax moved at %d threads", t);
        }
    }
    free(z), free(want), free(bound), free(p), free(det1);
}
END_TEST

START_TEST(test_softmax_bound_covers_reordering)
{
    /* The row sum in reverse and in pairs, done here by hand with the
     * kernels' own steps, is another valid order: it must stay within the
     * bound, and on this many rows it must actually differ somewhere (else
     * the check would test nothing). Wide logits make the terms uneven. */
    const sb_class_shape s = {.n = 2000, .k = 13};
    const size_t nk = (size_t)s.n * (size_t)s.k;
    float *z = op_test_alloc_floats(nk), *want = op_test_alloc_floats(nk);
    float *bound = op_test_alloc_floats(nk);
    op_test_fill_rng(z, nk, -4.0f, 4.0f, INPUT_SEED, 2);
    sb_kernels(SB_FAMILY_REF)->softmax_fwd(want, z, &s);
    sb_softmax_fwd_bound(bound, z, &s);
    size_t differ = 0;
    for (int i = 0; i < s.n; i++) {
        const float *r = z + (size_t)i * s.k;
        float m = r[0], e[13];
        for (int j = 1; j < s.k; j++)
            m = r[j] > m ? r[j] : m;
        for (int j = 0; j < s.k; j++)
            e[j] = expf(r[j] - m);
        float rev = 0.0f, pair = 0.0f;
        for (int j = s.k - 1; j >= 0; j--)
            rev += e[j];
        for (int j = 0; j + 1 < s.k; j += 2)
            pair += e[j] + e[j + 1];
        pair += e[s.k - 1]; /* k is odd */
        for (int j = 0; j < s.k; j++) {
            const size_t at = (size_t)i * s.k + (size_t)j;
            const float a = e[j] / rev, b = e[j] / pair;
            ck_assert_msg(fabsf(a - want[at]) <= bound[at], "reverse order beyond bound at %zu", at);
            ck_assert_msg(fabsf(b - want[at]) <= bound[at], "pairwise order beyond bound at %zu", at);
            differ += !op_test_feq(a, want[at]) || !op_test_feq(b, want[at]);
        }
    }
    ck_assert_uint_gt(differ, 0);
    free(z), free(want), free(bound);
}
END_TEST

START_TEST(test_softmax_extreme_logits)
{
    const sb_class_shape s = {.n = 5, .k = 4};
    const float z[5][4] = {
        {1000.0f, -1000.0f, 0.0f, 0.0f},        /* naive exp overflows and underflows */
        {-1000.0f, -1000.0f, -1000.0f, -1000.0f},
        {89.0f, 88.0f, 0.0f, -89.0f},          /* expf(89) is Inf in float */
        {FLT_MAX, -FLT_MAX, 0.0f, 1.0f},        /* z - m overflows to -Inf: exp gives 0 */
        {0.5f, 0.5f, 0.5f, 0.5f},
    };
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float p[5][4];
        sb_kernels((sb_family)f)->softmax_fwd(&p[0][0], &z[0][0], &s);
        for (int i = 0; i < s.n; i++)
            for (int j = 0; j < s.k; j++)
                ck_assert_msg(isfinite(p[i][j]), "row %d not finite", i);
        /* exact: the max term is exp(0) = 1, the others underflow to 0 */
        const float one_hot[4] = {1.0f, 0.0f, 0.0f, 0.0f};
        ck_assert(op_test_same_bits(p[0], one_hot, 4));
        ck_assert(op_test_same_bits(p[3], one_hot, 4));
        /* equal logits: 1/4 exactly */
        for (int j = 0; j < 4; j++)
            ck_assert(op_test_feq(p[1][j], 0.25f) && op_test_feq(p[4][j], 0.25f));
        /* p0/p1 = e within the few roundings of two quotients of exps */
        ck_assert(fabs((double)p[2][0] / (double)p[2][1] - exp(1.0)) <= 8.0 * U * exp(1.0));
    }
}
END_TEST

START_TEST(test_softmax_nan_row)
{
    /* documented: a NaN logit gives a NaN row, other rows are unaffected */
    const sb_class_shape s = {.n = 2, .k = 3};
    const float z[6] = {1.0f, NAN, 2.0f, 0.0f, 0.0f, 0.0f};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float p[6];
        sb_kernels((sb_family)f)->softmax_fwd(p, z, &s);
        for (int j = 0; j < 3; j++) {
            ck_assert(isnan(p[j]));
            ck_assert(isfinite(p[3 + j]));
        }
    }
}
END_TEST

/* ---- cross-entropy -------------------------------------------------------- */

static float xent_at(sb_family f, int threads, const float *z, const int32_t *y,
                     const sb_class_shape *s)
{
    omp_set_num_threads(threads);
    float loss;
    sb_kernels(f)->xent_loss(&loss, z, y, s);
    return loss;
}

START_TEST(test_xent_families_within_bound)
{
    /* 4099 rows: odd, and no block or thread count divides it */
    const sb_class_shape s = {.n = 4099, .k = 10};
    const size_t nk = (size_t)s.n * (size_t)s.k;
    float *z = op_test_alloc_floats(nk);
    int32_t *y = make_labels(s.n, s.k, 3);
    op_test_fill_rng(z, nk, -6.0f, 6.0f, INPUT_SEED, 3);
    float want, bound;
    sb_kernels(SB_FAMILY_REF)->xent_loss(&want, z, y, &s);
    sb_xent_loss_bound(&bound, z, y, &s);
    ck_assert(isfinite(want) && want > 0.0f);
    ck_assert(bound > 0.0f && isfinite(bound));
    const float det1 = xent_at(SB_FAMILY_DET, 1, z, y, &s);
    for (size_t f = 0; f < N_PARALLEL; f++)
        for (int t = 1; t <= MAX_THREADS; t++) {
            const float loss = xent_at(parallel_families[f], t, z, y, &s);
            ck_assert_msg(fabsf(loss - want) <= bound, "%s %d threads: %a vs ref %a, bound %a",
                          sb_family_name(parallel_families[f]), t, (double)loss, (double)want,
                          (double)bound);
            if (parallel_families[f] == SB_FAMILY_DET)
                ck_assert_msg(op_test_same_bits(&loss, &det1, 1), "det xent moved at %d threads",
                              t);
        }

    /* another valid order, by hand: rows in reverse, each row's sum reversed */
    float rev = 0.0f;
    for (int i = s.n - 1; i >= 0; i--) {
        const float *r = z + (size_t)i * s.k;
        float m = r[0], e = 0.0f;
        for (int j = 1; j < s.k; j++)
            m = r[j] > m ? r[j] : m;
        for (int j = s.k - 1; j >= 0; j--)
            e += expf(r[j] - m);
        rev += logf(e) + (m - r[y[i]]);
    }
    rev /= (float)s.n;
    ck_assert_msg(fabsf(rev - want) <= bound, "reversed order beyond bound");
    free(z), free(y);
}
END_TEST

START_TEST(test_xent_loose_follows_threads)
{
    /* The loose loss must show that its bits follow the thread count. With a
     * few rows the per-thread partial sums can round the same way as the
     * serial sum; with 100003 rows of loss ~2.3 the running sum reaches
     * ~2.3e5, where one float ulp is 2^-6, and splitting it into t partial
     * sums changes the roundings for some t in 2..16. Each result must still
     * lie within the reordering bound of ref. */
    const sb_class_shape s = {.n = 100003, .k = 10};
    const size_t nk = (size_t)s.n * (size_t)s.k;
    float *z = op_test_alloc_floats(nk);
    int32_t *y = make_labels(s.n, s.k, 4);
    op_test_fill_rng(z, nk, -3.0f, 3.0f, INPUT_SEED, 4);
    float want, bound;
    sb_kernels(SB_FAMILY_REF)->xent_loss(&want, z, y, &s);
    sb_xent_loss_bound(&bound, z, y, &s);
    const float one = xent_at(SB_FAMILY_LOOSE, 1, z, y, &s);
    const float det1 = xent_at(SB_FAMILY_DET, 1, z, y, &s);
    int moved = 0;
    for (int t = 1; t <= MAX_THREADS; t++) {
        const float loose = xent_at(SB_FAMILY_LOOSE, t, z, y, &s);
        const float det = xent_at(SB_FAMILY_DET, t, z, y, &s);
        ck_assert(fabsf(loose - want) <= bound);
        ck_assert_msg(op_test_same_bits(&det, &det1, 1), "det xent moved at %d threads", t);
        moved += !op_test_same_bits(&loose, &one, 1);
    }
    ck_assert_msg(moved > 0, "loose xent gave the same bits for 1..%d threads", MAX_THREADS);
    free(z), free(y);
}
END_TEST

START_TEST(test_xent_extreme_logits)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        /* confident and wrong: log(1 + e^-2000) = 0 and 1000 - (-1000) are
         * exact, so the loss is 2000 exactly; confident and right: 0 */
        const sb_class_shape two = {.n = 1, .k = 2};
        const float z[2] = {1000.0f, -1000.0f};
        const int32_t wrong = 1, right = 0;
        float loss;
        k->xent_loss(&loss, z, &wrong, &two);
        ck_assert(isfinite(loss) && op_test_feq(loss, 2000.0f));
        k->xent_loss(&loss, z, &right, &two);
        ck_assert(op_test_feq(loss, 0.0f));
        const float far[2] = {1e30f, -1e30f};
        k->xent_loss(&loss, far, &wrong, &two);
        ck_assert(isfinite(loss) && op_test_feq(loss, 2e30f));
        /* equal logits, two identical rows: l = logf(4) per row, the sum 2l
         * and the halving are exact, logf errs by under one ulp */
        const sb_class_shape flat = {.n = 2, .k = 4};
        const float zf[8] = {0};
        const int32_t yf[2] = {1, 3};
        k->xent_loss(&loss, zf, yf, &flat);
        ck_assert(fabs((double)loss - log(4.0)) <= 2.0 * U * log(4.0));
    }
}
END_TEST

/* ---- the gradient ---------------------------------------------------------- */

/* The definition of xent_loss, in double: mean_i logsumexp(z_i) - z_i[y_i]. */
static double xent_double(const double *z, const int32_t *y, int n, int k)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        const double *r = z + (size_t)i * k;
        double m = r[0], e = 0.0;
        for (int j = 1; j < k; j++)
            m = fmax(m, r[j]);
        for (int j = 0; j < k; j++)
            e += exp(r[j] - m);
        sum += log(e) + m - r[y[i]];
    }
    return sum / n;
}

START_TEST(test_xent_loss_matches_definition)
{
    /* xent_loss against its definition in double. Per row, d_j = z_j - m
     * rounds (at most u*6 for logits in [-3, 3)) and expf errs by under one
     * ulp (2u): each e_j is off by at most 8u relative; the row sum adds
     * gamma(k-1); logf errs by 2u*lambda <= 2u*l (lambda = log S <= l); the
     * two additions (log + (m - z_y), m - z_y) by u*l each. The batch sum
     * adds gamma(n-1)*sum l, the division u*L. Second-order terms are covered
     * by the factor 1.01. */
    enum { N = 37, K = 10 };
    const sb_class_shape s = {.n = N, .k = K};
    float z[N * K];
    int32_t *y = make_labels(N, K, 5);
    op_test_fill_rng(z, N * K, -3.0f, 3.0f, INPUT_SEED, 5);
    double zd[N * K];
    for (int i = 0; i < N * K; i++)
        zd[i] = (double)z[i];
    const double want = xent_double(zd, y, N, K);
    const double row_err = 8.0 * U + sb_gamma(K - 1); /* relative error of the row sum */
    double tol = 0.0;
    for (int i = 0; i < N; i++) {
        const double l = xent_double(zd + i * K, y + i, 1, K);
        tol += row_err + 4.0 * U * l + sb_gamma(N - 1) * l;
    }
    tol = (tol / N + U * want) * 1.01;
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float loss;
        sb_kernels((sb_family)f)->xent_loss(&loss, z, y, &s);
        ck_assert_msg(fabs((double)loss - want) <= tol, "%s: %.9g vs %.9g, tol %g",
                      sb_family_name((sb_family)f), (double)loss, want, tol);
    }
    free(y);
}
END_TEST

START_TEST(test_softmax_xent_bwd_finite_difference)
{
    /* Central differences of the double definition of xent_loss against
     * softmax_xent_bwd applied to softmax_fwd, both float kernels.
     * Truncation: h^2/6 * max|d^3 l/dz^3| / n, and the third derivative of
     * logsumexp along a coordinate is p(1-p)(1-2p), at most 1/(6*sqrt(3)).
     * Cancellation in double: about 2^-52 * |L| / h per evaluation.
     * The kernels: prob is off by at most (8u + gamma(k-1) + u) * p (as in
     * test_xent_loss_matches_definition, plus the division), the
     * subtraction of the one-hot rounds by u*|p - onehot|, the division by n
     * by u*|g|. */
    enum { N = 5, K = 7 };
    const sb_class_shape s = {.n = N, .k = K};
    const double h = 0x1p-12;
    float z[N * K], prob[N * K], grad[N * K];
    int32_t *y = make_labels(N, K, 6);
    op_test_fill_rng(z, N * K, -3.0f, 3.0f, INPUT_SEED, 6);
    double zd[N * K];
    for (int i = 0; i < N * K; i++)
        zd[i] = (double)z[i];
    const double trunc = h * h / 6.0 / (6.0 * sqrt(3.0)) / N;
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        k->softmax_fwd(prob, z, &s);
        k->softmax_xent_bwd(grad, prob, y, &s);
        for (int at = 0; at < N * K; at++) {
            const double keep = zd[at];
            zd[at] = keep + h;
            const double lp = xent_double(zd, y, N, K);
            zd[at] = keep - h;
            const double lm = xent_double(zd, y, N, K);
            zd[at] = keep;
            const double g = (lp - lm) / (2.0 * h);
            const double p = (double)prob[at];
            const double hot = at % K == y[at / K] ? 1.0 : 0.0;
            const double tol = ((10.0 * U + sb_gamma(K - 1)) * p + U * fabs(p - hot)) / N +
                               U * fabs(g) + trunc + 0x1p-52 * 8.0 * (lp + lm) / h;
            ck_assert_msg(fabs((double)grad[at] - g) <= tol, "%s [%d]: %.9g vs fd %.9g, tol %g",
                          sb_family_name((sb_family)f), at, (double)grad[at], g, tol);
        }
    }
    free(y);
}
END_TEST

START_TEST(test_softmax_xent_bwd_families_and_values)
{
    const sb_class_shape s = {.n = 1001, .k = 10};
    const size_t nk = (size_t)s.n * (size_t)s.k;
    float *z = op_test_alloc_floats(nk), *prob = op_test_alloc_floats(nk);
    float *want = op_test_alloc_floats(nk), *g = op_test_alloc_floats(nk);
    int32_t *y = make_labels(s.n, s.k, 7);
    op_test_fill_rng(z, nk, -5.0f, 5.0f, INPUT_SEED, 7);
    sb_kernels(SB_FAMILY_REF)->softmax_fwd(prob, z, &s);
    sb_kernels(SB_FAMILY_REF)->softmax_xent_bwd(want, prob, y, &s);
    for (size_t f = 0; f < N_PARALLEL; f++)
        for (int t = 1; t <= MAX_THREADS; t++) {
            omp_set_num_threads(t);
            sb_kernels(parallel_families[f])->softmax_xent_bwd(g, prob, y, &s);
            ck_assert_msg(op_test_same_bits(g, want, nk), "%s %d threads",
                          sb_family_name(parallel_families[f]), t);
        }
    /* exact cases: (0.25 - 1)/4 and 0.25/4 are representable; a one-hot
     * prob on the label has gradient 0 */
    const sb_class_shape four = {.n = 4, .k = 4};
    float p[16], d[16];
    const int32_t lab[4] = {0, 1, 2, 3};
    for (int i = 0; i < 16; i++)
        p[i] = i < 8 ? 0.25f : (i % 4 == lab[i / 4] ? 1.0f : 0.0f);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernels((sb_family)f)->softmax_xent_bwd(d, p, lab, &four);
        for (int i = 0; i < 16; i++) {
            const bool hot = i % 4 == lab[i / 4];
            const float expect = i < 8 ? (hot ? -0.1875f : 0.0625f) : 0.0f;
            ck_assert_msg(op_test_feq(d[i], expect), "[%d] = %g", i, (double)d[i]);
        }
    }
    free(z), free(prob), free(want), free(g), free(y);
}
END_TEST

/* ---- accuracy ------------------------------------------------------------- */

START_TEST(test_accuracy_values)
{
    /* first maximum: 3 of 6 right; a last-maximum rule would give 2, a rule
     * that skipped NaNs 4 */
    const sb_class_shape s = {.n = 6, .k = 3};
    const float p[18] = {
        0.1f, 0.7f, 0.2f,   /* argmax 1, label 1: right */
        0.6f, 0.3f, 0.1f,   /* argmax 0, label 2: wrong */
        0.4f, 0.4f, 0.2f,   /* tie: first maximum 0, label 0: right */
        0.3f, 0.3f, 0.3f,   /* tie: first maximum 0, label 0: right */
        0.2f, 0.4f, 0.4f,   /* tie: first maximum 1, label 2: wrong */
        0.1f, NAN, 0.9f,    /* NaN: no prediction, wrong although 2 is largest */
    };
    const int32_t y[6] = {1, 2, 0, 0, 2, 2};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float acc;
        sb_kernels((sb_family)f)->accuracy(&acc, p, y, &s);
        ck_assert_msg(op_test_feq(acc, 0.5f), "%s: %g", sb_family_name((sb_family)f), (double)acc);
    }
}
END_TEST

START_TEST(test_accuracy_families_and_threads)
{
    const sb_class_shape s = {.n = 10007, .k = 10};
    const size_t nk = (size_t)s.n * (size_t)s.k;
    float *p = op_test_alloc_floats(nk);
    int32_t *y = make_labels(s.n, s.k, 8);
    op_test_fill_rng(p, nk, 0.0f, 1.0f, INPUT_SEED, 8);
    /* make about half the rows right: put the row's largest value at the label */
    for (int i = 0; i < s.n; i += 2)
        p[(size_t)i * s.k + (size_t)y[i]] = 2.0f;
    float want;
    sb_kernels(SB_FAMILY_REF)->accuracy(&want, p, y, &s);
    ck_assert(want > 0.5f && want < 0.6f); /* 5004 forced, ~1/10 of the rest by chance */
    for (size_t f = 0; f < N_PARALLEL; f++)
        for (int t = 1; t <= MAX_THREADS; t++) {
            omp_set_num_threads(t);
            float acc;
            sb_kernels(parallel_families[f])->accuracy(&acc, p, y, &s);
            ck_assert_msg(op_test_same_bits(&acc, &want, 1), "%s %d threads",
                          sb_family_name(parallel_families[f]), t);
        }
    free(p), free(y);
}
END_TEST

/* ---- labels out of range ----------------------------------------------------- */

/* Runs one ref kernel on a bad label in a child process, which must die of
 * SB_ASSERT's abort. Only ref runs in the child: OpenMP in a forked child of
 * a process with a thread pool can hang. */
static void expect_abort(int which, int32_t label)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(2);
        const sb_class_shape s = {.n = 2, .k = 3};
        const float z[6] = {0};
        const int32_t y[2] = {0, label};
        float out[6];
        if (which == 0)
            sb_xent_loss_ref(out, z, y, &s);
        else if (which == 1)
            sb_softmax_xent_bwd_ref(out, z, y, &s);
        else if (which == 2)
            sb_accuracy_ref(out, z, y, &s);
        else
            sb_xent_loss_bound(out, z, y, &s);
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                  "kernel %d accepted label %d", which, (int)label);
}

START_TEST(test_labels_out_of_range_abort)
{
    for (int which = 0; which < 4; which++) {
        expect_abort(which, 3);
        expect_abort(which, -1);
    }
}
END_TEST

Suite *make_classifier_suite(void)
{
    Suite *s = suite_create("classifier");
    TCase *soft = tcase_create("softmax");
    tcase_add_test(soft, test_softmax_families_within_bound);
    tcase_add_test(soft, test_log_softmax_families);
    tcase_add_test(soft, test_log_softmax_values);
    tcase_add_test(soft, test_log_softmax_positions_are_rows);
    tcase_add_test(soft, test_log_softmax_bwd_values);
    tcase_add_test(soft, test_log_softmax_bwd_against_double);
    tcase_add_test(soft, test_log_softmax_bound_covers_reordering);
    tcase_add_test(soft, test_softmax_bound_covers_reordering);
    tcase_add_test(soft, test_softmax_extreme_logits);
    tcase_add_test(soft, test_softmax_nan_row);
    suite_add_tcase(s, soft);
    TCase *xent = tcase_create("xent");
    tcase_add_test(xent, test_xent_families_within_bound);
    tcase_add_test(xent, test_xent_loose_follows_threads);
    tcase_add_test(xent, test_xent_extreme_logits);
    tcase_add_test(xent, test_xent_loss_matches_definition);
    tcase_add_test(xent, test_softmax_xent_bwd_finite_difference);
    tcase_add_test(xent, test_softmax_xent_bwd_families_and_values);
    suite_add_tcase(s, xent);
    TCase *acc = tcase_create("accuracy");
    tcase_add_test(acc, test_accuracy_values);
    tcase_add_test(acc, test_accuracy_families_and_threads);
    tcase_add_test(acc, test_labels_out_of_range_abort);
    suite_add_tcase(s, acc);
    return s;
}
