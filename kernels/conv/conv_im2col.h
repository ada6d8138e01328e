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

/* col: element (tap, pos) at col[tap*rs + pos*cs]; x: [c][h][w] */
void sb_im2col(float *col, const float *x, const sb_conv_shape *s,
               ptrdiff_t rs, ptrdiff_t cs);

/* dx += col scattered back: dx [c][h][w], col [c*r*s][p*q] row-major.
 * Each dx element receives its taps in (r, s) order, (p, q) ascending. */
void sb_col2im_add(float *dx, const float *col, const sb_conv_shape *s);

#endif
