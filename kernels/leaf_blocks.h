/* Leaf-sized blocks for the hashed mode of the elementwise ops and optimiser
 * updates (sb_op_call_run_hashed): block b of an op over n floats is elements
 * [b * SB_LEAF_FLOATS, min(n, (b + 1) * SB_LEAF_FLOATS)), leaf b of each of
 * its tensors. A kernel loops over blocks in parallel, computes a block, then
 * hashes that block of each tensor it was asked for:
 *
 *     const int64_t blocks = sb_leaf_blocks(n);
 *     #pragma omp parallel for schedule(static) if (blocks > 1)
 *     for (int64_t b = 0; b < blocks; b++) {
 *         size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
 *         ... compute [lo, hi) ...
 *         sb_leaf_put(r, r->out[0], b, y, lo, hi);
 *     }
 *
 * (one block is not worth a team). */
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

/* Digest of elements [lo, hi) of t (block b) into d[b]; nothing when d is
 * NULL (that tensor was not asked for). */
static inline void sb_leaf_put(const sb_leaf_request *r, sb_leaf_digest *d, int64_t b,
                               const float *t, size_t lo, size_t hi)
{
    if (d)
        r->hash(&d[b], t + lo, (hi - lo) * sizeof *t);
}

#endif
