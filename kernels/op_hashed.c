/* sb_op_call_run_hashed: each op's hashed mode, paired with the one kernel
 * whose bits it reproduces. The mode runs only when the table's entry for the
 * op is that kernel, so a table with an op replaced (a mutant, a numerics
 * mutant, a user's table) runs the replacement plainly and the harness hashes
 * what it wrote. Dispatch is a switch with no default (-Wswitch). */
#include "elementwise/elementwise.h"
#include "optim/optim_par.h"
#include "sb_kernels.h"

#define IN(i) ((const float *)c->in[i].data)
#define OUT(i) ((float *)c->out[i].data)

/* Runs the hashed mode of c's op when k holds its paired kernel; false
 * (nothing run) otherwise. */
static bool run_paired(const sb_kernel_table *k, const sb_op_call *c, const sb_leaf_request *r)
{
    switch (c->op) {
    case SB_OP_relu_fwd:
        if (k->relu_fwd != sb_relu_fwd_par)
            return false;
        sb_relu_fwd_hashed(OUT(0), IN(0), c->n, r);
        return true;
    case SB_OP_relu_bwd:
        if (k->relu_bwd != sb_relu_bwd_par)
            return false;
        sb_relu_bwd_hashed(OUT(0), IN(0), IN(1), c->n, r);
        return true;
    case SB_OP_dropout_mask:
        if (k->dropout_mask != sb_dropout_mask_par)
            return false;
        sb_dropout_mask_hashed(OUT(0), &c->dropout, c->n, r);
        return true;
    case SB_OP_dropout_fwd:
        if (k->dropout_fwd != sb_dropout_fwd_par)
            return false;
        sb_dropout_fwd_hashed(OUT(0), IN(0), IN(1), c->n, r);
        return true;
    case SB_OP_dropout_bwd:
        if (k->dropout_bwd != sb_dropout_bwd_par)
            return false;
        sb_dropout_bwd_hashed(OUT(0), IN(0), IN(1), c->n, r);
        return true;
    case SB_OP_sgd_update:
        if (k->sgd_update != sb_sgd_update_par)
            return false;
        sb_sgd_update_hashed(OUT(0), OUT(1), IN(0), &c->optim, c->n, r);
        return true;
    case SB_OP_rmsprop_update:
        if (k->rmsprop_update != sb_rmsprop_update_par)
            return false;
        sb_rmsprop_update_hashed(OUT(0), OUT(1), IN(0), &c->optim, c->n, r);
        return true;
    case SB_OP_adam_update:
        if (k->adam_update != sb_adam_update_par)
            return false;
        sb_adam_update_hashed(OUT(0), OUT(1), OUT(2), IN(0), &c->optim, c->t, c->n, r);
        return true;
    case SB_OP_adadelta_update:
        if (k->adadelta_update != sb_adadelta_update_par)
            return false;
        sb_adadelta_update_hashed(OUT(0), OUT(1), OUT(2), IN(0), &c->optim, c->n, r);
        return true;
    /* Ops with a reduction, or whose tensors differ in length (pool, the
     * classifier ops): no hashed mode. */
    case SB_OP_conv2d_fwd:
    case SB_OP_conv2d_bwd_data:
    case SB_OP_conv2d_bwd_filter:
    case SB_OP_conv2d_bwd_bias:
    case SB_OP_dense_fwd:
    case SB_OP_dense_bwd_data:
    case SB_OP_dense_bwd_weights:
    case SB_OP_dense_bwd_bias:
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd:
    case SB_OP_softmax_fwd:
    case SB_OP_xent_loss:
    case SB_OP_softmax_xent_bwd:
    case SB_OP_accuracy:
        return false;
    case SB_OP_COUNT:
        break;
    }
    SB_ASSERT(!"SB_OP_COUNT is not an op");
    return false;
}

bool sb_op_call_run_hashed(const sb_kernel_table *k, const sb_op_call *c,
                           const sb_leaf_request *r)
{
    SB_ASSERT(r != NULL && r->hash != NULL);
    if (run_paired(k, c, r))
        return true;
    sb_op_call_run(k, c);
    return false;
}
