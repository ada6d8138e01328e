/* im2col / col2im for one image (internal to kernels/conv/).
 *
 * The column matrix has one row per filter tap (c, r, s), row index
 * (c*R + r)*S + s, and one column per output position (p, q), column index
 * p*Q + q; a tap that falls in the padding is 0. Strides let a caller ask
 * for the matrix or its transpose. */
#ifndef SB_CONV_IM2COL_H
#define SB_CONV_IM2COL_H

#include <stddef.h>

#include "sb_kernels.h"

/* A tap's input channel, filter row and filter column: tap (ch*R + r)*S + t. */
typedef struct sb_conv_tap {
    int ch, r, t;
} sb_conv_tap;

static inline sb_conv_tap sb_conv_tap_of(const sb_conv_shape *s, int tap)
{
    return (sb_conv_tap){tap / (s->r * s->s), tap / s->s % s->r, tap % s->s};
}

/* Where a tap's row of the column matrix starts in the image, at stride 1
 * without padding: its element at output position (oh, ow) is
 * x[that + oh*w + ow]. */
static inline ptrdiff_t sb_conv_tap_offset(const sb_conv_shape *s, sb_conv_tap tap)
{
    return ((ptrdiff_t)tap.ch * s->h + tap.r) * s->w + tap.t;
}

/* col: element (tap, pos) at col[tap*rs + pos*cs]; x: [c][h][w] */
void sb_im2col(float *col, const float *x, const sb_conv_shape *s,
               ptrdiff_t rs, ptrdiff_t cs);

/* The block of taps [t0, t0+nt) x positions [j0, j0+nj) of the column
 * matrix, element (tap, pos) at dst[(tap-t0)*ts + (pos-j0)*ps]: what a GEMM
 * packer needs to build its panels straight from the image. */
void sb_im2col_block(float *dst, ptrdiff_t ts, ptrdiff_t ps, const float *x,
                     const sb_conv_shape *s, int t0, int nt, int j0, int nj);

/* dx += col scattered back: dx [c][h][w], col [c*r*s][p*q] row-major.
 * Each dx element receives its taps in (r, s) order, (p, q) ascending. */
void sb_col2im_add(float *dx, const float *col, const sb_conv_shape *s);

#endif
