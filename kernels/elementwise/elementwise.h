/* The parallel elementwise kernels. None of these ops has a reduction, so one
 * parallel loop over elements (or planes) gives the ref bits for every thread
 * count: the det and loose tables both install these. */
#ifndef SB_ELEMENTWISE_H
#define SB_ELEMENTWISE_H

#include "sb_kernels.h"

sb_relu_fwd_fn sb_relu_fwd_par;
sb_relu_bwd_fn sb_relu_bwd_par;
sb_maxpool_fwd_fn sb_maxpool_fwd_par;
sb_maxpool_bwd_fn sb_maxpool_bwd_par;
sb_dropout_mask_fn sb_dropout_mask_par;
sb_dropout_fwd_fn sb_dropout_fwd_par;
sb_dropout_bwd_fn sb_dropout_bwd_par;

/* The hashed mode of the *_par kernels above (leaf_blocks.h): the same bits,
 * computed leaf block by leaf block, each block of the tensors r asks for
 * hashed right after it is computed. r->out[0] is the output's digests,
 * r->in[i] those of the i-th input in signature order. */
void sb_relu_fwd_hashed(float *y, const float *x, size_t n, const sb_leaf_request *r);
void sb_relu_bwd_hashed(float *dx, const float *dy, const float *x, size_t n,
                        const sb_leaf_request *r);
void sb_dropout_mask_hashed(float *mask, const sb_dropout_params *d, size_t n,
                            const sb_leaf_request *r);
void sb_dropout_fwd_hashed(float *y, const float *x, const float *mask, size_t n,
                           const sb_leaf_request *r);
void sb_dropout_bwd_hashed(float *dx, const float *dy, const float *mask, size_t n,
                           const sb_leaf_request *r);

#endif
