/* Leaf-sized blocks for the hashed mode of the elementwise ops and optimiser
 * updates (sb_op_call_run_hashed): block b of an op over n floats is elements
 * [b * SB_LEAF_FLOATS, min(n, (b + 1) * SB_LEAF_FLOATS)), leaf b of each of
 * its tensors. A hashed kernel gives sb_leaf_blocks_run its tensors and a
 * function that computes one block:
 *
 *     static void relu_fwd_block(const sb_leaf_call *c, size_t lo, size_t hi)
 *     {
 *         ... c->out[0][i] from c->in[0][i], i in [lo, hi) ...
 *     }
 *     sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {y}, .in = {x}}, r,
 *                        relu_fwd_block);
 */
#ifndef SB_LEAF_BLOCKS_H
#define SB_LEAF_BLOCKS_H

#include "sb_kernels.h"

#define SB_LEAF_FLOATS (SB_HASH_LEAF_BYTES / sizeof(float))

static inline int64_t sb_leaf_blocks(size_t n)
{
    return (int64_t)((n + SB_LEAF_FLOATS - 1) / SB_LEAF_FLOATS);
}

static inline size_t sb_leaf_begin(int64_t b)
{
    return (size_t)b * SB_LEAF_FLOATS;
}

static inline size_t sb_leaf_end(int64_t b, size_t n)
{
    size_t end = ((size_t)b + 1) * SB_LEAF_FLOATS;
    return end < n ? end : n;
}

/* An elementwise op or update over n floats, as its hashed mode runs it:
 * its tensors in signature order (each out[j] and in[i] digested into the
 * request's out[j] and in[i]), and what else it reads. */
typedef struct sb_leaf_call {
    size_t n;
    float *out[SB_OP_MAX_OUT];
    const float *in[SB_OP_MAX_IN];
    const void *params; /* the op's sb_optim_params or sb_dropout_params */
    int64_t t;          /* Adam's and AdamW's step */
} sb_leaf_call;

/* Computes elements [lo, hi) of the outputs of c. */
typedef void sb_leaf_block_fn(const sb_leaf_call *c, size_t lo, size_t hi);

/* The hashed mode's loop: the blocks of c in parallel (one block is not
 * worth a team), each computed by `block`, then hashed, each tensor r asks
 * for, while the block is in cache; an input that an output is written over
 * (the residual add's y may be a) is hashed before the block is computed.
 * r NULL: the same blocks and nothing hashed (an op's det mode). */
void sb_leaf_blocks_run(const sb_leaf_call *c, const sb_leaf_request *r,
                        sb_leaf_block_fn *block);

#endif
