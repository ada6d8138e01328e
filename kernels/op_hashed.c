/* sb_op_call_run_hashed: each HASHED op's hashed mode (kernels.def), paired
 * with the one kernel whose bits it reproduces, its det kernel. The mode
 * runs only when the table's entry for the op is that kernel, so a table
 * with an op replaced (a mutant, a user's table) runs the replacement
 * plainly and the harness hashes what it wrote. */
#include "op_kernels.h"

/* Runs the hashed mode of c's op when k holds its det kernel; false
 * (nothing run) otherwise, and for ops without a hashed mode: those with a
 * reduction, or whose tensors differ in length (pool, the classifier ops). */
static bool run_paired(const sb_kernel_table *k, const sb_op_call *c, const sb_leaf_request *r)
{
    switch (c->op) {
#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, ...)              \
    case SB_OP_##name:                                                                     \
        SB_CHOOSE_##hashed(if (k->name != sb_##name##_det) return false;                   \
                           sb_##name##_hashed(SB_ARGS_##outputs SB_ARGS_##inputs           \
                                              SB_TAIL_##params, r);                        \
                           return true;,                                                   \
                           return false;)
#include "kernels.def"
#undef SB_OP
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
