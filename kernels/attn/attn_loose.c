/* Self-attention, loose family: the pairs in parallel, every sum over
 * keys or queries cut into one chunk per thread, as a split of the keys over
 * the threads adds its partial sums: the bits follow the thread count. */
#include <omp.h>

#include "attn.h"

void sb_attention_fwd_loose(float *y, const float *qkv, const sb_attn_shape *s)
{
    sb_attn_fwd_pairs(y, qkv, s, omp_get_max_threads());
}

void sb_attention_bwd_loose(float *dqkv, const float *dy, const float *qkv,
                            const sb_attn_shape *s)
{
    sb_attn_bwd_pairs(dqkv, dy, qkv, s, omp_get_max_threads());
}
