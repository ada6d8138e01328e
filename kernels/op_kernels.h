/* The kernels the list promises beyond the public ref and bound functions
 * (internal to kernels/: the areas define them, the tables, the op call, the
 * hashed mode, the double evaluations and the mutants use them). Generated
 * from kernels.def:
 *   sb_<name>_det      every op: the det family's kernel
 *   sb_<name>_loose    LOOSE ops: the loose family's own kernel
 *   sb_<name>_hashed   HASHED ops: det's bits leaf block by leaf block, with
 *                      the leaves r asks for hashed while they are in cache
 *                      (r->out[j]: output j's digests, r->in[i]: input i's)
 *   sb_<name>_refd     REFD ops: the double evaluation (sb_refd_fn, sb_refd.h)
 * (In the SB_OP bodies, the column names are macro parameters: no other
 * identifier there may be spelt like one.) */
#ifndef SB_OP_KERNELS_H
#define SB_OP_KERNELS_H

#include "sb_kernels.h"
#include "sb_refd.h"

#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, refd, signature)  \
    sb_##name##_fn sb_##name##_det;                                                       \
    SB_IF_##loose(sb_##name##_fn sb_##name##_loose;)                                      \
    SB_IF_##hashed(void sb_##name##_hashed(SB_UNPAREN signature, const sb_leaf_request *r);) \
    SB_IF_##refd(sb_refd_fn sb_##name##_refd;)
#include "kernels.def"
#undef SB_OP

#endif
