/* im2col / col2im for one image: see conv.h. */
#include <string.h>

#include "conv.h"
#include "gemm/sb_data_move.h"

/* Output columns q whose input column q*stride - pad + t lies in [0, w):
 * [*q0, *q1). */
static inline void valid_q(const sb_conv_shape *s, int t, int *q0, int *q1)
{
    int lo = s->pad - t;    /* q*stride >= pad - t */
    int hi = s->w + s->pad - t; /* q*stride < w + pad - t */
    if (s->stride == 1) {   /* no division on the common path */
        *q0 = lo <= 0 ? 0 : lo;
        *q1 = hi <= 0 ? 0 : hi;
    } else {
        *q0 = lo <= 0 ? 0 : (lo + s->stride - 1) / s->stride;
        *q1 = hi <= 0 ? 0 : (hi + s->stride - 1) / s->stride;
    }
    if (*q1 > s->q)
        *q1 = s->q;
    if (*q0 > *q1)
        *q0 = *q1;
}

/* The general run: columns [a, b) of output row oh, zeros outside the
 * input, element q at out[(q - a)*ps]. */
static void im2col_run(float *out, ptrdiff_t ps, const float *xc, const sb_conv_shape *s, int r,
                       int t, int q0, int q1, int oh, int a, int b)
{
    int ih = oh * s->stride - s->pad + r;
    int va = a, vb = a; /* the run's columns inside the input */
    if (ih >= 0 && ih < s->h) {
        va = q0 > a ? q0 : a;
        vb = q1 < b ? q1 : b;
        if (va > vb)
            va = vb;
    }
    for (int q = a; q < va; q++)
        out[(q - a) * ps] = 0.0f;
    if (va < vb) {
        /* input column of q is q*stride - pad + t, inside the row here */
        const float *in = xc + (ptrdiff_t)ih * s->w + (va * s->stride - s->pad + t);
        for (int q = va; q < vb; q++)
            out[(q - a) * ps] = in[(ptrdiff_t)(q - va) * s->stride];
    }
    for (int q = vb; q < b; q++)
        out[(q - a) * ps] = 0.0f;
}

/* nj positions of tap (ch, r, t) from output position (oh, ow) on, one
 * output row's run at a time. */
static inline void im2col_tap(float *dst, ptrdiff_t ps, const float *x, const sb_conv_shape *s,
                              int ch, int r, int t, int oh, int ow, int nj)
{
    const float *xc = x + (ptrdiff_t)ch * s->h * s->w;
    int q0, q1;
    valid_q(s, t, &q0, &q1);
    for (int done = 0; done < nj; oh++, ow = 0) {
        int len = s->q - ow < nj - done ? s->q - ow : nj - done;
        im2col_run(dst + (ptrdiff_t)done * ps, ps, xc, s, r, t, q0, q1, oh, ow, ow + len);
        done += len;
    }
}

/* The same at stride 1 without padding into contiguous positions (ps = 1),
 * the seed model's case: every run lies inside the input and is a copy.
 * The runs of output rows are the same for every tap, so they are the outer
 * loop and each tap is one offset into x on from the last. */
SB_ALWAYS_INLINE void im2col_block_plain(float *dst, ptrdiff_t ts, const float *x,
                                         const sb_conv_shape *s, int t0, int nt, int oh,
                                         int ow, int nj)
{
    const int w = s->w, q = s->q;
    const sb_conv_tap first = sb_conv_tap_of(s, t0);
    const ptrdiff_t off0 = sb_conv_tap_offset(s, first);
    for (int done = 0; done < nj; oh++, ow = 0) {
        int len = q - ow < nj - done ? q - ow : nj - done;
        const float *from = x + (ptrdiff_t)oh * w + ow;
        float *to = dst + done;
        ptrdiff_t off = off0;
        int r = first.r, c = first.t;
        for (int tap = 0; tap < nt; tap++) {
            sb_copy_run(to + (ptrdiff_t)tap * ts, from + off, len);
            /* the next tap: one column on, or the next row, or the next channel */
            off++;
            if (++c == s->s) {
                c = 0;
                off += w - s->s;
                if (++r == s->r) {
                    r = 0;
                    off += (ptrdiff_t)(s->h - s->r) * w;
                }
            }
        }
        done += len;
    }
}

/* Multiversioned functions stay in their file (clang resolves clones of an
 * external function only where its every declaration says so). */
SB_ISA_VARIANTS(im2col_block, (float *dst, ptrdiff_t ts, ptrdiff_t ps, const float *x, const sb_conv_shape *s, int t0, int nt, int j0, int nj),
                (dst, ts, ps, x, s, t0, nt, j0, nj))
{
    int oh = j0 / s->q, ow = j0 % s->q;
    if (ps == 1 && s->stride == 1 && s->pad == 0) {
        im2col_block_plain(dst, ts, x, s, t0, nt, oh, ow, nj);
        return;
    }
    /* the divisions once per block: taps and positions are counted on */
    sb_conv_tap first = sb_conv_tap_of(s, t0);
    int ch = first.ch, r = first.r, t = first.t;
    for (int tap = 0; tap < nt; tap++) {
        im2col_tap(dst + (ptrdiff_t)tap * ts, ps, x, s, ch, r, t, oh, ow, nj);
        if (++t == s->s) {
            t = 0;
            if (++r == s->r)
                r = 0, ch++;
        }
    }
}

void sb_im2col_block(float *dst, ptrdiff_t ts, ptrdiff_t ps, const float *x,
                     const sb_conv_shape *s, int t0, int nt, int j0, int nj)
{
    im2col_block(dst, ts, ps, x, s, t0, nt, j0, nj);
}

void sb_im2col(float *col, const float *x, const sb_conv_shape *s,
               ptrdiff_t rs, ptrdiff_t cs)
{
    sb_im2col_block(col, rs, cs, x, s, 0, s->c * s->r * s->s, 0, s->p * s->q);
}

/* dx_row[q*stride] += src[q] for q in [0, n): one tap's run along an output
 * row. At stride 1, sixteen and then eight floats a vector addition, the
 * rest one by one: spelt out, as a loop the compiler vectorised it with a
 * loop, its remainder and their tests around every run of conv2's 24. The
 * additions are the same ones either way. */
SB_ALWAYS_INLINE void add_run(float *restrict dx_row, const float *restrict src, int n,
                              int stride)
{
    int q = 0;
    if (stride == 1) {
        for (; q + 16 <= n; q += 16)
            *(sb_v16f_at *)(dx_row + q) += *(const sb_v16f_at *)(src + q);
        if (q + 8 <= n) {
            *(sb_v8f_at *)(dx_row + q) += *(const sb_v8f_at *)(src + q);
            q += 8;
        }
    }
    for (; q < n; q++)
        dx_row[(ptrdiff_t)q * stride] += src[q];
}

/* Output rows from the last to the first, and for each the taps in (r, s)
 * order: an element of dx hears from output row p through filter row r =
 * ih - p*stride + pad, so from the last row on it hears its taps in (r, s)
 * order, as conv.h says. The channels are innermost, so that the runs of
 * taps (r, 0), (r, 1), ... into one row of dx, a float apart, are not back
 * to back (a load overlapping the store just before it at another offset
 * waits for it): conv2's col2im took 28 us an image by channel, tap and
 * row, 23 so (Zen 4 EPYC, one thread). */
SB_ISA_VARIANTS(col2im_add, (float *dx, const float *col, const sb_conv_shape *s),
                (dx, col, s))
{
    const ptrdiff_t pq = (ptrdiff_t)s->p * s->q, tap_rows = (ptrdiff_t)s->r * s->s * pq;
    const ptrdiff_t plane = (ptrdiff_t)s->h * s->w;
    for (int p = s->p - 1; p >= 0; p--)
        for (int r = 0; r < s->r; r++) {
            int ih = p * s->stride - s->pad + r;
            if (ih < 0 || ih >= s->h)
                continue;
            for (int t = 0; t < s->s; t++) {
                int q0, q1;
                valid_q(s, t, &q0, &q1);
                if (q0 == q1)
                    continue;
                float *to = dx + (ptrdiff_t)ih * s->w + (q0 * s->stride - s->pad + t);
                const float *from = col + ((ptrdiff_t)r * s->s + t) * pq +
                                    (ptrdiff_t)p * s->q + q0;
                for (int c = 0; c < s->c; c++)
                    add_run(to + c * plane, from + c * tap_rows, q1 - q0, s->stride);
            }
        }
}

void sb_col2im_add(float *dx, const float *col, const sb_conv_shape *s)
{
    col2im_add(dx, col, s);
}
