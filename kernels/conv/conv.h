/* The conv area's shared pieces, for its own files, its tests and the
 * mutants of its ops (kernels/mutants/): the det steps a mutant varies, the
 * constants of the det definition, and im2col / col2im.
 *
 * The column matrix of an image has one row per filter tap (c, r, s), row
 * index (c*R + r)*S + s, and one column per output position (p, q), column
 * index p*Q + q; a tap that falls in the padding is 0. Strides let a caller
 * ask for the matrix or its transpose. */
#ifndef SB_CONV_H
#define SB_CONV_H

#include <stdbool.h>
#include <stddef.h>

#include "op_kernels.h"

/* Images per partial weight gradient of det's bwd_filter: part of the det
 * definition (changing it changes bits). Small enough to give threads work at
 * batch 128, large enough that the partials (one k*c*r*s copy per group)
 * stay small. */
#define SB_CONV_GROUP 4

/* ---- det's steps ------------------------------------------------------------
 * col: c*r*s*p*q floats of scratch; b_buf: the GEMM's B packing buffer,
 * sb_gemm_b_buf_floats(n, k) floats for the product's n and k (bwd_data:
 * n = p*q, k = the filters; bwd_filter: n = c*r*s, k = p*q). */

/* One image of det's data gradient: dx_n = col2im(W^T [crs][k] dy_n [k][pq]). */
void sb_conv2d_bwd_data_image(float *dxn, float *col, float *b_buf, const float *dyn,
                              const float *w, const sb_conv_shape *s);

/* Images [i0, i1) of det's weight gradient summed into one partial:
 * part [k][crs] = sum over the images of dy_n [k][pq] col_n^T [pq][crs], the
 * images' products chained in image order; the first overwrites part, or with
 * onto set is added to what part holds. */
void sb_conv2d_bwd_filter_images(float *part, float *b_buf, const float *dy, const float *x,
                                 const sb_conv_shape *s, int i0, int i1, bool onto);


/* Det's weight gradient over the partials in part (room for
 * ceil(n / SB_CONV_GROUP) copies of dw): each group of SB_CONV_GROUP images
 * summed into its partial (onto: added to what the partial holds), then the
 * partials added in group order. */
void sb_conv2d_bwd_filter_groups(float *dw, float *part, const float *dy, const float *x,
                                 const sb_conv_shape *s, bool onto);

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

/* dx = col gathered back: dx [c][h][w], col [c*r*s][p*q] row-major. Each
 * dx element is the sum from +0 of its taps in (r, s) order, (p, q)
 * ascending (0 where it has none). */
void sb_col2im(float *dx, const float *col, const sb_conv_shape *s);

#endif
