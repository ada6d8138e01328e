/* Mutant decode_softmax_split_max_no_rescale (mutants.def): split-KV decode
 * attention whose splits of SB_ATTN_KEY_BLOCK keys each subtract their own
 * max before expf, and whose sums and outputs are then added as they are,
 * without rescaling each by expf(m_s - m) to the common max m. With one
 * split (16 keys or fewer) it is only normalised at the end; from 17 keys
 * the splits' weights are wrong. */
#include "attn/attn.h"
#include "decode_mutants.h"

static void pair(float *y, const float *q, const float *kv, int len, int d, int width, float *kt,
                 float *p)
{
    const ptrdiff_t ld = 2 * (ptrdiff_t)width;
    sb_attn_transpose(kt, kv, ld, len, d, len);
    sb_attn_dots(p, q, kt, len, d, len, sb_attn_scale(d));
    float sum = 0.0f;
    for (int j0 = 0; j0 < len; j0 += SB_ATTN_KEY_BLOCK) {
        const int n = len - j0 < SB_ATTN_KEY_BLOCK ? len - j0 : SB_ATTN_KEY_BLOCK;
        sb_attn_exp_shifted(p + j0, n); /* the split's own max */
        sum += sb_attn_chunked_sum(p + j0, 1, n, n);
    }
    sb_attn_chunked_rows(y, p, 1, kv + width, ld, len, d, SB_ATTN_KEY_BLOCK);
    for (int c = 0; c < d; c++)
        y[c] = y[c] / sum;
}

void sb_mutant_decode_softmax_split_max_no_rescale(float *y, const sb_attn_decode *a)
{
    sb_attn_decode_pairs(y, a, pair);
}
