/* The elementwise ops, det family (loose runs them too): the usual parallel
 * loops, and each op's hashed mode, which computes the same bits leaf block
 * by leaf block and hashes each block of the tensors asked for right after
 * computing it (leaf_blocks.h). */
#include <stdint.h>
#include <string.h>

#include "elementwise.h"
#include "leaf_blocks.h"

/* ---- ReLU ------------------------------------------------------------------ */

void sb_relu_fwd_det(float *y,          /* [n] */
                     const float *x,    /* [n] */
                     size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = sb_relu(x[i]);
}

static void relu_fwd_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    float *y = c->out[0];
    const float *x = c->in[0];
    for (size_t i = lo; i < hi; i++)
        y[i] = sb_relu(x[i]);
}

void sb_relu_fwd_hashed(float *y, const float *x, size_t n, const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {x}}, r, relu_fwd_block);
}

void sb_relu_bwd_det(float *dx,         /* [n] */
                     const float *dy,   /* [n] */
                     const float *x,    /* [n] forward input */
                     size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        dx[i] = sb_relu_grad(dy[i], x[i]);
}

static void relu_bwd_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    float *dx = c->out[0];
    const float *dy = c->in[0], *x = c->in[1];
    for (size_t i = lo; i < hi; i++)
        dx[i] = sb_relu_grad(dy[i], x[i]);
}

void sb_relu_bwd_hashed(float *dx, const float *dy, const float *x, size_t n,
                        const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {dx}, .in = {dy, x}}, r, relu_bwd_block);
}

/* ---- max pooling: parallel over planes (each plane of y and dx has one
 * writer), eight windows a step. */

/* ---- eight windows at a time ----------------------------------------------
 * The same rules on GNU vectors (GCC >= 12, clang), element by element:
 * compares give all-ones or zero lanes and selects pick bits, so a vector
 * lane computes exactly what sb_window_max and sb_window_grad compute for
 * its window. The plane loops take eight windows a step; a row whose
 * window count is not a multiple of eight ends with the last eight windows,
 * overlapping ones already done (they get the same values again, as x is
 * not written: outputs must not overlap x, see check_apart).
 * Helpers take vectors by pointer: a 32-byte vector passed by value has a
 * different ABI with and without AVX, which compilers warn about even where
 * the helper is inlined. */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* the even and odd columns of 16 floats from row on */
SB_ALWAYS_INLINE void load_pairs(const float *row, v8f *even, v8f *odd)
{
    v8f lo, hi;
    memcpy(&lo, row, sizeof lo);
    memcpy(&hi, row + 8, sizeof hi);
    *even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
    *odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
}

/* even and odd interleaved into 16 floats from row on */
SB_ALWAYS_INLINE void store_pairs(float *row, const v8f *even, const v8f *odd)
{
    v8f lo = __builtin_shufflevector(*even, *odd, 0, 8, 1, 9, 2, 10, 3, 11);
    v8f hi = __builtin_shufflevector(*even, *odd, 4, 12, 5, 13, 6, 14, 7, 15);
    memcpy(row, &lo, sizeof lo);
    memcpy(row + 8, &hi, sizeof hi);
}

/* NaN lanes all ones: only a NaN is not <= itself (and `v != v` trips
 * -Wfloat-equal) */
#define NAN_LANES(v) (~((v) <= (v)))

/* m = the bits of v where `take`, of m elsewhere */
SB_ALWAYS_INLINE void select8(v8f *m, const v8i *take, const v8f *v)
{
    *m = (v8f)(((v8i)*v & *take) | ((v8i)*m & ~*take));
}

/* sb_window_max's step: v replaces the best so far m if larger or the first NaN */
SB_ALWAYS_INLINE void later_wins(v8f *m, const v8f *v)
{
    v8i take = (*v > *m) | (NAN_LANES(*v) & ~NAN_LANES(*m));
    select8(m, &take, v);
}

/* the maximum of windows a b / c d (scan order) */
SB_ALWAYS_INLINE void window_max8(v8f *m, const v8f *a, const v8f *b, const v8f *c,
                                  const v8f *d)
{
    *m = *a;
    later_wins(m, b);
    later_wins(m, c);
    later_wins(m, d);
}

/* Windows [j, j + 8) of window row i. */
SB_ALWAYS_INLINE void windows_fwd(float *y, const float *x0, const float *x1, size_t j)
{
    v8f a, b, c, d, m;
    load_pairs(x0 + 2 * j, &a, &b);
    load_pairs(x1 + 2 * j, &c, &d);
    window_max8(&m, &a, &b, &c, &d);
    memcpy(y + j, &m, sizeof m);
}

SB_ALWAYS_INLINE void windows_bwd(float *d0, float *d1, const float *dy, const float *x0,
                                  const float *x1, size_t j)
{
    v8f a, b, c, d, m, g;
    load_pairs(x0 + 2 * j, &a, &b);
    load_pairs(x1 + 2 * j, &c, &d);
    memcpy(&g, dy + j, sizeof g);
    window_max8(&m, &a, &b, &c, &d);
    /* sb_is_max, lane by lane, then the first match takes g */
    v8i first = (a >= m) | NAN_LANES(a);
    v8i second = ~first & ((b >= m) | NAN_LANES(b));
    v8i third = ~(first | second) & ((c >= m) | NAN_LANES(c));
    v8i fourth = ~(first | second | third);
    /* g where the flag is set, +0 elsewhere */
    v8f ga = (v8f)((v8i)g & first), gb = (v8f)((v8i)g & second);
    v8f gc = (v8f)((v8i)g & third), gd = (v8f)((v8i)g & fourth);
    store_pairs(d0 + 2 * j, &ga, &gb);
    store_pairs(d1 + 2 * j, &gc, &gd);
}

SB_ISA_VARIANTS(plane_fwd,
                (float *y,          /* [h/2][w/2] */
                 const float *x,    /* [h][w] */
                 size_t h, size_t w),
                (y, x, h, w))
{
    const size_t ph = h / 2, pw = w / 2;
    for (size_t i = 0; i < ph; i++) {
        float *yi = y + i * pw;
        if (pw < 8) {
            for (size_t j = 0; j < pw; j++)
                yi[j] = sb_window_max(x, w, i, j);
            continue;
        }
        const float *x0 = x + 2 * i * w, *x1 = x0 + w;
        for (size_t j = 0; j + 8 <= pw; j += 8)
            windows_fwd(yi, x0, x1, j);
        if (pw % 8)
            windows_fwd(yi, x0, x1, pw - 8);
    }
}

/* The backward finds the max, then gives the gradient to the first element
 * that matches it, with flags rather than the argmax's index: on real
 * activations the winner's position is unpredictable, and branching on it
 * made this loop 2.5 times slower. Every element of dx is written: the four
 * of each window (twice where a row's last eight-window step overlaps the
 * one before), then the row and column an odd size leaves out. */
SB_ISA_VARIANTS(plane_bwd,
                (float *dx,         /* [h][w] */
                 const float *dy,   /* [h/2][w/2] */
                 const float *x,    /* [h][w] */
                 size_t h, size_t w),
                (dx, dy, x, h, w))
{
    const size_t ph = h / 2, pw = w / 2;
    for (size_t i = 0; i < ph; i++) {
        const float *x0 = x + 2 * i * w, *x1 = x0 + w;
        float *d0 = dx + 2 * i * w, *d1 = d0 + w;
        if (pw >= 8) {
            for (size_t j = 0; j + 8 <= pw; j += 8)
                windows_bwd(d0, d1, dy + i * pw, x0, x1, j);
            if (pw % 8)
                windows_bwd(d0, d1, dy + i * pw, x0, x1, pw - 8);
            continue;
        }
        for (size_t j = 0; j < pw; j++)
            sb_window_grad(dx, x, w, i, j, dy[i * pw + j]);
    }
    if (w % 2)
        for (size_t r = 0; r < 2 * ph; r++)
            dx[r * w + w - 1] = 0.0f;
    if (h % 2)
        for (size_t c = 0; c < w; c++)
            dx[(h - 1) * w + c] = 0.0f;
}

/* The output (n_out floats) and x (n_in) must not overlap: the last
 * eight-window step of a row reads x after the step before it stored. */
static void check_apart(const float *out, size_t n_out, const float *x, size_t n_in)
{
    uintptr_t o = (uintptr_t)out, i = (uintptr_t)x;
    SB_ASSERT(o + n_out * sizeof(float) <= i || i + n_in * sizeof(float) <= o);
}

void sb_maxpool_fwd_det(float *y,               /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] */
                        const sb_pool_shape *s)
{
    const size_t planes = sb_pool_planes(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t in = h * w, out = (h / 2) * (w / 2);
    check_apart(y, planes * out, x, planes * in);
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < planes; p++)
        plane_fwd(y + p * out, x + p * in, h, w);
}

void sb_maxpool_bwd_det(float *dx,              /* [n][c][h][w] */
                        const float *dy,        /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] forward input */
                        const sb_pool_shape *s)
{
    const size_t planes = sb_pool_planes(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t in = h * w, out = (h / 2) * (w / 2);
    check_apart(dx, planes * in, x, planes * in);
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < planes; p++)
        plane_bwd(dx + p * in, dy + p * out, x + p * in, h, w);
}

/* ---- dropout ------------------------------------------------------------------ */

/* Masks are drawn in runs of this many uniforms, few enough that a run is
 * still in L1 when it is thresholded. */
#define MASK_SLICE 4096

/* mask[first .. first + n) as sb_dropout_element would make it, drawn as
 * runs of uniforms (many Philox blocks at a time) thresholded in place. */
static void mask_run(float *mask, const sb_dropout_params *d, float scale, size_t first,
                     size_t n)
{
    for (size_t done = 0; done < n; done += MASK_SLICE) {
        const size_t len = n - done < MASK_SLICE ? n - done : MASK_SLICE;
        float *m = mask + first + done;
        sb_rng_uniform_run(m, d->seed, d->stream, d->step, first + done, len);
        for (size_t i = 0; i < len; i++)
            m[i] = m[i] >= d->rate ? scale : 0.0f;
    }
}

/* Threads take whole slices. */
void sb_dropout_mask_det(float *mask,                   /* [n] */
                         const sb_dropout_params *d,
                         size_t n)
{
    const float scale = sb_dropout_scale(d);
    const int64_t slices = (int64_t)((n + MASK_SLICE - 1) / MASK_SLICE);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < slices; c++) {
        const size_t first = (size_t)c * MASK_SLICE;
        mask_run(mask, d, scale, first, n - first < MASK_SLICE ? n - first : MASK_SLICE);
    }
}

static void mask_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    const sb_dropout_params *d = c->params;
    mask_run(c->out[0], d, sb_dropout_scale(d), lo, hi - lo);
}

void sb_dropout_mask_hashed(float *mask, const sb_dropout_params *d, size_t n,
                            const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {mask}, .params = d}, r, mask_block);
}

/* fwd and bwd are the same product: y = x * mask, dx = dy * mask */
static void times_mask(float *out, const float *in, const float *mask, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] * mask[i];
}

static void times_mask_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    float *out = c->out[0];
    const float *in = c->in[0], *mask = c->in[1];
    for (size_t i = lo; i < hi; i++)
        out[i] = in[i] * mask[i];
}

static void times_mask_hashed(float *out, const float *in, const float *mask, size_t n,
                              const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {out}, .in = {in, mask}}, r,
                       times_mask_block);
}

void sb_dropout_fwd_det(float *y,               /* [n] */
                        const float *x,         /* [n] */
                        const float *mask,      /* [n] */
                        size_t n)
{
    times_mask(y, x, mask, n);
}

void sb_dropout_bwd_det(float *dx,              /* [n] */
                        const float *dy,        /* [n] */
                        const float *mask,      /* [n] the forward's mask */
                        size_t n)
{
    times_mask(dx, dy, mask, n);
}

void sb_dropout_fwd_hashed(float *y, const float *x, const float *mask, size_t n,
                           const sb_leaf_request *r)
{
    times_mask_hashed(y, x, mask, n, r);
}

void sb_dropout_bwd_hashed(float *dx, const float *dy, const float *mask, size_t n,
                           const sb_leaf_request *r)
{
    times_mask_hashed(dx, dy, mask, n, r);
}

/* ---- GELU and the residual add: one element each, like ReLU (the residual
 * add may write over its first input). GELU's spans are built for each
 * vector width (sb_tanhf is branch-free, so its loop vectorises where the
 * compiler if-converts it, tanh.h; every copy gives the scalar bits), and
 * each thread takes whole hash leaves, as in hashed mode. */

SB_ISA_VARIANTS(gelu_fwd_span, (float *y, const float *x, size_t lo, size_t hi),
                (y, x, lo, hi))
{
    for (size_t i = lo; i < hi; i++)
        y[i] = sb_gelu(x[i]);
}

SB_ISA_VARIANTS(gelu_bwd_span, (float *dx, const float *dy, const float *x, size_t lo, size_t hi),
                (dx, dy, x, lo, hi))
{
    for (size_t i = lo; i < hi; i++)
        dx[i] = sb_gelu_grad(dy[i], x[i]);
}

static void gelu_fwd_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    gelu_fwd_span(c->out[0], c->in[0], lo, hi);
}

void sb_gelu_fwd_det(float *y,          /* [n] */
                     const float *x,    /* [n] */
                     size_t n)
{
    sb_gelu_fwd_hashed(y, x, n, NULL);
}

void sb_gelu_fwd_hashed(float *y, const float *x, size_t n, const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {x}}, r, gelu_fwd_block);
}

static void gelu_bwd_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    gelu_bwd_span(c->out[0], c->in[0], c->in[1], lo, hi);
}

void sb_gelu_bwd_hashed(float *dx, const float *dy, const float *x, size_t n,
                        const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {dx}, .in = {dy, x}}, r, gelu_bwd_block);
}

void sb_gelu_bwd_det(float *dx,         /* [n] */
                     const float *dy,   /* [n] */
                     const float *x,    /* [n] forward input */
                     size_t n)
{
    sb_gelu_bwd_hashed(dx, dy, x, n, NULL);
}

/* GELU's erf form: the same loops over scalar calls of libm's erff and
 * expf (elementwise.h), no vector copies to build */

static void gelu_erf_fwd_span(float *y, const float *x, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        y[i] = sb_gelu_erf(x[i]);
}

static void gelu_erf_bwd_span(float *dx, const float *dy, const float *x, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        dx[i] = sb_gelu_erf_grad(dy[i], x[i]);
}

static void gelu_erf_fwd_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    gelu_erf_fwd_span(c->out[0], c->in[0], lo, hi);
}

void sb_gelu_erf_fwd_hashed(float *y, const float *x, size_t n, const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {x}}, r, gelu_erf_fwd_block);
}

void sb_gelu_erf_fwd_det(float *y,          /* [n] */
                         const float *x,    /* [n] */
                         size_t n)
{
    sb_gelu_erf_fwd_hashed(y, x, n, NULL);
}

static void gelu_erf_bwd_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    gelu_erf_bwd_span(c->out[0], c->in[0], c->in[1], lo, hi);
}

void sb_gelu_erf_bwd_hashed(float *dx, const float *dy, const float *x, size_t n,
                            const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {dx}, .in = {dy, x}}, r,
                       gelu_erf_bwd_block);
}

void sb_gelu_erf_bwd_det(float *dx,         /* [n] */
                         const float *dy,   /* [n] */
                         const float *x,    /* [n] forward input */
                         size_t n)
{
    sb_gelu_erf_bwd_hashed(dx, dy, x, n, NULL);
}

void sb_residual_add_det(float *y,       /* [n], may be a */
                         const float *a, /* [n] */
                         const float *b, /* [n] */
                         size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

static void residual_add_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    float *y = c->out[0];
    const float *a = c->in[0], *b = c->in[1];
    for (size_t i = lo; i < hi; i++)
        y[i] = a[i] + b[i];
}

void sb_residual_add_hashed(float *y, const float *a, const float *b, size_t n,
                            const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {a, b}}, r, residual_add_block);
}

/* ---- SiLU and the SwiGLU product: one block function per op, built for each
 * vector width as GELU's spans, which det runs over the leaf blocks with a
 * request for no digests and hashed mode with the request it is given: one
 * loop (sb_leaf_blocks_run) for both. */

static const sb_leaf_request no_digests;

SB_ISA_VARIANTS(silu_fwd_block, (const sb_leaf_call *c, size_t lo, size_t hi),
                (c, lo, hi))
{
    for (size_t i = lo; i < hi; i++)
        c->out[0][i] = sb_silu(c->in[0][i]);
}

SB_ISA_VARIANTS(silu_bwd_block, (const sb_leaf_call *c, size_t lo, size_t hi),
                (c, lo, hi))
{
    for (size_t i = lo; i < hi; i++)
        c->out[0][i] = sb_silu_grad(c->in[0][i], c->in[1][i]);
}

SB_ISA_VARIANTS(swiglu_fwd_block, (const sb_leaf_call *c, size_t lo, size_t hi),
                (c, lo, hi))
{
    for (size_t i = lo; i < hi; i++)
        c->out[0][i] = sb_swiglu(c->in[0][i], c->in[1][i]);
}

SB_ISA_VARIANTS(swiglu_bwd_a_block, (const sb_leaf_call *c, size_t lo, size_t hi),
                (c, lo, hi))
{
    for (size_t i = lo; i < hi; i++)
        c->out[0][i] = sb_swiglu_grad_a(c->in[0][i], c->in[1][i], c->in[2][i]);
}

SB_ISA_VARIANTS(swiglu_bwd_b_block, (const sb_leaf_call *c, size_t lo, size_t hi),
                (c, lo, hi))
{
    for (size_t i = lo; i < hi; i++)
        c->out[0][i] = sb_swiglu_grad_b(c->in[0][i], c->in[1][i]);
}

void sb_silu_fwd_det(float *y, const float *x, size_t n)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {x}}, &no_digests,
                       silu_fwd_block);
}

void sb_silu_fwd_hashed(float *y, const float *x, size_t n, const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {x}}, r, silu_fwd_block);
}

void sb_silu_bwd_det(float *dx, const float *dy, const float *x, size_t n)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {dx}, .in = {dy, x}}, &no_digests,
                       silu_bwd_block);
}

void sb_silu_bwd_hashed(float *dx, const float *dy, const float *x, size_t n,
                        const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {dx}, .in = {dy, x}}, r, silu_bwd_block);
}

void sb_swiglu_fwd_det(float *y, const float *a, const float *b, size_t n)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {a, b}}, &no_digests,
                       swiglu_fwd_block);
}

void sb_swiglu_fwd_hashed(float *y, const float *a, const float *b, size_t n,
                          const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {a, b}}, r, swiglu_fwd_block);
}

void sb_swiglu_bwd_a_det(float *da, const float *dy, const float *a, const float *b, size_t n)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {da}, .in = {dy, a, b}}, &no_digests,
                       swiglu_bwd_a_block);
}

void sb_swiglu_bwd_a_hashed(float *da, const float *dy, const float *a, const float *b, size_t n,
                            const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {da}, .in = {dy, a, b}}, r,
                       swiglu_bwd_a_block);
}

void sb_swiglu_bwd_b_det(float *db, const float *dy, const float *a, size_t n)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {db}, .in = {dy, a}}, &no_digests,
                       swiglu_bwd_b_block);
}

void sb_swiglu_bwd_b_hashed(float *db, const float *dy, const float *a, size_t n,
                            const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {db}, .in = {dy, a}}, r,
                       swiglu_bwd_b_block);
}
