/* Placeholder until the area is implemented: every entry aborts. */
#include "sb_kernels.h"

void sb_dense_fwd_ref(float *y, const float *x, const float *w, const float *b, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_bwd_data_ref(float *dx, const float *dy, const float *w, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_bwd_weights_ref(float *dw, const float *dy, const float *x, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_bwd_bias_ref(float *db, const float *dy, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_fwd_bound(float *y, const float *x, const float *w, const float *b, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_bwd_data_bound(float *dx, const float *dy, const float *w, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_bwd_weights_bound(float *dw, const float *dy, const float *x, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_bwd_bias_bound(float *db, const float *dy, const sb_dense_shape *s) { SB_ASSERT(!"not yet implemented"); }
void sb_dense_register(sb_kernel_table *t, sb_family f) { (void)t; (void)f; }
