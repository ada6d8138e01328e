/* im2col / col2im for one image: see conv.h. */
#include <stdint.h>
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

/* col2im at strides above 1 (and for filters wider than the gather below
 * takes): dx zeroed, then output rows from the last to the first, and for
 * each the taps in (r, s) order: an element of dx hears from output row p
 * through filter row r = ih - p*stride + pad, so from the last row on it
 * hears its taps in (r, s) order, as conv.h says. The channels are
 * innermost, so that the runs of taps (r, 0), (r, 1), ... into one row of
 * dx, a float apart, are not back to back (a load overlapping the store
 * just before it at another offset waits for it): conv2's col2im took 28
 * us an image by channel, tap and row, 23 so (Zen 4 EPYC, one thread). */
SB_ALWAYS_INLINE void col2im_scatter(float *dx, const float *col, const sb_conv_shape *s)
{
    memset(dx, 0, (size_t)s->c * s->h * s->w * sizeof(float));
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

/* ---- col2im at stride 1, output-stationary -------------------------------
 * Each run of 16 floats of a dx row sums its taps in (r, s) order in a
 * register from +0 and is stored once: the same additions, in the same
 * order, as the scatter above, without its stores and reloads of dx. A
 * tap's run of col (filter row r, column t: output row ih + pad - r,
 * output columns iw + pad - t) is one unaligned load of 16 floats, its
 * lanes outside the output row or past dx's row masked to +0; adding +0
 * changes no sum that started from +0 (such a sum is never -0). Four dx
 * rows at a time, so that four chains of additions overlap. On a Zen 4
 * EPYC at 1 thread, conv2's col2im with the column matrix in L2: 18-19 ->
 * 12 us an image; right after each image's product, the batch's 128: 3.1
 * -> 2.2 ms. */
enum {
    COL2IM_ROWS_S_MAX = 8,   /* the widest filter the gather takes */
    COL2IM_ROWS = 4,         /* dx rows at a time */
};
#define PRAGMA_UNROLL_ROWS _Pragma("GCC unroll 4")

typedef int32_t v16i __attribute__((vector_size(64)));

/* The lanes of dx's run from column iw0 that output column iw0 + lane + pad
 * - t fills: inside the output row and inside dx's row. (Vectors pass
 * through pointers here: a 64-byte vector returned by value is an ABI
 * matter GCC warns of in the baseline copy.) */
SB_ALWAYS_INLINE void run_lanes(v16i *lanes, const sb_conv_shape *s, int iw0, int t)
{
    const v16i lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    v16i iw = lane + iw0, q = iw + (s->pad - t);
    *lanes = (q >= 0) & (q < s->q) & (iw < s->w);
    /* opaque: knowing each lane all ones or zero, GCC 12 turns the masking
     * below into a test and a scalar load per lane */
    __asm__("" : "+m"(*lanes));
}

/* The 16 floats of col from offset o, those outside col's n floats +0:
 * the loads near col's ends, out of the way of the others' code. */
__attribute__((noinline)) static void load_run_guarded(sb_v16f *v, const float *col,
                                                       ptrdiff_t n, ptrdiff_t o)
{
    float run[16];
    for (int l = 0; l < 16; l++)
        run[l] = o + l >= 0 && o + l < n ? col[o + l] : 0.0f;
    memcpy(v, run, sizeof run);
}

/* acc += the 16 floats of col from offset o masked to lanes; guarded: they
 * may reach past either end of col's n floats. */
SB_ALWAYS_INLINE void add_tap_run(sb_v16f *acc, const float *col, ptrdiff_t n, ptrdiff_t o,
                                  const v16i *lanes, bool guarded)
{
    sb_v16f v;
    if (!guarded || (o >= 0 && o + 16 <= n))
        v = *(const sb_v16f_at *)(col + o);
    else
        load_run_guarded(&v, col, n, o);
    *acc += (sb_v16f)((v16i)v & *lanes);
}

/* The first width floats of the run v (16 floats) to d. */
SB_ALWAYS_INLINE void store_run(float *d, const sb_v16f *v, int width)
{
    if (width >= 16) {
        *(sb_v16f_at *)d = *v;
        return;
    }
    /* the rest through a copy: indexing the vector itself by a variable
     * would keep every accumulator in memory */
    float run[16];
    *(sb_v16f_at *)run = *v;
    sb_copy_run(d, run, width);
}

/* dx rows [ih0, ih0 + rows) of channel c, columns [iw0, iw0 + 32) (those
 * inside dx's row stored), each row two runs: rows COL2IM_ROWS where every
 * row hears every filter row, else 1, its filter rows tested. guarded:
 * loads that may reach past col's ends are tested. */
SB_ALWAYS_INLINE void col2im_block(float *dx, const float *col, const sb_conv_shape *s, int R,
                                   int S, int c, int ih0, int rows, int iw0,
                                   const v16i lanes[][2], bool guarded)
{
    const ptrdiff_t pq = (ptrdiff_t)s->p * s->q, n = (ptrdiff_t)s->c * R * S * pq;
    sb_v16f acc[COL2IM_ROWS][2] = {{{0}}};
    for (int r = 0; r < R; r++) {
        int p = ih0 + s->pad - r;   /* the first row's output row */
        if (rows == 1 && (p < 0 || p >= s->p))
            continue;
        for (int t = 0; t < S; t++) {
            /* col's offset of tap (c, r, t) at output row p, column iw0 + pad - t */
            ptrdiff_t o = ((ptrdiff_t)(c * R + r) * S + t) * pq + (ptrdiff_t)p * s->q + iw0 +
                          s->pad - t;
            PRAGMA_UNROLL_ROWS
            for (int k = 0; k < rows; k++) {
                ptrdiff_t ok = o + (ptrdiff_t)k * s->q;
                add_tap_run(&acc[k][0], col, n, ok, &lanes[t][0], guarded);
                add_tap_run(&acc[k][1], col, n, ok + 16, &lanes[t][1], guarded);
            }
        }
    }
    float *d = dx + ((ptrdiff_t)c * s->h + ih0) * s->w + iw0;
    const int width = s->w - iw0 < 32 ? s->w - iw0 : 32;
    PRAGMA_UNROLL_ROWS
    for (int k = 0; k < rows; k++) {
        store_run(d + k * s->w, &acc[k][0], width);
        if (width > 16)
            store_run(d + k * s->w + 16, &acc[k][1], width - 16);
    }
}

/* Channel c's dx rows: blocks of COL2IM_ROWS rows where each hears every
 * filter row, the rest one at a time. */
SB_ALWAYS_INLINE void col2im_channel(float *dx, const float *col, const sb_conv_shape *s,
                                     int R, int S, int c, int iw0, const v16i lanes[][2],
                                     bool guarded)
{
    int ih0 = 0;
    while (ih0 < s->h) {
        /* output rows ih0 + pad - (R - 1) .. ih0 + COL2IM_ROWS - 1 + pad all there */
        if (ih0 + COL2IM_ROWS <= s->h && ih0 + s->pad - (R - 1) >= 0 &&
            ih0 + COL2IM_ROWS - 1 + s->pad < s->p) {
            col2im_block(dx, col, s, R, S, c, ih0, COL2IM_ROWS, iw0, lanes, guarded);
            ih0 += COL2IM_ROWS;
        } else {
            col2im_block(dx, col, s, R, S, c, ih0, 1, iw0, lanes, guarded);
            ih0++;
        }
    }
}

SB_ALWAYS_INLINE void col2im_rows(float *dx, const float *col, const sb_conv_shape *s, int R,
                                  int S)
{
    const ptrdiff_t pq = (ptrdiff_t)s->p * s->q, n = (ptrdiff_t)s->c * R * S * pq;
    for (int iw0 = 0; iw0 < s->w; iw0 += 32) {
        v16i lanes[COL2IM_ROWS_S_MAX][2];
        for (int t = 0; t < S; t++) {
            run_lanes(&lanes[t][0], s, iw0, t);
            run_lanes(&lanes[t][1], s, iw0 + 16, t);
        }
        for (int c = 0; c < s->c; c++) {
            /* every load of the channel's taps inside col (a loose bound) */
            const ptrdiff_t first = (ptrdiff_t)c * R * S * pq;
            if (first - S < 0 || first + R * S * pq + s->w + s->pad + 32 > n)
                col2im_channel(dx, col, s, R, S, c, iw0, (const v16i(*)[2])lanes, true);
            else
                col2im_channel(dx, col, s, R, S, c, iw0, (const v16i(*)[2])lanes, false);
        }
    }
}

SB_ISA_VARIANTS(col2im, (float *dx, const float *col, const sb_conv_shape *s),
                (dx, col, s))
{
    if (s->stride != 1 || s->s > COL2IM_ROWS_S_MAX)
        col2im_scatter(dx, col, s);
    else if (s->r == 3 && s->s == 3)   /* the common filter's loops bounded by constants */
        col2im_rows(dx, col, s, 3, 3);
    else
        col2im_rows(dx, col, s, s->r, s->s);
}

void sb_col2im(float *dx, const float *col, const sb_conv_shape *s)
{
    col2im(dx, col, s);
}
