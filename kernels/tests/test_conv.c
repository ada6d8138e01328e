/* conv2d: det and loose against ref within the op's reordering bound, det
 * bitwise across thread counts, loose thread-dependent, NaN propagation, and
 * finite-difference checks of the three gradients. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "conv/conv.h"
#include "gemm/sb_gemm.h"
#include "op_test.h"
#include "sb_kernels.h"

Suite *make_conv_suite(void);

/* ---- inputs and op calls --------------------------------------------------- */

static const sb_op conv_ops[] = {SB_OP_conv2d_fwd, SB_OP_conv2d_bwd_data,
                                 SB_OP_conv2d_bwd_filter, SB_OP_conv2d_bwd_bias};
#define N_OPS (sizeof conv_ops / sizeof conv_ops[0])

static void call_new(sb_op_call *c, sb_op op, sb_conv_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->conv = s;
    op_test_call_alloc(c);
}

static sb_conv_shape shape(int n, int c, int h, int w, int k, int r, int s, int stride,
                           int pad)
{
    sb_conv_shape cs = {n, c, h, w, k, r, s, stride, pad, 0, 0};
    ck_assert_int_eq(sb_conv_shape_complete(&cs), SB_OK);
    return cs;
}

/* the seed model's layers at a small batch, and shapes no tile divides */
static sb_conv_shape shape_at(int i)
{
    switch (i) {
    case 0: return shape(3, 1, 28, 28, 32, 3, 3, 1, 0);    /* conv1 */
    case 1: return shape(2, 32, 26, 26, 64, 3, 3, 1, 0);   /* conv2 */
    case 2: return shape(3, 5, 7, 13, 3, 3, 3, 2, 1);      /* odd, padded, strided */
    case 3: return shape(5, 3, 9, 8, 13, 2, 3, 1, 1);      /* non-square filter */
    /* rows of 8 positions (bwd_filter's panels transposed straight from the
     * image), 27 taps: the last block of 8 is partial */
    case 4: return shape(3, 3, 10, 10, 5, 3, 3, 1, 0);
    /* col2im's gather: rows of 40 (a run of 32 and one of 8), a 3 x 5
     * filter padded by 2; a 1 x 1 filter on rows of 5 */
    case 5: return shape(2, 3, 6, 40, 4, 3, 5, 1, 2);
    case 6: return shape(3, 2, 5, 5, 3, 1, 1, 1, 0);
    default: return shape(1, 1, 1, 1, 1, 1, 1, 1, 0);
    }
}
#define N_SHAPES 8

/* ---- im2col ---------------------------------------------------------------- */

/* Column matrix element (tap, pos) by its definition (conv/conv.h). */
static float col_at(const float *x, const sb_conv_shape *s, int tap, int pos)
{
    int ch = tap / (s->r * s->s), r = tap / s->s % s->r, t = tap % s->s;
    int ih = pos / s->q * s->stride - s->pad + r, iw = pos % s->q * s->stride - s->pad + t;
    if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
        return 0.0f;
    return x[((ptrdiff_t)ch * s->h + ih) * s->w + iw];
}

/* dx += col scattered back by its definition (conv/conv.h): each element
 * hears its taps in (r, s) order, here by channel, tap, output position. */
static void col2im_definition(float *dx, const float *col, const sb_conv_shape *s)
{
    const int pq = s->p * s->q;
    for (int tap = 0; tap < s->c * s->r * s->s; tap++) {
        int ch = tap / (s->r * s->s), r = tap / s->s % s->r, t = tap % s->s;
        for (int pos = 0; pos < pq; pos++) {
            int ih = pos / s->q * s->stride - s->pad + r, iw = pos % s->q * s->stride - s->pad + t;
            if (ih >= 0 && ih < s->h && iw >= 0 && iw < s->w)
                dx[((ptrdiff_t)ch * s->h + ih) * s->w + iw] += col[(ptrdiff_t)tap * pq + pos];
        }
    }
}

/* Blocks of the column matrix, as a packer asks for them (contiguous
 * positions, the plain path at stride 1 without padding, and strided
 * positions, the general path), at every offset a block may start. */
START_TEST(test_im2col_blocks_are_the_definition)
{
    const sb_conv_shape s = shape_at(_i);
    const int pq = s.p * s.q, crs = s.c * s.r * s.s;
    const size_t n_in = (size_t)s.c * s.h * s.w;
    float *x = malloc(n_in * sizeof(float));
    for (size_t i = 0; i < n_in; i++)
        x[i] = (float)i + 1.0f; /* no zeros: a zero read from the image is an error */
    const int nt = crs < 11 ? crs : 11, nj = pq < 37 ? pq : 37;
    float *dst = malloc((size_t)nt * nj * sizeof(float));
    for (int t0 = 0; t0 + nt <= crs; t0 += (crs - nt) / 3 + 1)
        for (int j0 = 0; j0 + nj <= pq; j0 += (pq - nj) / 5 + 1)
            for (int trans = 0; trans < 2; trans++) {
                ptrdiff_t ts = trans ? 1 : nj, ps = trans ? nt : 1;
                sb_im2col_block(dst, ts, ps, x, &s, t0, nt, j0, nj);
                for (int a = 0; a < nt; a++)
                    for (int b = 0; b < nj; b++) {
                        float want = col_at(x, &s, t0 + a, j0 + b);
                        ck_assert_msg(memcmp(&dst[a * ts + b * ps], &want, sizeof want) == 0,
                                      "shape %d, tap %d, position %d, %s", _i, t0 + a, j0 + b,
                                      trans ? "transposed" : "by rows");
                    }
            }
    free(dst);
    free(x);
}
END_TEST

/* ---- families against ref -------------------------------------------------- */

START_TEST(test_families_within_bound)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, conv_ops[o], shape_at(_i));
        op_test_check_families_within_bound(&c, 3);
        op_test_call_free(&c);
    }
}
END_TEST

START_TEST(test_det_bitwise_across_threads)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, conv_ops[o], shape_at(_i));
        op_test_check_det_bitwise(&c, 16);
        op_test_call_free(&c);
    }
}
END_TEST

/* The det kernels pack their GEMM operands straight from the images; the
 * result must be, bit for bit, the det GEMM (sb_gemm.h) on the materialised
 * column matrix, image by image: fwd y_n = b + W col_n, bwd_data via
 * col2im of W^T dy_n, bwd_filter per group of 4 images chained, the group
 * partials added in group order (conv_det.c). */
START_TEST(test_det_is_the_gemm_on_im2col)
{
    const sb_conv_shape s = shape_at(_i);
    const int pq = s.p * s.q, crs = s.c * s.r * s.s;
    const size_t img_in = (size_t)s.c * s.h * s.w, img_out = (size_t)s.k * pq;
    float *col = malloc((size_t)crs * pq * sizeof(float));
    sb_gemm_work *wk = sb_gemm_work_new(crs > s.k ? crs : s.k, crs > pq ? crs : pq,
                                        crs > pq ? crs : pq);
    for (size_t o = 0; o < 3; o++) {
        sb_op_call c;
        call_new(&c, conv_ops[o], s);
        float *det = op_test_run(&c, SB_FAMILY_DET, 2);
        float *want = calloc(sb_tensor_count(&c.out[0]), sizeof(float));
        const float *in0 = c.in[0].data, *in1 = c.in[1].data;
        if (c.op == SB_OP_conv2d_fwd) {
            const float *b = c.in[2].data;
            for (int img = 0; img < s.n; img++) {
                float *yn = want + img * img_out;
                for (size_t i = 0; i < img_out; i++)
                    yn[i] = b[i / (size_t)pq];
                sb_im2col(col, in0 + img * img_in, &s, pq, 1);
                sb_gemm_det_serial(yn, sb_matview_rows(in1, crs), sb_matview_rows(col, pq), wk,
                                   pq, s.k, pq, crs, true);
            }
        } else if (c.op == SB_OP_conv2d_bwd_data) {
            /* dx_n = col2im(W^T dy_n) */
            for (int img = 0; img < s.n; img++) {
                sb_gemm_det_serial(col, sb_matview_trans(in1, crs),
                                   sb_matview_rows(in0 + img * img_out, pq), wk, pq, crs, pq,
                                   s.k, false);
                col2im_definition(want + img * img_in, col, &s);
            }
        } else {
            /* dw = the group partials dy_n col_n^T, chained within a group,
             * added in group order */
            size_t nw = (size_t)s.k * crs;
            float *part = malloc(nw * sizeof(float));
            for (int g0 = 0; g0 < s.n; g0 += 4) {
                for (int img = g0; img < s.n && img < g0 + 4; img++) {
                    sb_im2col(col, in1 + img * img_in, &s, pq, 1);
                    sb_gemm_det_serial(part, sb_matview_rows(in0 + img * img_out, pq),
                                       sb_matview_trans(col, pq), wk, crs, s.k, crs, pq,
                                       img > g0);
                }
                for (size_t i = 0; i < nw; i++)
                    want[i] = g0 == 0 ? part[i] : want[i] + part[i];
            }
            free(part);
        }
        ck_assert_msg(memcmp(det, want, sb_tensor_bytes(&c.out[0])) == 0,
                      "%s det is not the det GEMM on im2col (shape %d)", sb_op_name(c.op), _i);
        free(det);
        free(want);
        op_test_call_free(&c);
    }
    sb_gemm_work_free(wk);
    free(col);
}
END_TEST

/* loose must show the thread dependence the harness exists to explain: the
 * weight and bias gradients sum per-thread partials over images. */
START_TEST(test_loose_depends_on_threads)
{
    const sb_op ops[] = {SB_OP_conv2d_bwd_filter, SB_OP_conv2d_bwd_bias};
    for (size_t o = 0; o < 2; o++) {
        sb_op_call c;
        call_new(&c, ops[o], shape(16, 32, 26, 26, 64, 3, 3, 1, 0));
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

/* A NaN input pixel reaches exactly the outputs whose window covers it. */
START_TEST(test_nan_propagates)
{
    sb_conv_shape s = shape(2, 2, 9, 9, 3, 3, 3, 1, 0);
    sb_op_call c;
    call_new(&c, SB_OP_conv2d_fwd, s);
    float *x = c.in[0].data;
    x[((1 * s.c + 1) * s.h + 4) * s.w + 5] = NAN;   /* image 1, channel 1, (4, 5) */
    for (sb_family f = SB_FAMILY_REF; f < SB_FAMILY_COUNT; f++) {
        float *y = op_test_run(&c, f, 2);
        for (int img = 0; img < s.n; img++)
            for (int k = 0; k < s.k; k++)
                for (int p = 0; p < s.p; p++)
                    for (int q = 0; q < s.q; q++) {
                        bool covers = img == 1 && p <= 4 && 4 < p + s.r && q <= 5 && 5 < q + s.s;
                        float v = y[((img * s.k + k) * s.p + p) * s.q + q];
                        ck_assert_msg(covers ? isnan(v) : isfinite(v), "%s y[%d][%d][%d][%d] = %g",
                                      sb_family_name(f), img, k, p, q, (double)v);
                    }
        free(y);
    }
    op_test_call_free(&c);
}
END_TEST

/* ---- finite differences ------------------------------------------------------
 * L = sum y*g over y = conv(x, w) + b, evaluated in double. L is linear in
 * each of x, w, b, so the central difference (L(v+h) - L(v-h)) / 2h has no
 * truncation error; its rounding error is at most
 *   (gamma_d(N) S+ + gamma_d(N) S-) / 2h <= gamma_d(N) S / h,
 * N = terms in L, S = sum of |terms| with every input replaced by |input| + h
 * (so S >= S+ and S-), gamma_d(N) = N 2^-53 / (1 - N 2^-53). The float
 * gradient from the kernel is within gamma(n) sum|terms| = bound/2 of the
 * exact gradient, so the tolerance is bound/2 + gamma_d(N) S / h. */

typedef struct conv_inputs {
    const float *x, *w, *b, *g;
} conv_inputs;

static double conv_loss(conv_inputs in, const sb_conv_shape *s, int which, size_t at,
                        double delta, bool abs_mode)
{
    double L = 0.0;
    for (int img = 0; img < s->n; img++)
        for (int k = 0; k < s->k; k++)
            for (int p = 0; p < s->p; p++)
                for (int q = 0; q < s->q; q++) {
                    double bv = (double)in.b[k] + (which == 2 && at == (size_t)k ? delta : 0.0);
                    double y = abs_mode ? fabs(bv) : bv;
                    for (int c = 0; c < s->c; c++)
                        for (int r = 0; r < s->r; r++)
                            for (int t = 0; t < s->s; t++) {
                                int ih = p * s->stride - s->pad + r, iw = q * s->stride - s->pad + t;
                                if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
                                    continue;
                                size_t xi = (((size_t)img * s->c + c) * s->h + ih) * s->w + iw;
                                size_t wi = (((size_t)k * s->c + c) * s->r + r) * s->s + t;
                                double xv = (double)in.x[xi] + (which == 0 && at == xi ? delta : 0.0);
                                double wv = (double)in.w[wi] + (which == 1 && at == wi ? delta : 0.0);
                                y += abs_mode ? fabs(xv) * fabs(wv) : xv * wv;
                            }
                    double gv = (double)in.g[(((size_t)img * s->k + k) * s->p + p) * s->q + q];
                    L += abs_mode ? y * fabs(gv) : y * gv;
                }
    return L;
}

static double gamma_d(double n)
{
    const double u = 0x1p-53;
    return n * u / (1.0 - n * u);
}

static float *uniform_new(size_t n, uint64_t seed)
{
    float *x = malloc(n * sizeof(float));
    op_test_fill_uniform(x, n, seed);
    return x;
}

static float *abs_plus(const float *x, size_t n, double h)
{
    float *a = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        a[i] = fabsf(x[i]) + (float)h;
    return a;
}

START_TEST(test_gradients_finite_difference)
{
    const sb_conv_shape s = _i == 0 ? shape(2, 3, 7, 6, 4, 3, 3, 2, 1) : shape(2, 2, 6, 6, 3, 3, 3, 1, 0);
    const double h = 0.5;
    size_t nx = (size_t)s.n * s.c * s.h * s.w, nw = (size_t)s.k * s.c * s.r * s.s;
    size_t ny = (size_t)s.n * s.k * s.p * s.q;
    float *x = uniform_new(nx, 1), *w = uniform_new(nw, 2), *b = uniform_new((size_t)s.k, 3);
    float *g = uniform_new(ny, 4);
    float *xa = abs_plus(x, nx, h), *wa = abs_plus(w, nw, h), *ba = abs_plus(b, (size_t)s.k, h);
    double fd_err = gamma_d((double)ny * (s.c * s.r * s.s + 2)) *
                    conv_loss((conv_inputs){xa, wa, ba, g}, &s, -1, 0, 0.0, true) / h;
    conv_inputs in = {x, w, b, g};

    const size_t sizes[3] = {nx, nw, (size_t)s.k};
    for (int which = 0; which < 3; which++) {
        float *grad = malloc(sizes[which] * sizeof(float));
        float *bound = malloc(sizes[which] * sizeof(float));
        for (sb_family f = SB_FAMILY_REF; f < SB_FAMILY_COUNT; f++) {
            const sb_kernel_table *k = sb_kernels(f);
            omp_set_num_threads(2);
            if (which == 0)
                k->conv2d_bwd_data(grad, g, w, &s), sb_conv2d_bwd_data_bound(bound, g, w, &s);
            else if (which == 1)
                k->conv2d_bwd_filter(grad, g, x, &s), sb_conv2d_bwd_filter_bound(bound, g, x, &s);
            else
                k->conv2d_bwd_bias(grad, g, &s), sb_conv2d_bwd_bias_bound(bound, g, &s);
            for (size_t at = 0; at < sizes[which]; at++) {
                double fd = (conv_loss(in, &s, which, at, h, false) -
                             conv_loss(in, &s, which, at, -h, false)) / (2 * h);
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

/* sb_partials_sum (conv det's group partials, the loose families' thread
 * partials) is each element's sum in part order, whichever team shares the
 * elements: one element, a partial block, a whole block and several
 * blocks, 1, 2 and 32 parts, at 1 to 3 threads, a NaN, an infinity and an
 * element of -0s (its sum is the first part's -0 plus -0s: -0). */
START_TEST(test_partials_sum_is_each_elements_sum_in_order)
{
    const size_t ns[] = {1, 100, 256, 1000};
    const int parts_list[] = {1, 2, 32};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof parts_list / sizeof parts_list[0]; b++) {
            size_t n = ns[a];
            int parts = parts_list[b];
            float *part = uniform_new(n * (size_t)parts, 7), *want = malloc(n * sizeof(float));
            float *out = malloc(n * sizeof(float));
            for (int g = 0; g < parts; g++)
                part[n * (size_t)g] = -0.0f;
            if (n > 50) {
                part[n * (size_t)(parts - 1) + 50] = NAN;
                part[49] = INFINITY;
            }
            for (size_t i = 0; i < n; i++) {
                want[i] = part[i];
                for (int g = 1; g < parts; g++)
                    want[i] += part[n * (size_t)g + i];
            }
            for (int threads = 1; threads <= 3; threads++) {
                memset(out, 0xff, n * sizeof(float));
#pragma omp parallel num_threads(threads)
                sb_partials_sum(out, part, n, parts);
                ck_assert_msg(op_test_same_bits(out, want, n), "n %zu, %d parts, %d threads", n,
                              parts, threads);
            }
            free(part), free(want), free(out);
        }
}
END_TEST

Suite *make_conv_suite(void)
{
    Suite *s = suite_create("conv");
    TCase *tc = tcase_create("conv");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_im2col_blocks_are_the_definition, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_families_within_bound, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_det_bitwise_across_threads, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_det_is_the_gemm_on_im2col, 0, N_SHAPES);
    tcase_add_test(tc, test_loose_depends_on_threads);
    tcase_add_test(tc, test_nan_propagates);
    tcase_add_loop_test(tc, test_gradients_finite_difference, 0, 2);
    tcase_add_test(tc, test_partials_sum_is_each_elements_sum_in_order);
    suite_add_tcase(s, tc);
    return s;
}
