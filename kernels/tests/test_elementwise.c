/* relu, maxpool and dropout: exact against ref in every family and for every
 * thread count (no reduction, so any difference is a bug), their NaN, tie and
 * odd-size rules, finite-difference gradient checks in double, and the
 * dropout mask's statistics and counter property. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise/elementwise.h"
#include "leaf_blocks.h"
#include "op_test.h"
#include "sb_kernels.h"
#include "sb_rng.h"

Suite *make_elementwise_suite(void);

#define MAX_THREADS 16
#define U 0x1p-24   /* unit roundoff of float */
#define INPUT_SEED 7   /* the RNG seed of this file's inputs (op_test_fill_rng) */

static const sb_family parallel_families[] = {SB_FAMILY_DET, SB_FAMILY_LOOSE};
#define N_PARALLEL (sizeof parallel_families / sizeof parallel_families[0])

static bool deq(double a, double b)
{
    return !(a < b) && !(a > b) && !isnan(a) && !isnan(b);
}

/* ---- relu ----------------------------------------------------------------- */

START_TEST(test_relu_values)
{
    const float x[] = {-3.0f, -0.0f, 0.0f, 2.5f, NAN, -INFINITY, INFINITY, 0x1p-149f};
    const float dy[] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, NAN, 7.0f, 8.0f};
    enum { N = sizeof x / sizeof x[0] };
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        float y[N], dx[N];
        k->relu_fwd(y, x, N);
        k->relu_bwd(dx, dy, x, N);
        ck_assert(op_test_feq(y[0], 0.0f) && !signbit(y[0]));
        ck_assert(op_test_feq(y[1], 0.0f) && !signbit(y[1]));   /* -0 gives +0 */
        ck_assert(op_test_feq(y[2], 0.0f));
        ck_assert(op_test_feq(y[3], 2.5f));
        ck_assert(isnan(y[4]));                       /* NaN propagates */
        ck_assert(op_test_feq(y[5], 0.0f));
        ck_assert(isinf(y[6]) && y[6] > 0.0f);
        ck_assert(op_test_feq(y[7], 0x1p-149f));                 /* subnormals are positive */
        const float want_dx[] = {0.0f, 0.0f, 0.0f, 4.0f, 0.0f, 0.0f, 7.0f, 8.0f};
        /* dx selects: the NaN dy at x = -Inf must not leak through */
        ck_assert_msg(op_test_same_bits(dx, want_dx, N), "relu_bwd %s",
                      sb_family_name((sb_family)f));
    }
}
END_TEST

START_TEST(test_relu_families_and_threads)
{
    const size_t n = 100003; /* prime: no thread count divides it */
    float *x = op_test_alloc_floats(n), *dy = op_test_alloc_floats(n);
    float *want_y = op_test_alloc_floats(n), *want_dx = op_test_alloc_floats(n);
    float *y = op_test_alloc_floats(n), *dx = op_test_alloc_floats(n);
    op_test_fill_rng(x, n, -1.0f, 1.0f, INPUT_SEED, 1);
    op_test_fill_rng(dy, n, -1.0f, 1.0f, INPUT_SEED, 2);
    x[5] = NAN, x[6] = INFINITY, x[7] = -INFINITY, x[8] = -0.0f, x[9] = 0.0f;
    sb_kernels(SB_FAMILY_REF)->relu_fwd(want_y, x, n);
    sb_kernels(SB_FAMILY_REF)->relu_bwd(want_dx, dy, x, n);
    for (size_t f = 0; f < N_PARALLEL; f++) {
        const sb_kernel_table *k = sb_kernels(parallel_families[f]);
        for (int t = 1; t <= MAX_THREADS; t++) {
            omp_set_num_threads(t);
            k->relu_fwd(y, x, n);
            k->relu_bwd(dx, dy, x, n);
            ck_assert_msg(op_test_same_bits(y, want_y, n), "relu_fwd %s, %d threads",
                          sb_family_name(parallel_families[f]), t);
            ck_assert_msg(op_test_same_bits(dx, want_dx, n), "relu_bwd %s, %d threads",
                          sb_family_name(parallel_families[f]), t);
        }
    }
    free(x), free(dy), free(want_y), free(want_dx), free(y), free(dx);
}
END_TEST

/* Finite differences of L(x) = sum_j dy_j * y_j(x), in double. Perturbing x_i
 * changes y_i alone, so L(x+) - L(x-) = dy_i * (y_i(x+) - y_i(x-)); both are
 * floats, their difference and its product with a float are exact in double.
 * Returns that difference over (x+ - x-). */
static double fd_ratio(float dy, float y_plus, float y_minus, float x_plus, float x_minus)
{
    return (double)dy * ((double)y_plus - (double)y_minus) /
           ((double)x_plus - (double)x_minus);
}

START_TEST(test_relu_bwd_finite_difference)
{
    enum { N = 64 };
    const float h = 0x1p-8f;
    float x[N], dy[N], dx[N];
    op_test_fill_rng(x, N, 0.25f, 1.0f, INPUT_SEED, 3);
    for (int i = 0; i < N; i += 2)
        x[i] = -x[i]; /* half negative; every |x| >= 0.25 > h: no kink crossed */
    op_test_fill_rng(dy, N, -1.0f, 1.0f, INPUT_SEED, 4);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        k->relu_bwd(dx, dy, x, N);
        for (int i = 0; i < N; i++) {
            float xp[N], xm[N], yp[N], ym[N];
            memcpy(xp, x, sizeof x), memcpy(xm, x, sizeof x);
            xp[i] = x[i] + h, xm[i] = x[i] - h;
            k->relu_fwd(yp, xp, N);
            k->relu_fwd(ym, xm, N);
            /* relu is the identity or 0 on each side: y+ - y- is x+ - x- or 0
             * exactly, so the ratio is dy_i or 0 exactly */
            double g = fd_ratio(dy[i], yp[i], ym[i], xp[i], xm[i]);
            ck_assert_msg(deq((double)dx[i], g), "i=%d dx=%a fd=%a", i, (double)dx[i], g);
        }
    }
}
END_TEST

/* ---- maxpool -------------------------------------------------------------- */

/* one plane of 2x4: two windows side by side, window t at columns 2t, 2t+1 */
static void pool_two_windows(const sb_kernel_table *k, float y[2], float dx[8],
                             const float x[8])
{
    const sb_pool_shape s = {.n = 1, .c = 1, .h = 2, .w = 4};
    const float dy[2] = {10.0f, 20.0f};
    k->maxpool_fwd(y, x, &s);
    k->maxpool_bwd(dx, dy, x, &s);
}

/* position p (0..3, scan order) of window t in a 2x4 plane */
static int at(int t, int p)
{
    return (p / 2) * 4 + 2 * t + p % 2;
}

START_TEST(test_maxpool_tie_rule)
{
    /* window 0 all equal: the first (top-left) takes the gradient;
     * window 1 = {1, 3, 2, 3}: top-right beats the later bottom-right */
    float x[8];
    const float w0[4] = {3.0f, 3.0f, 3.0f, 3.0f}, w1[4] = {1.0f, 3.0f, 2.0f, 3.0f};
    for (int p = 0; p < 4; p++)
        x[at(0, p)] = w0[p], x[at(1, p)] = w1[p];
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float y[2], dx[8];
        pool_two_windows(sb_kernels((sb_family)f), y, dx, x);
        ck_assert(op_test_feq(y[0], 3.0f) && op_test_feq(y[1], 3.0f));
        for (int p = 0; p < 4; p++) {
            ck_assert(op_test_feq(dx[at(0, p)], p == 0 ? 10.0f : 0.0f));
            ck_assert(op_test_feq(dx[at(1, p)], p == 1 ? 20.0f : 0.0f));
        }
    }
    /* +0 and -0 tie: the output is the first one's bits */
    const float zeros[2][4] = {{0.0f, -0.0f, -1.0f, -0.0f}, {-0.0f, 0.0f, 0.0f, -2.0f}};
    for (int p = 0; p < 4; p++)
        x[at(0, p)] = zeros[0][p], x[at(1, p)] = zeros[1][p];
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float y[2], dx[8];
        pool_two_windows(sb_kernels((sb_family)f), y, dx, x);
        ck_assert(!signbit(y[0]) && signbit(y[1]));
        ck_assert(op_test_feq(dx[at(0, 0)], 10.0f) && op_test_feq(dx[at(1, 0)], 20.0f));
    }
    /* a window of -Inf is a tie too */
    for (int p = 0; p < 4; p++)
        x[at(0, p)] = -INFINITY;
    float y[2], dx[8];
    pool_two_windows(sb_kernels(SB_FAMILY_DET), y, dx, x);
    ck_assert(isinf(y[0]) && y[0] < 0.0f);
    ck_assert(op_test_feq(dx[at(0, 0)], 10.0f) && op_test_feq(dx[at(0, 1)], 0.0f));
}
END_TEST

START_TEST(test_maxpool_nan_propagates)
{
    /* a NaN at each position of window 0, in turn, next to larger values;
     * then two NaNs (positions 1 and 3) in window 1: the first one wins */
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        for (int nan_at = 0; nan_at < 4; nan_at++) {
            float x[8] = {0};
            for (int p = 0; p < 4; p++) {
                x[at(0, p)] = p == nan_at ? NAN : 100.0f + (float)p;
                x[at(1, p)] = p == 1 || p == 3 ? NAN : 5.0f;
            }
            float y[2], dx[8];
            pool_two_windows(sb_kernels((sb_family)f), y, dx, x);
            ck_assert_msg(isnan(y[0]), "%s: NaN at %d dropped", sb_family_name((sb_family)f), nan_at);
            ck_assert(isnan(y[1]));
            for (int p = 0; p < 4; p++) {
                ck_assert(op_test_feq(dx[at(0, p)], p == nan_at ? 10.0f : 0.0f));
                ck_assert(op_test_feq(dx[at(1, p)], p == 1 ? 20.0f : 0.0f));
            }
        }
    }
}
END_TEST

START_TEST(test_maxpool_odd_sizes_and_threads)
{
    /* odd h and w: the last row and column belong to no window */
    const sb_pool_shape s = {.n = 3, .c = 5, .h = 13, .w = 11};
    const size_t in = (size_t)s.n * s.c * s.h * s.w, out = (size_t)s.n * s.c * (s.h / 2) * (s.w / 2);
    float *x = op_test_alloc_floats(in), *dy = op_test_alloc_floats(out);
    float *want_y = op_test_alloc_floats(out), *want_dx = op_test_alloc_floats(in);
    float *y = op_test_alloc_floats(out), *dx = op_test_alloc_floats(in);
    op_test_fill_rng(x, in, -1.0f, 1.0f, INPUT_SEED, 5);
    /* nonzero: each window's winner is visible in dx */
    op_test_fill_rng(dy, out, 1.0f, 2.0f, INPUT_SEED, 6);
    sb_kernels(SB_FAMILY_REF)->maxpool_fwd(want_y, x, &s);
    sb_kernels(SB_FAMILY_REF)->maxpool_bwd(want_dx, dy, x, &s);

    /* the definition, checked plainly on ref */
    const int ph = s.h / 2, pw = s.w / 2;
    for (int p = 0; p < s.n * s.c; p++) {
        const float *xp = x + (size_t)p * s.h * s.w;
        const float *dxp = want_dx + (size_t)p * s.h * s.w;
        for (int i = 0; i < ph; i++)
            for (int j = 0; j < pw; j++) {
                const float *t = xp + 2 * i * s.w + 2 * j;
                float m = fmaxf(fmaxf(t[0], t[1]), fmaxf(t[s.w], t[s.w + 1]));
                ck_assert(op_test_feq(want_y[(size_t)p * ph * pw + (size_t)i * pw + (size_t)j], m));
                int winners = 0;
                for (int q = 0; q < 4; q++)
                    winners += !op_test_feq(dxp[(2 * i + q / 2) * s.w + 2 * j + q % 2], 0.0f);
                ck_assert_int_eq(winners, 1);
            }
        for (int j = 0; j < s.w; j++)
            ck_assert(op_test_feq(dxp[(s.h - 1) * s.w + j], 0.0f));
        for (int i = 0; i < s.h; i++)
            ck_assert(op_test_feq(dxp[i * s.w + s.w - 1], 0.0f));
    }

    for (size_t f = 0; f < N_PARALLEL; f++) {
        const sb_kernel_table *k = sb_kernels(parallel_families[f]);
        for (int t = 1; t <= MAX_THREADS; t++) {
            omp_set_num_threads(t);
            memset(dx, 0xff, in * sizeof *dx); /* NaN: stale output would show */
            k->maxpool_fwd(y, x, &s);
            k->maxpool_bwd(dx, dy, x, &s);
            ck_assert_msg(op_test_same_bits(y, want_y, out), "maxpool_fwd %s, %d threads",
                          sb_family_name(parallel_families[f]), t);
            ck_assert_msg(op_test_same_bits(dx, want_dx, in), "maxpool_bwd %s, %d threads",
                          sb_family_name(parallel_families[f]), t);
        }
    }
    free(x), free(dy), free(want_y), free(want_dx), free(y), free(dx);
}
END_TEST

/* The rules by their definition, on planes wide enough for the kernels'
 * eight-window steps (and their overlapping last step), with values drawn
 * from a few, so that ties, +0 against -0, infinities and NaNs meet in
 * every position of a window. The NaNs are quiet, of four kinds (payload 1
 * or 2, either sign): the output must keep the first one's bits. */
static float pool_value(float u)
{
    static const float values[] = {1.0f, 1.0f, 2.0f, 0.0f, -0.0f, -3.0f, INFINITY, -INFINITY};
    int i = (int)(u * 12.0f);
    if (i < 8)
        return values[i];
    float nan = NAN;
    uint32_t bits;
    memcpy(&bits, &nan, sizeof bits);
    bits |= (uint32_t)(i % 2 + 1);
    if (i >= 10)
        bits |= UINT32_C(1) << 31;
    memcpy(&nan, &bits, sizeof nan);
    return nan;
}

START_TEST(test_maxpool_rules_on_wide_planes)
{
    const int widths[] = {16, 17, 24, 34, 35, 48};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        const sb_pool_shape s = {.n = 2, .c = 3, .h = 5, .w = widths[wi]};
        const int ph = s.h / 2, pw = s.w / 2, planes = s.n * s.c;
        const size_t in = (size_t)planes * s.h * s.w, out = (size_t)planes * ph * pw;
        float *x = op_test_alloc_floats(in), *dy = op_test_alloc_floats(out);
        float *want_y = op_test_alloc_floats(out), *want_dx = op_test_alloc_floats(in);
        float *y = op_test_alloc_floats(out), *dx = op_test_alloc_floats(in);
        op_test_fill_rng(x, in, 0.0f, 1.0f, INPUT_SEED, 20 + (uint32_t)wi);
        for (size_t i = 0; i < in; i++)
            x[i] = pool_value(x[i]);
        op_test_fill_rng(dy, out, 1.0f, 2.0f, INPUT_SEED, 30 + (uint32_t)wi);
        for (size_t o = 0; o < out; o += 7)
            dy[o] = o % 2 ? -0.0f : NAN; /* a winner passes its gradient's bits on */
        /* the definition: the first of the window's four in scan order that
         * is a NaN, or else the first largest */
        memset(want_dx, 0, in * sizeof *want_dx); /* +0 outside the winners */
        for (int p = 0; p < planes; p++)
            for (int i = 0; i < ph; i++)
                for (int j = 0; j < pw; j++) {
                    size_t top = ((size_t)p * s.h + 2 * (size_t)i) * s.w + 2 * (size_t)j;
                    const size_t pos[4] = {top, top + 1, top + s.w, top + s.w + 1};
                    size_t win = pos[0];
                    for (int q = 0; q < 4 && !isnan(x[win]); q++)
                        if (isnan(x[pos[q]]) || x[pos[q]] > x[win])
                            win = pos[q];
                    size_t o = ((size_t)p * ph + (size_t)i) * pw + (size_t)j;
                    want_y[o] = x[win];
                    want_dx[win] = dy[o];
                }
        for (int f = 0; f < SB_FAMILY_COUNT; f++) {
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            /* NaN: an element left unwritten would show */
            memset(y, 0xff, out * sizeof *y);
            memset(dx, 0xff, in * sizeof *dx);
            k->maxpool_fwd(y, x, &s);
            k->maxpool_bwd(dx, dy, x, &s);
            ck_assert_msg(op_test_same_bits(y, want_y, out), "maxpool_fwd %s, width %d",
                          sb_family_name((sb_family)f), s.w);
            ck_assert_msg(op_test_same_bits(dx, want_dx, in), "maxpool_bwd %s, width %d",
                          sb_family_name((sb_family)f), s.w);
        }
        free(x), free(dy), free(want_y), free(want_dx), free(y), free(dx);
    }
}
END_TEST

START_TEST(test_maxpool_bwd_finite_difference)
{
    /* distinct inputs spaced 1/8 apart (a shuffled ramp), perturbed by
     * h = 1/64 < 1/16: no window's argmax changes, so the forward is linear
     * in each x_i and the ratio is exact: dy of its window or 0 */
    const sb_pool_shape s = {.n = 2, .c = 1, .h = 5, .w = 4};
    enum { IN = 2 * 5 * 4, OUT = 2 * 2 * 2 };
    const float h = 0x1p-6f;
    float x[IN], dy[OUT], dx[IN];
    int64_t perm[IN];
    sb_rng_permutation(perm, IN, 11, SB_STREAM_CASE_INPUT, 0);
    for (int i = 0; i < IN; i++)
        x[i] = (float)perm[i] * 0.125f - 2.0f;
    op_test_fill_rng(dy, OUT, -1.0f, 1.0f, INPUT_SEED, 7);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        k->maxpool_bwd(dx, dy, x, &s);
        for (int i = 0; i < IN; i++) {
            float xp[IN], xm[IN], yp[OUT], ym[OUT];
            memcpy(xp, x, sizeof x), memcpy(xm, x, sizeof x);
            xp[i] = x[i] + h, xm[i] = x[i] - h;
            k->maxpool_fwd(yp, xp, &s);
            k->maxpool_fwd(ym, xm, &s);
            double diff = 0.0; /* sum_j dy_j (y+_j - y-_j): one term is nonzero at most */
            for (int j = 0; j < OUT; j++)
                diff += (double)dy[j] * ((double)yp[j] - (double)ym[j]);
            double g = diff / ((double)xp[i] - (double)xm[i]);
            ck_assert_msg(deq((double)dx[i], g), "i=%d dx=%a fd=%a", i, (double)dx[i], g);
        }
    }
}
END_TEST

/* ---- dropout -------------------------------------------------------------- */

static sb_dropout_params dropout_params(float rate, uint32_t step)
{
    sb_dropout_params d = {.rate = rate, .seed = 42, .stream = SB_STREAM_DROPOUT + 1, .step = step};
    return d;
}

START_TEST(test_dropout_mask_statistics)
{
    const size_t n = 200000;
    const float rates[] = {0.25f, 0.5f, 0.1f};
    float *mask = op_test_alloc_floats(n);
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        const sb_dropout_params d = dropout_params(rates[r], 3);
        sb_kernels(SB_FAMILY_DET)->dropout_mask(mask, &d, n);
        const float scale = 1.0f / (1.0f - rates[r]);
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
            ck_assert(op_test_feq(mask[i], 0.0f) || op_test_feq(mask[i], scale));
            kept += op_test_feq(mask[i], scale);
        }
        /* The uniform is j * 2^-24, j in [0, 2^24), so an element is kept
         * with p = 1 - ceil(rate * 2^24) / 2^24 exactly. The kept count is
         * Binomial(n, p): |kept - np| <= 6 sd fails with probability < 2e-9. */
        const double p = 1.0 - ceil((double)rates[r] * 0x1p24) * 0x1p-24;
        const double mean = (double)n * p, sd = sqrt((double)n * p * (1.0 - p));
        ck_assert_msg(fabs((double)kept - mean) <= 6.0 * sd, "rate %g: kept %zu of %zu, expected %g +- %g",
                      (double)rates[r], kept, n, mean, 6.0 * sd);
    }
    /* rate 0 keeps everything with scale exactly 1 */
    const sb_dropout_params none = dropout_params(0.0f, 3);
    sb_kernels(SB_FAMILY_DET)->dropout_mask(mask, &none, n);
    for (size_t i = 0; i < n; i++)
        ck_assert(op_test_feq(mask[i], 1.0f));
    free(mask);
}
END_TEST

START_TEST(test_dropout_mask_is_counter_based)
{
    /* element i depends on (seed, stream, step, i) only: a shorter mask is a
     * prefix of a longer one, and another step, seed or stream draws anew */
    enum { N = 5000, SHORT = 1237 };
    float a[N], b[SHORT], c[N];
    sb_dropout_params d = dropout_params(0.5f, 9);
    sb_kernels(SB_FAMILY_DET)->dropout_mask(a, &d, N);
    sb_kernels(SB_FAMILY_REF)->dropout_mask(b, &d, SHORT);
    ck_assert(op_test_same_bits(a, b, SHORT));
    for (int change = 0; change < 3; change++) {
        sb_dropout_params e = d;
        if (change == 0)
            e.step++;
        else if (change == 1)
            e.seed++;
        else
            e.stream++;
        sb_kernels(SB_FAMILY_DET)->dropout_mask(c, &e, N);
        /* independent masks at rate 1/2 agree on an element with probability
         * 1/2; agreement on all 5000 has probability 2^-5000 */
        ck_assert_msg(!op_test_same_bits(a, c, N), "mask ignores parameter %d", change);
    }
}
END_TEST

/* The parallel masks draw runs of uniforms (sb_rng_uniform_run) per slice
 * or per leaf block; the reference draws one element at a time. Sizes
 * around a block of 4, a run's group of 64 and a leaf, where a run starts
 * and ends inside a group, at 1 and 3 threads (uneven shares). The hashed
 * mode runs with a request for no digests, so only its mask is compared. */
START_TEST(test_dropout_mask_runs_match_ref)
{
    const size_t ns[] = {1, 3, 5, 63, 65, 4097, SB_LEAF_FLOATS + 5, 2 * SB_LEAF_FLOATS + 3};
    const size_t nmax = 2 * SB_LEAF_FLOATS + 3;
    const sb_dropout_params d = dropout_params(0.5f, 4);
    const sb_leaf_request none = {0};
    float *want = op_test_alloc_floats(nmax), *mask = op_test_alloc_floats(nmax);
    const int saved = omp_get_max_threads();
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        const size_t n = ns[i];
        sb_dropout_mask_ref(want, &d, n);
        for (int t = 1; t <= 3; t += 2) {
            omp_set_num_threads(t);
            memset(mask, 0xff, n * sizeof *mask);
            sb_dropout_mask_det(mask, &d, n);
            ck_assert_msg(op_test_same_bits(mask, want, n), "par, n %zu, %d threads", n, t);
            memset(mask, 0xff, n * sizeof *mask);
            sb_dropout_mask_hashed(mask, &d, n, &none);
            ck_assert_msg(op_test_same_bits(mask, want, n), "hashed, n %zu, %d threads", n, t);
        }
    }
    omp_set_num_threads(saved);
    free(want), free(mask);
}
END_TEST

START_TEST(test_dropout_families_and_threads)
{
    const size_t n = 100003;
    const sb_dropout_params d = dropout_params(0.25f, 5);
    float *x = op_test_alloc_floats(n), *dy = op_test_alloc_floats(n);
    float *want_mask = op_test_alloc_floats(n), *want_y = op_test_alloc_floats(n);
    float *want_dx = op_test_alloc_floats(n);
    float *mask = op_test_alloc_floats(n), *y = op_test_alloc_floats(n);
    float *dx = op_test_alloc_floats(n);
    op_test_fill_rng(x, n, -4.0f, 4.0f, INPUT_SEED, 8);
    op_test_fill_rng(dy, n, -1.0f, 1.0f, INPUT_SEED, 9);
    const sb_kernel_table *ref = sb_kernels(SB_FAMILY_REF);
    ref->dropout_mask(want_mask, &d, n);
    ref->dropout_fwd(want_y, x, want_mask, n);
    ref->dropout_bwd(want_dx, dy, want_mask, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert(op_test_feq(want_y[i], x[i] * want_mask[i]));
        ck_assert(op_test_feq(want_dx[i], dy[i] * want_mask[i]));
    }
    for (size_t f = 0; f < N_PARALLEL; f++) {
        const sb_kernel_table *k = sb_kernels(parallel_families[f]);
        for (int t = 1; t <= MAX_THREADS; t++) {
            omp_set_num_threads(t);
            k->dropout_mask(mask, &d, n);
            k->dropout_fwd(y, x, mask, n);
            k->dropout_bwd(dx, dy, mask, n);
            const char *name = sb_family_name(parallel_families[f]);
            ck_assert_msg(op_test_same_bits(mask, want_mask, n), "dropout_mask %s, %d threads",
                          name, t);
            ck_assert_msg(op_test_same_bits(y, want_y, n), "dropout_fwd %s, %d threads", name, t);
            ck_assert_msg(op_test_same_bits(dx, want_dx, n), "dropout_bwd %s, %d threads", name, t);
        }
    }
    /* a dropped Inf is Inf * 0 = NaN: the product, as documented */
    const float inf = INFINITY, zero = 0.0f;
    float out;
    sb_kernels(SB_FAMILY_DET)->dropout_fwd(&out, &inf, &zero, 1);
    ck_assert(isnan(out));
    free(x), free(dy), free(want_mask), free(want_y), free(want_dx), free(mask), free(y), free(dx);
}
END_TEST

START_TEST(test_dropout_bwd_finite_difference)
{
    enum { N = 64 };
    const float h = 0x1p-4f;
    const sb_dropout_params d = dropout_params(0.25f, 1); /* scale 4/3 is inexact */
    float x[N], dy[N], mask[N], dx[N];
    op_test_fill_rng(x, N, -1.0f, 1.0f, INPUT_SEED, 10);
    op_test_fill_rng(dy, N, -1.0f, 1.0f, INPUT_SEED, 11);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        k->dropout_mask(mask, &d, N);
        k->dropout_bwd(dx, dy, mask, N);
        for (int i = 0; i < N; i++) {
            float xp[N], xm[N], yp[N], ym[N];
            memcpy(xp, x, sizeof x), memcpy(xm, x, sizeof x);
            xp[i] = x[i] + h, xm[i] = x[i] - h;
            k->dropout_fwd(yp, xp, mask, N);
            k->dropout_fwd(ym, xm, mask, N);
            double g = fd_ratio(dy[i], yp[i], ym[i], xp[i], xm[i]);
            /* y+- = x+- * m * (1 + e), |e| <= u, so the ratio is dy*m plus at
             * most |dy*m| * u * (|x+| + |x-|) / (x+ - x-); dx = dy*m*(1 + e'),
             * |e'| <= u; the double product and quotient add 2^-52 |g|. */
            const double dym = fabs((double)dy[i] * (double)mask[i]);
            const double tol = dym * U * ((fabs((double)xp[i]) + fabs((double)xm[i])) /
                                          ((double)xp[i] - (double)xm[i]) + 1.0) +
                               0x1p-52 * fabs(g);
            ck_assert_msg(fabs((double)dx[i] - g) <= tol, "i=%d dx=%a fd=%a tol=%g", i,
                          (double)dx[i], g, tol);
        }
    }
}
END_TEST

Suite *make_elementwise_suite(void)
{
    Suite *s = suite_create("elementwise");
    TCase *relu = tcase_create("relu");
    tcase_add_test(relu, test_relu_values);
    tcase_add_test(relu, test_relu_families_and_threads);
    tcase_add_test(relu, test_relu_bwd_finite_difference);
    suite_add_tcase(s, relu);
    TCase *pool = tcase_create("maxpool");
    tcase_add_test(pool, test_maxpool_tie_rule);
    tcase_add_test(pool, test_maxpool_nan_propagates);
    tcase_add_test(pool, test_maxpool_odd_sizes_and_threads);
    tcase_add_test(pool, test_maxpool_rules_on_wide_planes);
    tcase_add_test(pool, test_maxpool_bwd_finite_difference);
    suite_add_tcase(s, pool);
    TCase *drop = tcase_create("dropout");
    tcase_add_test(drop, test_dropout_mask_statistics);
    tcase_add_test(drop, test_dropout_mask_is_counter_based);
    tcase_add_test(drop, test_dropout_mask_runs_match_ref);
    tcase_add_test(drop, test_dropout_families_and_threads);
    tcase_add_test(drop, test_dropout_bwd_finite_difference);
    suite_add_tcase(s, drop);
    return s;
}
