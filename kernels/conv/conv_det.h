/* Per-image steps of the GEMM-based conv2d and the loose overrides
 * (internal to kernels/conv/). col: c*r*s*p*q floats of scratch. */
#ifndef SB_CONV_DET_H
#define SB_CONV_DET_H

#include "gemm/sb_gemm.h"
#include "sb_kernels.h"

void sb_conv2d_bwd_data_image(float *dxn, float *col, sb_gemm_work *wk,
                              const float *dyn, const float *w, const sb_conv_shape *s);
void sb_conv2d_bwd_filter_image(float *dw, float *col, sb_gemm_work *wk,
                                const float *dyn, const float *xn,
                                const sb_conv_shape *s, bool accumulate);

sb_conv2d_bwd_filter_fn sb_conv2d_bwd_filter_loose;
sb_conv2d_bwd_bias_fn sb_conv2d_bwd_bias_loose;

#endif
