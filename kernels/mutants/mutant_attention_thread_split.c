/* FAULT: split-K attention (as flash-decoding splits the keys of a query
 * over workers): the keys are cut into det's blocks of SB_ATTN_KEY_BLOCK,
 * the blocks dealt round-robin to one partial sum per thread, and the
 * partials added in thread order, for the softmax sum and the weighted sum
 * of the values alike. On one thread the one partial runs det's block order
 * exactly; from two threads on, a query with more than two blocks (more than
 * 32 keys) sums in an order that follows the thread count. */
#include <omp.h>
#include <stdlib.h>

#include "attn/attn.h"
#include "mutants.h"

/* y[c] = sum_e w[e] rows[e * ld + c] for e < n, det's blocks dealt to
 * `parts` partials (part: scratch of parts * d floats, acc of d). */
static void split_rows(float *y, float *part, float *acc, const float *w, const float *rows,
                       ptrdiff_t ld, int n, int d, int parts)
{
    for (int g = 0; g < parts * d; g++)
        part[g] = 0.0f;
    for (int e0 = 0, blk = 0; e0 < n; e0 += SB_ATTN_KEY_BLOCK, blk++) {
        const int len = n - e0 < SB_ATTN_KEY_BLOCK ? n - e0 : SB_ATTN_KEY_BLOCK;
        sb_attn_chunked_rows(acc, w + e0, 1, rows + e0 * ld, ld, len, d, len);
        float *mine = part + (ptrdiff_t)(blk % parts) * d;
        for (int c = 0; c < d; c++)
            mine[c] += acc[c];
    }
    for (int c = 0; c < d; c++) {
        float total = 0.0f;
        for (int g = 0; g < parts; g++)
            total += part[(ptrdiff_t)g * d + c];
        y[c] = total;
    }
}

void sb_mutant_attention_thread_split(float *y,            /* [b][t][C] */
                                      const float *qkv,    /* [b][t][3C] */
                                      const sb_attn_shape *s)
{
    /* the fault is in the causal multi-head sums: grouped or unmasked
     * shapes are not this mutant's */
    SB_ASSERT(sb_attn_group(s) == 1 && !s->noncausal);
    const int t = s->t, d = s->d, pairs = s->b * s->h, threads = omp_get_max_threads();
    const ptrdiff_t width = sb_attn_width(s), ld = 3 * width;
    const float scale = sb_attn_scale(d);
#pragma omp parallel num_threads(threads) if (pairs > 1)
    {
        /* kt [d][t], p [t], one partial per thread [threads][d], acc [d] */
        const size_t need = (size_t)d * (size_t)t + (size_t)t +
                            (size_t)threads * (size_t)d + (size_t)d;
        float *kt = malloc(need * sizeof *kt);
        SB_ASSERT(kt != NULL);
        float *p = kt + (size_t)d * t, *part = p + t, *acc = part + (size_t)threads * d;
#pragma omp for schedule(static)
        for (int pair = 0; pair < pairs; pair++) {
            const int b = pair / s->h, h = pair % s->h;
            const float *q = qkv + (ptrdiff_t)b * t * ld + (ptrdiff_t)h * d;
            sb_attn_transpose(kt, q + width, ld, t, d, t);
            for (int i = 0; i < t; i++) {
                const int n = i + 1;
                sb_attn_dots(p, q + i * ld, kt, n, d, t, scale);
                sb_attn_exp_shifted(p, n);
                float ones = 1.0f, sum;
                split_rows(&sum, part, acc, p, &ones, 0, n, 1, threads);
                for (int j = 0; j < n; j++)
                    p[j] = p[j] / sum;
                split_rows(y + ((ptrdiff_t)b * t + i) * width + (ptrdiff_t)h * d, part, acc, p,
                           q + 2 * width, ld, n, d, threads);
            }
        }
        free(kt);
    }
}
