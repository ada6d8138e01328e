/* Placeholder until the area is implemented: every entry aborts. */
#include "sb_kernels.h"

void sb_sgd_update_ref(float *w, float *velocity, const float *g, const sb_optim_params *o, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_rmsprop_update_ref(float *w, float *acc, const float *g, const sb_optim_params *o, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_adam_update_ref(float *w, float *m, float *v, const float *g, const sb_optim_params *o, int64_t t, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_adadelta_update_ref(float *w, float *acc, float *delta_acc, const float *g, const sb_optim_params *o, size_t n) { SB_ASSERT(!"not yet implemented"); }
void sb_optim_register(sb_kernel_table *t, sb_family f) { (void)t; (void)f; }
void sb_optim_defaults(sb_optim_params *o, sb_optimizer kind) { (void)o; (void)kind; SB_ASSERT(!"not yet implemented"); }
const char *sb_optimizer_name(sb_optimizer kind) { (void)kind; return "?"; }
