/* The AdamW update of many parameters in one parallel region (adamw_parts.h). */
#include <stdlib.h>

#include "adamw_parts.h"

size_t sb_adamw_part_leaves(size_t n)
{
    const size_t leaf = SB_HASH_LEAF_BYTES / sizeof(float);
    return (n + leaf - 1) / leaf;
}

/* first[i]: the first item of part i (chunks or leaves), first[n]: their count */
static int64_t *items_first(const sb_adamw_part *parts, int n, size_t per_item)
{
    int64_t *first = malloc(((size_t)n + 1) * sizeof *first);
    SB_ASSERT(first != NULL);
    first[0] = 0;
    for (int i = 0; i < n; i++)
        first[i + 1] = first[i] + (int64_t)((parts[i].count + per_item - 1) / per_item);
    return first;
}

/* The part that item x belongs to; the parts' items are in part order. */
static int part_of(const int64_t *first, int n, int64_t x)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (first[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void sb_adamw_update_parts(float *w, float *m, float *v, const float *g,
                           const sb_optim_params *o, int64_t t, const sb_adamw_part *parts,
                           int n_parts, sb_leaf_hash_fn *hash)
{
    if (n_parts <= 0)
        return;
    sb_optim_params no_decay = *o;
    no_decay.weight_decay = 0.0f;
    const sb_adamw_scalars k[2] = {sb_adamw_scalars_of(&no_decay, t), sb_adamw_scalars_of(o, t)};
    const size_t leaf = SB_HASH_LEAF_BYTES / sizeof(float);
    int64_t *chunk0 = items_first(parts, n_parts, SB_ADAMW_CHUNK);
    int64_t *leaf0 = items_first(parts, n_parts, leaf);
    float *const tensors[3] = {w, m, v};
    const int64_t chunks = chunk0[n_parts], leaves = 3 * leaf0[n_parts];
    size_t total = 0;
    for (int i = 0; i < n_parts; i++)
        total += parts[i].count;

#pragma omp parallel if (total >= SB_OPTIM_PARALLEL_MIN)
    {
#pragma omp for schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            const int i = part_of(chunk0, n_parts, c);
            const sb_adamw_part *q = &parts[i];
            const size_t lo = q->offset + (size_t)(c - chunk0[i]) * SB_ADAMW_CHUNK;
            const size_t end = q->offset + q->count;
            const size_t hi = end - lo < SB_ADAMW_CHUNK ? end : lo + SB_ADAMW_CHUNK;
            const sb_optim_params *oi = q->decay ? o : &no_decay;
            sb_adamw_range(w, m, v, g, &k[q->decay], oi, lo, hi);
        }
        /* leaf x: tensor x % 3 of leaf x / 3 in the parts' leaf order */
        if (hash) {
#pragma omp for schedule(dynamic, 1)
            for (int64_t x = 0; x < leaves; x++) {
                const int64_t l = x / 3;
                const int j = (int)(x % 3), i = part_of(leaf0, n_parts, l);
                const sb_adamw_part *q = &parts[i];
                if (!q->leaves[j])
                    continue;
                const size_t b = (size_t)(l - leaf0[i]), lo = b * leaf;
                const size_t len = q->count - lo < leaf ? q->count - lo : leaf;
                hash(&q->leaves[j][b], tensors[j] + q->offset + lo, len * sizeof(float));
            }
        }
    }
    free(chunk0);
    free(leaf0);
}
