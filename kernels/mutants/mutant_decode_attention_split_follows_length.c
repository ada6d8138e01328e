/* Mutant decode_attention_split_follows_length (mutants.def): the decode
 * attention cuts a request's keys into four splits of ceil(len/4), so its
 * sums follow the cache length, not the training forward's chunks of
 * SB_ATTN_KEY_BLOCK keys. A reordering: the same terms, another bracketing;
 * decode parts from the training forward pass from the first position of
 * 5 or more keys. */
#include "attn/attn.h"
#include "decode_mutants.h"

static void pair(float *y, const float *q, const float *kv, int len, int d, int width, float *kt,
                 float *p)
{
    const ptrdiff_t ld = 2 * (ptrdiff_t)width;
    const int chunk = sb_attn_chunk(len, 4);
    sb_attn_transpose(kt, kv, ld, len, d, len);
    sb_attn_dots(p, q, kt, len, d, len, sb_attn_scale(d));
    sb_attn_softmax(p, len, chunk);
    sb_attn_chunked_rows(y, p, 1, kv + width, ld, len, d, chunk);
}

void sb_mutant_decode_attention_split_follows_length(float *y, const sb_attn_decode *a)
{
    sb_attn_decode_pairs(y, a, pair);
}
