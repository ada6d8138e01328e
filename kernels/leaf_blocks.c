/* The hashed mode's loop over leaf blocks (leaf_blocks.h). */
#include "leaf_blocks.h"

/* Digest of elements [lo, hi) of t (block b) into d[b]; nothing when d is
 * NULL (that tensor was not asked for). */
static void leaf_put(const sb_leaf_request *r, sb_leaf_digest *d, int64_t b, const float *t,
                     size_t lo, size_t hi)
{
    if (d)
        r->hash(&d[b], t + lo, (hi - lo) * sizeof *t);
}

/* Whether an output of c is the array in (the residual add's y may be a). */
static bool written_over(const sb_leaf_call *c, const float *in)
{
    for (int j = 0; j < SB_OP_MAX_OUT && c->out[j]; j++)
        if (c->out[j] == in)
            return true;
    return false;
}

/* Block b of each input of c that an output is (or is not) written over. */
static void put_inputs(const sb_leaf_call *c, const sb_leaf_request *r, int64_t b, size_t lo,
                       size_t hi, bool overwritten)
{
    for (int i = 0; i < SB_OP_MAX_IN && c->in[i]; i++)
        if (written_over(c, c->in[i]) == overwritten)
            leaf_put(r, r->in[i], b, c->in[i], lo, hi);
}

void sb_leaf_blocks_run(const sb_leaf_call *c, const sb_leaf_request *r,
                        sb_leaf_block_fn *block)
{
    const int64_t blocks = sb_leaf_blocks(c->n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, c->n);
        if (r)
            put_inputs(c, r, b, lo, hi, true);
        block(c, lo, hi);
        for (int j = 0; r && j < SB_OP_MAX_OUT && c->out[j]; j++)
            leaf_put(r, r->out[j], b, c->out[j], lo, hi);
        if (r)
            put_inputs(c, r, b, lo, hi, false);
    }
}
