/* One AdamW update of many parameters that lie end to end in shared
 * buffers (a model's parameters, gradients and moments), in one parallel
 * region, in place of one update call per parameter: a model of many small
 * tensors (the char GPT's biases and layer norms of 128 floats) would pay a
 * parallel region, or a serial loop while the other threads wait, for each.
 *
 * Each part is a parameter: its elements, and whether it takes weight
 * decay (the caller's o->weight_decay) or not (0). Every element gets the
 * bits that sb_adamw_update_det gives it when called on its part alone with
 * that weight decay: an update has no reduction, so neither the parts
 * around it nor the thread count enter. The work is cut into fixed chunks
 * of SB_ADAMW_CHUNK elements of one part (their count and bounds depend
 * only on the parts), which the threads share.
 *
 * With a leaf hash, the same region then hashes each leaf of each tensor
 * a part asks for (leaf k of a part's w, m or v: its elements [k, k + 1)
 * SB_HASH_LEAF_BYTES / 4 from the part's start, as the harness cuts a
 * tensor), the leaves shared among the threads, while the tensors are still
 * in the caches: the probes of the parameters then bring their digests. */
#ifndef SB_ADAMW_PARTS_H
#define SB_ADAMW_PARTS_H

#include "optim.h"

#define SB_ADAMW_CHUNK 4096

typedef struct sb_adamw_part {
    size_t offset, count;       /* elements [offset, offset + count) of each buffer */
    bool decay;                 /* false: weight decay 0 */
    /* NULL, or room for the leaf digests of the part's w, m, v */
    sb_leaf_digest *leaves[3];
} sb_adamw_part;

/* The leaves of a part of n floats. */
size_t sb_adamw_part_leaves(size_t n);

/* Updates every part of w, m, v from g with o at step t (t >= 1); with
 * hash not NULL, fills the leaf digests the parts ask for. Meant only for
 * a kernel table whose adamw_update is sb_adamw_update_det (or loose's,
 * the same kernel): any other kernel runs per parameter, as the model
 * calls it. */
void sb_adamw_update_parts(float *w, float *m, float *v, const float *g,
                           const sb_optim_params *o, int64_t t, const sb_adamw_part *parts,
                           int n_parts, sb_leaf_hash_fn *hash);

#endif
