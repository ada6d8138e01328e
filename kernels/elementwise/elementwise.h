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

#endif
