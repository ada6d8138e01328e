/* The parallel update loops, installed for det and loose by
 * sb_optim_register. An update has no reduction: each element is one
 * writer running the same arithmetic as ref, so every family and every
 * thread count gives the same bits. */
#ifndef SB_OPTIM_PAR_H
#define SB_OPTIM_PAR_H

#include "leaf_blocks.h"
#include "sb_kernels.h"

/* Below this many elements a parallel region costs more than it saves. */
#define OPTIM_PARALLEL_MIN 16384

sb_sgd_update_fn sb_sgd_update_par;
sb_rmsprop_update_fn sb_rmsprop_update_par;
sb_adam_update_fn sb_adam_update_par;
sb_adadelta_update_fn sb_adadelta_update_par;

/* The hashed mode of the *_par kernels above (leaf_blocks.h): the same bits,
 * leaf block by leaf block, each block of the tensors r asks for hashed right
 * after it is updated. r->out[j] is the j-th updated tensor (w, then the
 * state) in signature order, r->in[0] the gradient. */
void sb_sgd_update_hashed(float *w, float *velocity, const float *g,
                          const sb_optim_params *o, size_t n, const sb_leaf_request *r);
void sb_rmsprop_update_hashed(float *w, float *acc, const float *g,
                              const sb_optim_params *o, size_t n, const sb_leaf_request *r);
void sb_adam_update_hashed(float *w, float *m, float *v, const float *g,
                           const sb_optim_params *o, int64_t t, size_t n,
                           const sb_leaf_request *r);
void sb_adadelta_update_hashed(float *w, float *acc, float *delta_acc, const float *g,
                               const sb_optim_params *o, size_t n, const sb_leaf_request *r);

#endif
