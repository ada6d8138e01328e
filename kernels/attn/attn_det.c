/* Self-attention, det family: the pairs in parallel, every sum over
 * keys or queries in fixed chunks of SB_ATTN_KEY_BLOCK (attn.h). */
#include "attn.h"

void sb_attention_fwd_det(float *y, const float *qkv, const sb_attn_shape *s)
{
    sb_attn_fwd_pairs(y, qkv, s, 0);
}

void sb_attention_bwd_det(float *dqkv, const float *dy, const float *qkv,
                          const sb_attn_shape *s)
{
    sb_attn_bwd_pairs(dqkv, dy, qkv, s, 0);
}
