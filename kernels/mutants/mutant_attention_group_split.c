/* FAULT: grouped-query attention's key/value gradients split over the
 * threads: a key/value head's query heads are cut into one contiguous run
 * per thread (as a parallel loop over query heads with a partial dk and dv
 * per thread would), each run's heads added in head order into a partial,
 * and the partials added in thread order. Each head's own sums are det's;
 * only the bracketing of the heads follows the thread count: on one thread
 * (and at as many threads as the group has heads, or more) it is det's
 * head order, ((h0 + h1) + h2) + h3; at 2 threads (h0 + h1) + (h2 + h3). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "mutants.h"

/* One (sequence, key/value head) group: every head's own dk and dv into
 * heads[m] ([2][t][d] each), then the runs. */
static void group_split(float *dqkv, const float *dy, const float *qkv, const sb_attn_shape *s,
                        int b, int kvh, sb_attn_scratch *w, float *heads, float *part,
                        int threads)
{
    const int t = s->t, d = s->d, group = sb_attn_group(s);
    const ptrdiff_t ld = sb_attn_ld(s), td = (ptrdiff_t)t * d;
    const ptrdiff_t k_at = sb_attn_k_at(s, b, kvh), v_at = sb_attn_v_at(s, b, kvh);
    for (int m = 0; m < group; m++) {
        const int j = kvh * group + m;
        const ptrdiff_t q_at = sb_attn_q_at(s, b, j);
        float *own = heads + (ptrdiff_t)m * 2 * td;
        sb_attn_bwd_head(dqkv + q_at, own, own + td, d,
                         dy + (ptrdiff_t)b * t * sb_attn_width(s) + (ptrdiff_t)j * d, qkv + q_at,
                         qkv + k_at, qkv + v_at, s, w, 0);
    }
    /* run r: heads [r * group / threads, (r + 1) * group / threads) */
    bool first_run = true;
    for (int r = 0; r < threads; r++) {
        const int m0 = r * group / threads, m1 = (r + 1) * group / threads;
        if (m0 == m1)
            continue;
        memcpy(part, heads + (ptrdiff_t)m0 * 2 * td, 2 * (size_t)td * sizeof *part);
        for (int m = m0 + 1; m < m1; m++)
            for (ptrdiff_t e = 0; e < 2 * td; e++)
                part[e] += heads[(ptrdiff_t)m * 2 * td + e];
        for (int row = 0; row < t; row++)
            for (int c = 0; c < d; c++) {
                float *dk = dqkv + k_at + row * ld + c, *dv = dqkv + v_at + row * ld + c;
                const float pk = part[row * d + c], pv = part[td + row * d + c];
                *dk = first_run ? pk : *dk + pk;
                *dv = first_run ? pv : *dv + pv;
            }
        first_run = false;
    }
}

void sb_mutant_attention_group_split(float *dqkv,          /* [b][t][(h + 2 kv) d] */
                                     const float *dy,      /* [b][t][C] */
                                     const float *qkv,     /* [b][t][(h + 2 kv) d] */
                                     const sb_attn_shape *s)
{
    const int kv = sb_attn_kv(s), units = s->b * kv, threads = omp_get_max_threads();
    const size_t td = (size_t)s->t * (size_t)s->d;
#pragma omp parallel num_threads(threads) if (units > 1)
    {
        sb_attn_scratch w = sb_attn_scratch_new(s);
        /* every head's dk and dv [group][2][t][d], one run's [2][t][d] */
        float *heads = malloc(((size_t)sb_attn_group(s) + 1) * 2 * td * sizeof *heads);
        SB_ASSERT(heads != NULL);
        float *part = heads + (size_t)sb_attn_group(s) * 2 * td;
#pragma omp for schedule(static)
        for (int unit = 0; unit < units; unit++)
            group_split(dqkv, dy, qkv, s, unit / kv, unit % kv, &w, heads, part, threads);
        free(heads);
        sb_attn_scratch_free(&w);
    }
}
