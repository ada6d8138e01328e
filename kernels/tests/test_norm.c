/* layer norm and RMSNorm: the definitions on hand-computed values; det and loose
 * against ref within the op's bound at 1..8 threads; det bitwise across
 * thread counts; loose thread-dependent; the gradients against finite
 * differences of the forward in double. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "norm/rmsnorm.h"
#include "op_test.h"
#include "sb_kernels.h"
#include "sb_refd.h"

Suite *make_norm_suite(void);

static const sb_op norm_ops[] = {SB_OP_layernorm_fwd, SB_OP_layernorm_bwd_data,
                                 SB_OP_layernorm_bwd_gamma, SB_OP_rmsnorm_fwd,
                                 SB_OP_rmsnorm_bwd_data, SB_OP_rmsnorm_bwd_gamma,
                                 SB_OP_layernorm_mean, SB_OP_layernorm_rstd};
#define N_OPS (sizeof norm_ops / sizeof norm_ops[0])

/* the model's shape (1024 rows of 128), more rows than one summation chunk
 * with a width no column block divides, one element */
static const sb_norm_shape shapes[] = {
    {1024, 128, 1e-5f},
    {601, 37, 1e-5f},
    {3, 5, 1e-5f},
    {1, 1, 1e-5f},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void call_new(sb_op_call *c, sb_op op, sb_norm_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->norm = s;
    op_test_call_alloc(c);
}

/* ---- the definitions ------------------------------------------------------- */

/* Rows x = (-1, 3, 3, 3) with eps = 1: mean 2, variance (9 + 1 + 1 + 1) / 4
 * = 3, rstd = 1 / sqrt(3 + 1) = 1/2, xhat = (-1.5, .5, .5, .5); every step
 * exact in float, in any order, so every family must give these bits.
 *   y = xhat * gamma + beta with gamma (2, 1, -1, 4), beta (.25, 0, 1, -1)
 *   dy (1, 0, 2, -1): g = gamma dy = (2, 0, -2, -4), a = -1,
 *   b = (sum g xhat) / 4 = -1.5, dx = (1/2) ((g - a) - xhat b)
 *   dgamma = sum over the two (equal) rows of dy xhat */
START_TEST(test_hand_values)
{
    const sb_norm_shape s = {.n = 2, .c = 4, .eps = 1.0f};
    const float x[8] = {-1, 3, 3, 3, -1, 3, 3, 3};
    const float gamma[4] = {2, 1, -1, 4}, beta[4] = {0.25f, 0, 1, -1};
    const float dy[8] = {1, 0, 2, -1, 1, 0, 2, -1};
    const float want_y[8] = {-2.75f, 0.5f, 0.5f, 1, -2.75f, 0.5f, 0.5f, 1};
    const float want_dx[8] = {0.375f, 0.875f, -0.125f, -1.125f,
                              0.375f, 0.875f, -0.125f, -1.125f};
    const float want_dgamma[4] = {-3, 0, 2, -1};
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads += 2) {
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            float y[8], dx[8], dgamma[4];
            omp_set_num_threads(threads);
            k->layernorm_fwd(y, x, gamma, beta, &s);
            k->layernorm_bwd_data(dx, dy, x, gamma, &s);
            k->layernorm_bwd_gamma(dgamma, dy, x, &s);
            const char *name = sb_family_name((sb_family)f);
            ck_assert_msg(op_test_same_bits(y, want_y, 8), "%s fwd", name);
            ck_assert_msg(op_test_same_bits(dx, want_dx, 8), "%s bwd_data", name);
            ck_assert_msg(op_test_same_bits(dgamma, want_dgamma, 4), "%s bwd_gamma", name);
        }
}
END_TEST

/* The stats of the same rows, as ONNX's LayerNormalization outputs them:
 * mean 2 and rstd 1/2 for both rows, in every family, exact. A row of
 * (-1, 3) with eps = 1: mean 1, variance 4, rstd 1 / sqrt(5), the float
 * quotient of 1 by sqrtf(5). */
START_TEST(test_stats_hand_values)
{
    const sb_norm_shape s = {.n = 3, .c = 4, .eps = 1.0f};
    const float x[12] = {-1, 3, 3, 3, -1, 3, 3, 3, 0, 0, 0, 0};
    const float want_mean[3] = {2, 2, 0}, want_rstd[3] = {0.5f, 0.5f, 1};
    const sb_norm_shape s2 = {.n = 1, .c = 2, .eps = 1.0f};
    const float x2[2] = {-1, 3};
    const float rstd2 = 1.0f / sqrtf(5.0f);
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads += 2) {
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            float mean[3], rstd[3], m2, r2;
            omp_set_num_threads(threads);
            k->layernorm_mean(mean, x, &s);
            k->layernorm_rstd(rstd, x, &s);
            k->layernorm_mean(&m2, x2, &s2);
            k->layernorm_rstd(&r2, x2, &s2);
            const char *name = sb_family_name((sb_family)f);
            ck_assert_msg(op_test_same_bits(mean, want_mean, 3), "%s mean", name);
            ck_assert_msg(op_test_same_bits(rstd, want_rstd, 3), "%s rstd", name);
            ck_assert_msg(op_test_feq(m2, 1.0f) && op_test_feq(r2, rstd2), "%s: %a %a", name,
                          (double)m2, (double)r2);
        }
}
END_TEST

/* RMSNorm, rows x = (3, 1, 1, 1) with eps = 1: mean square 12 / 4 = 3,
 * rstd = 1 / sqrt(3 + 1) = 1/2, xhat = (1.5, .5, .5, .5), every step exact.
 *   y = xhat * gamma with gamma (2, 1, -1, 4)
 *   dy (1, 2, 0, 1): g = gamma dy = (2, 2, 0, 4), b = (sum g xhat) / 4 = 1.5,
 *   dx = (1/2) (g - xhat b)
 *   dgamma = sum over the two (equal) rows of dy xhat */
START_TEST(test_rms_hand_values)
{
    const sb_norm_shape s = {.n = 2, .c = 4, .eps = 1.0f};
    const float x[8] = {3, 1, 1, 1, 3, 1, 1, 1};
    const float gamma[4] = {2, 1, -1, 4};
    const float dy[8] = {1, 2, 0, 1, 1, 2, 0, 1};
    const float want_y[8] = {3, 0.5f, -0.5f, 2, 3, 0.5f, -0.5f, 2};
    const float want_dx[8] = {-0.125f, 0.625f, -0.375f, 1.625f,
                              -0.125f, 0.625f, -0.375f, 1.625f};
    const float want_dgamma[4] = {3, 2, 0, 1};
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads += 2) {
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            float y[8], dx[8], dgamma[4];
            omp_set_num_threads(threads);
            k->rmsnorm_fwd(y, x, gamma, &s);
            k->rmsnorm_bwd_data(dx, dy, x, gamma, &s);
            k->rmsnorm_bwd_gamma(dgamma, dy, x, &s);
            const char *name = sb_family_name((sb_family)f);
            ck_assert_msg(op_test_same_bits(y, want_y, 8), "%s fwd", name);
            ck_assert_msg(op_test_same_bits(dx, want_dx, 8), "%s bwd_data", name);
            ck_assert_msg(op_test_same_bits(dgamma, want_dgamma, 4), "%s bwd_gamma", name);
        }
}
END_TEST

/* RMSNorm sums a row's squares in blocks of 32 whose sums are added
 * pairwise (layer norm's order, norm.h). A row of 64: x = 1 then 63 times
 * 2^-12 (squares 1 and 2^-24). One chain loses every 2^-24 against 1 (each
 * add ties to even): sum 1. In blocks, the first block loses its 31 (sum 1)
 * but the second sums its 32 alone, exactly, to 2^-19, and 1 + 2^-19 is
 * exact: every family must give that row's bits. */
START_TEST(test_rms_sums_in_blocks)
{
    const sb_norm_shape s = {.n = 1, .c = 64, .eps = 1e-5f};
    float x[64], gamma[64], y[64];
    x[0] = 1.0f;
    for (int j = 1; j < 64; j++)
        x[j] = 0x1p-12f;
    for (int j = 0; j < 64; j++)
        gamma[j] = 1.0f;
    const float rstd = 1.0f / sqrtf((1.0f + 0x1p-19f) / 64.0f + 1e-5f);
    const float chain = 1.0f / sqrtf(1.0f / 64.0f + 1e-5f);
    ck_assert(!op_test_feq(rstd, chain));
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernels((sb_family)f)->rmsnorm_fwd(y, x, gamma, &s);
        ck_assert_msg(op_test_feq(y[0], rstd), "%s: %a, blocked %a, one chain %a",
                      sb_family_name((sb_family)f), (double)y[0], (double)rstd, (double)chain);
    }
}
END_TEST

/* ... and the block sums pairwise. A row of 128: 2^12 at 0, 1 at 32, 64 and
 * 96, zeros elsewhere: block sums of squares (2^24, 1, 1, 1). The tree
 * (2^24 + 1) + (1 + 1) gives 2^24 + 2 exactly, the blocks added in block
 * order 2^24 (each + 1 ties to even), and the two give other rstds at
 * c = 128. Every family, forward and data gradient (whose xhat carries the
 * same rstd), at 1..3 threads, has the bits of the one-row arithmetic. */
START_TEST(test_rms_sums_pairwise)
{
    enum { C = 128, N = 3 };
    const sb_norm_shape s = {.n = N, .c = C, .eps = 1e-5f};
    float x[N * C] = {0}, gamma[C], ones[N * C], y[N * C], dx[N * C], want[C], want_dx[C];
    for (int i = 0; i < N; i++) {
        x[i * C] = 0x1p12f;
        x[i * C + 32] = x[i * C + 64] = x[i * C + 96] = 1.0f;
    }
    for (int j = 0; j < N * C; j++)
        ones[j] = 1.0f;
    for (int j = 0; j < C; j++)
        gamma[j] = 1.0f + (float)j / 64.0f;
    ck_assert(op_test_feq(sb_rms_sumsq(x, C), 0x1p24f + 2.0f));
    const float rstd = sb_rms_rstd_of(0x1p24f + 2.0f, C, s.eps);
    ck_assert(!op_test_feq(rstd, sb_rms_rstd_of(0x1p24f, C, s.eps)));
    ck_assert(op_test_feq(sb_rms_rstd(x, C, s.eps), rstd));
    sb_rmsnorm_row(want, x, gamma, C, s.eps);
    sb_rmsnorm_row_bwd(want_dx, ones, x, ones, C, s.eps);
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads++) {
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            omp_set_num_threads(threads);
            k->rmsnorm_fwd(y, x, gamma, &s);
            k->rmsnorm_bwd_data(dx, ones, x, ones, &s);
            for (int i = 0; i < N; i++) {
                ck_assert_msg(op_test_same_bits(y + i * C, want, C), "%s, %d threads, row %d",
                              sb_family_name((sb_family)f), threads, i);
                ck_assert_msg(op_test_same_bits(dx + i * C, want_dx, C),
                              "%s, %d threads, row %d dx", sb_family_name((sb_family)f),
                              threads, i);
            }
        }
}
END_TEST

/* Layer norm's row sums: blocks of 32 from +0, the block sums added
 * pairwise. Block sums (2^24, 1, 1, 1, 1): one chain keeps 2^24 (each + 1
 * ties to even); the tree ((2^24 + 1) + (1 + 1)) + 1 is 2^24 + 2 + 1, a tie
 * that rounds to 2^24 + 4. The longest paths: 31 in a block, then
 * ceil(log2(blocks)). */
START_TEST(test_layernorm_pairwise_tree)
{
    sb_norm_pairwise p = {.blocks = 0};
    const float blocks[5] = {0x1p24f, 1, 1, 1, 1};
    for (int k = 0; k < 5; k++)
        sb_norm_pairwise_add(&p, blocks[k]);
    ck_assert(op_test_feq(sb_norm_pairwise_end(&p), 0x1p24f + 4.0f));
    const sb_norm_pairwise none = {.blocks = 0};
    ck_assert(op_test_feq(sb_norm_pairwise_end(&none), 0.0f));
    const size_t c[] = {1, 2, 32, 33, 64, 65, 96, 128, 129, 768};
    const size_t path[] = {0, 1, 31, 32, 32, 33, 33, 33, 34, 36};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        ck_assert_msg(sb_norm_sum_path(c[i]) == path[i], "c %zu: path %zu", c[i],
                      sb_norm_sum_path(c[i]));
}
END_TEST

/* A row of 128: 2^24 at 0, 1 at 32, 64 and 96, zeros elsewhere. Its block
 * sums are (2^24, 1, 1, 1): the tree gives 2^24 + 2 exactly, one chain 2^24,
 * so the mean is (2^24 + 2) / 128, exact. Nine such rows: a group of eight
 * and one row alone, and every family's forward pass has the bits of the
 * one-row arithmetic with that mean. */
START_TEST(test_layernorm_sums_pairwise)
{
    enum { C = 128, N = 9 };
    const sb_norm_shape s = {.n = N, .c = C, .eps = 1e-5f};
    float *x = calloc(N * C, sizeof *x), *y = malloc(N * C * sizeof *y);
    float *want = malloc(C * sizeof *want), gamma[C], beta[C];
    ck_assert(x && y && want);
    for (int i = 0; i < N; i++) {
        x[i * C] = 0x1p24f;
        x[i * C + 32] = x[i * C + 64] = x[i * C + 96] = 1.0f;
    }
    for (int j = 0; j < C; j++) {
        gamma[j] = 1.0f + (float)j / 64.0f;
        beta[j] = (float)(j % 3) - 1.0f;
    }
    const float mean = (0x1p24f + 2.0f) / 128.0f;
    ck_assert(op_test_feq(sb_norm_row_stats(x, C, s.eps).mean, mean));
    sb_norm_stats group[SB_NORM_GROUP];
    sb_norm_group_stats(group, x, C, s.eps);
    for (int r = 0; r < SB_NORM_GROUP; r++) {
        ck_assert(op_test_feq(group[r].mean, mean));
        ck_assert(op_test_feq(group[r].rstd, sb_norm_row_stats(x, C, s.eps).rstd));
    }
    sb_layernorm_row(want, x, gamma, beta, C, s.eps);
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 3; threads++) {
            omp_set_num_threads(threads);
            sb_kernels((sb_family)f)->layernorm_fwd(y, x, gamma, beta, &s);
            for (int i = 0; i < N; i++)
                ck_assert_msg(op_test_same_bits(y + i * C, want, C), "%s, %d threads, row %d",
                              sb_family_name((sb_family)f), threads, i);
        }
    free(x);
    free(y);
    free(want);
}
END_TEST

/* A constant row has variance 0: xhat is 0, y is beta, and eps keeps rstd
 * finite (1/sqrt(eps)); a NaN in a row makes that row NaN and only it. */
START_TEST(test_constant_and_nan_rows)
{
    const sb_norm_shape s = {.n = 2, .c = 3, .eps = 1e-5f};
    const float x[6] = {0.5f, 0.5f, 0.5f, 1, NAN, 2};
    const float gamma[3] = {1, 2, 3}, beta[3] = {-1, 0, 1};
    float y[6];
    sb_kernels(SB_FAMILY_DET)->layernorm_fwd(y, x, gamma, beta, &s);
    for (int j = 0; j < 3; j++) {
        ck_assert(op_test_feq(y[j], beta[j]));
        ck_assert(isnan(y[3 + j]));
    }
}
END_TEST

/* ---- families against ref ---------------------------------------------------- */

/* det and loose within the bound of ref at 1..8 threads (5 and 7 too), det
 * bitwise the same at each */
START_TEST(test_families)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, norm_ops[o], shapes[_i]);
        op_test_check_families_within_bound(&c, 8);
        op_test_check_det_bitwise(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST

/* The row-wise ops are the ref arithmetic row by row, in groups of rows or one
 * by one (norm.h): det's bits are ref's at every shape (1024 rows are whole
 * groups, 601 end with one row past them, 3 and 1 are no group) */
START_TEST(test_row_ops_have_ref_bits)
{
    const sb_op row_ops[] = {SB_OP_layernorm_fwd, SB_OP_layernorm_bwd_data, SB_OP_rmsnorm_fwd,
                             SB_OP_rmsnorm_bwd_data, SB_OP_layernorm_mean, SB_OP_layernorm_rstd};
    for (size_t o = 0; o < sizeof row_ops / sizeof row_ops[0]; o++) {
        sb_op_call c;
        call_new(&c, row_ops[o], shapes[_i]);
        float *ref = op_test_run(&c, SB_FAMILY_REF, 1), *det = op_test_run(&c, SB_FAMILY_DET, 2);
        ck_assert(op_test_same_bits(det, ref, sb_tensor_count(&c.out[0])));
        free(ref);
        free(det);
        op_test_call_free(&c);
    }
}
END_TEST

/* loose splits gamma's row sum over the threads: its bits must move with the
 * thread count at the model's shape */
START_TEST(test_loose_depends_on_threads)
{
    const sb_op gamma_ops[] = {SB_OP_layernorm_bwd_gamma, SB_OP_rmsnorm_bwd_gamma};
    for (size_t o = 0; o < 2; o++) {
        sb_op_call c;
        call_new(&c, gamma_ops[o], shapes[0]);
        op_test_check_loose_moves(&c, 4);
        op_test_call_free(&c);
    }
}
END_TEST

/* ---- gradients against finite differences -------------------------------------
 * L(x, gamma) = sum_ij r_ij y_ij, y the definition evaluated in double; its
 * gradients are bwd_data and bwd_gamma with dy = r. Central differences
 * D(h) = (L(+h) - L(-h)) / 2h err by C h^2 + O(h^4) (truncation) plus the
 * rounding of L, under 2 (n c + 8) 2^-53 S / h with S = sum |r y|. With
 * D(h) - D(h/2) = (3/4) C h^2 + O(h^4), D(h/2)'s truncation error is about
 * |D(h) - D(h/2)| / 3: the tolerance takes |D(h) - D(h/2)| (3 times that,
 * room for the h^4 terms) plus both roundings, plus the float gradient's own
 * error bound (its double evaluation's, sb_refd_eval). h = 2^-10: h^2 is far
 * above the rounding term and the test still sees a wrong term of the
 * gradient (O(1) at these inputs) by a factor above 1000. */

typedef struct fd_norm {
    bool rms; /* RMSNorm: mean 0, no beta */
    int n, c;
    double eps;
    double *x, *gamma, *beta;
    const float *r;
} fd_norm;

/* L, and S in *magnitude */
static double norm_loss(const fd_norm *p, double *magnitude)
{
    double loss = 0.0, mag = 0.0;
    for (int i = 0; i < p->n; i++) {
        const double *x = p->x + (size_t)i * (size_t)p->c;
        double mean = 0.0, var = 0.0;
        for (int j = 0; j < p->c && !p->rms; j++)
            mean += x[j];
        mean /= p->c;
        for (int j = 0; j < p->c; j++)
            var += (x[j] - mean) * (x[j] - mean);
        var /= p->c;
        for (int j = 0; j < p->c; j++) {
            const double y = (x[j] - mean) / sqrt(var + p->eps) * p->gamma[j] +
                             (p->rms ? 0.0 : p->beta[j]);
            loss += (double)p->r[(size_t)i * (size_t)p->c + (size_t)j] * y;
            mag += fabs((double)p->r[(size_t)i * (size_t)p->c + (size_t)j] * y);
        }
    }
    *magnitude = mag;
    return loss;
}

static double central(fd_norm *p, double *at, double h, double *magnitude)
{
    const double keep = *at;
    double m_plus, m_minus;
    *at = keep + h;
    const double plus = norm_loss(p, &m_plus);
    *at = keep - h;
    const double minus = norm_loss(p, &m_minus);
    *at = keep;
    *magnitude = fmax(*magnitude, fmax(m_plus, m_minus));
    return (plus - minus) / (2.0 * h);
}

static void check_against(fd_norm *p, double *v, size_t count, const float *grad,
                          const double *bound, const char *what)
{
    const double h = 0x1p-10, n_terms = (double)p->n * p->c;
    for (size_t e = 0; e < count; e++) {
        double mag = 0.0;
        const double coarse = central(p, &v[e], h, &mag), fine = central(p, &v[e], h / 2, &mag);
        const double rounding = 2.0 * (n_terms + 8.0) * 0x1p-53 * mag * (1.0 / h + 2.0 / h);
        const double tol = bound[e] + fabs(coarse - fine) + rounding;
        ck_assert_msg(fabs((double)grad[e] - fine) <= tol,
                      "%s[%zu]: %a vs finite difference %a (tol %g)", what, e, (double)grad[e],
                      fine, tol);
    }
}

/* the three ops of layer norm (_i 0) or RMSNorm (_i 1) */
static const sb_op fd_ops[2][3] = {
    {SB_OP_layernorm_fwd, SB_OP_layernorm_bwd_data, SB_OP_layernorm_bwd_gamma},
    {SB_OP_rmsnorm_fwd, SB_OP_rmsnorm_bwd_data, SB_OP_rmsnorm_bwd_gamma},
};

START_TEST(test_gradients_finite_difference)
{
    const sb_norm_shape s = {.n = 3, .c = 7, .eps = 1e-5f};
    sb_op_call fwd = {.op = fd_ops[_i][0], .norm = s};
    sb_op_call data = {.op = fd_ops[_i][1], .norm = s};
    sb_op_call gam = {.op = fd_ops[_i][2], .norm = s};
    op_test_call_alloc(&fwd);
    op_test_call_alloc(&data);
    op_test_call_alloc(&gam);
    /* one x, gamma and r for the three */
    memcpy(data.in[1].data, fwd.in[0].data, sb_tensor_bytes(&fwd.in[0]));
    memcpy(data.in[2].data, fwd.in[1].data, sb_tensor_bytes(&fwd.in[1]));
    memcpy(gam.in[0].data, data.in[0].data, sb_tensor_bytes(&data.in[0]));
    memcpy(gam.in[1].data, fwd.in[0].data, sb_tensor_bytes(&fwd.in[0]));
    const bool rms = _i == 1;
    fd_norm p = {.rms = rms, .n = s.n, .c = s.c, .eps = (double)s.eps, .r = data.in[0].data,
                 .x = op_test_doubles(&fwd.in[0]), .gamma = op_test_doubles(&fwd.in[1]),
                 .beta = rms ? NULL : op_test_doubles(&fwd.in[2])};
    const size_t n_x = sb_tensor_count(&fwd.in[0]), n_g = sb_tensor_count(&fwd.in[1]);
    double *value = malloc(n_x * sizeof *value), *bound = malloc(n_x * sizeof *bound);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float *g = op_test_run(&data, (sb_family)f, 2);
        sb_refd_eval(value, bound, &data, 0, (sb_family)f);
        check_against(&p, p.x, n_x, g, bound, "dx");
        free(g);
        g = op_test_run(&gam, (sb_family)f, 2);
        sb_refd_eval(value, bound, &gam, 0, (sb_family)f);
        check_against(&p, p.gamma, n_g, g, bound, "dgamma");
        free(g);
    }
    /* the float forward against the same double definition, within its bound */
    float *y = op_test_run(&fwd, SB_FAMILY_DET, 2);
    sb_refd_eval(value, bound, &fwd, 0, SB_FAMILY_DET);
    for (size_t e = 0; e < n_x; e++)
        ck_assert(fabs((double)y[e] - value[e]) <= bound[e]);
    free(y);
    free(value);
    free(bound);
    free(p.x);
    free(p.gamma);
    free(p.beta);
    op_test_call_free(&fwd);
    op_test_call_free(&data);
    op_test_call_free(&gam);
}
END_TEST

/* The reordering bound tells a one-pass variance apart from a reordering
 * only where it must: the mutant layernorm_one_pass_tail (the last thread's
 * rows in one pass) is within the bound on centred rows (x in [-1, 1),
 * measured ratio about 0.2) and beyond it where a row's mean is about 110
 * times its spread (x in [63, 65), ratio about 3): the one-pass error grows
 * as (mean/std)^2, the two-pass bound as mean/std. */
static float worst_ratio_of_one_pass(float lo)
{
    sb_op_call c;
    call_new(&c, SB_OP_layernorm_fwd, (sb_norm_shape){64, 128, 1e-5f});
    op_test_fill_rng(c.in[0].data, sb_tensor_count(&c.in[0]), lo, lo + 2.0f, 9, 0);
    float *det = op_test_run(&c, SB_FAMILY_DET, 2);
    omp_set_num_threads(2);
    sb_op_call_run(sb_kernels_mutant("layernorm_one_pass_tail"), &c);
    float *bound = op_test_alloc_floats(sb_tensor_count(&c.out[0]));
    sb_op_call_bound(bound, &c, 0);
    const float *mutant = c.out[0].data;
    float worst = 0.0f;
    for (size_t e = 0; e < sb_tensor_count(&c.out[0]); e++)
        worst = fmaxf(worst, fabsf(mutant[e] - det[e]) / bound[e]);
    free(det);
    free(bound);
    op_test_call_free(&c);
    return worst;
}

START_TEST(test_bound_sees_one_pass_variance_where_it_cancels)
{
    const float centred = worst_ratio_of_one_pass(-1.0f), offset = worst_ratio_of_one_pass(63.0f);
    ck_assert_msg(centred > 0.0f && centred <= 1.0f, "centred rows: ratio %g", (double)centred);
    ck_assert_msg(offset > 1.0f, "rows of mean 64: ratio %g", (double)offset);
}
END_TEST

Suite *make_norm_suite(void)
{
    Suite *s = suite_create("norm");
    TCase *def = tcase_create("definitions");
    tcase_add_test(def, test_hand_values);
    tcase_add_test(def, test_rms_hand_values);
    tcase_add_test(def, test_stats_hand_values);
    tcase_add_test(def, test_rms_sums_in_blocks);
    tcase_add_test(def, test_rms_sums_pairwise);
    tcase_add_test(def, test_layernorm_pairwise_tree);
    tcase_add_test(def, test_layernorm_sums_pairwise);
    tcase_add_test(def, test_constant_and_nan_rows);
    tcase_add_loop_test(def, test_gradients_finite_difference, 0, 2);
    suite_add_tcase(s, def);
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_families, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_row_ops_have_ref_bits, 0, N_SHAPES);
    tcase_add_test(tc, test_loose_depends_on_threads);
    tcase_add_test(tc, test_bound_sees_one_pass_variance_where_it_cancels);
    suite_add_tcase(s, tc);
    return s;
}
