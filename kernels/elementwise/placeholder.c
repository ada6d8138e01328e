/* Placeholder until the area is implemented: every entry aborts. */
#include "sb_kernels.h"

void sb_relu_fwd_ref(float *y, const float *x, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_relu_bwd_ref(float *dx, const float *dy, const float *x, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_maxpool_fwd_ref(float *y, const float *x, const sb_pool_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_maxpool_bwd_ref(float *dx, const float *dy, const float *x, const sb_pool_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dropout_mask_ref(float *mask, const sb_dropout_params *d, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_dropout_fwd_ref(float *y, const float *x, const float *mask, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_dropout_bwd_ref(float *dx, const float *dy, const float *mask, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_elementwise_register(sb_kernel_table *t, sb_family f) { (void)t; (void)f; }
