/* The decode step's attention, det and loose (attn_decode.h). */
#include <omp.h>
#include <stdlib.h>

#include "attn.h"
#include "attn_decode.h"

static int max_len(const sb_attn_decode *a)
{
    int m = 1;
    for (int r = 0; r < a->n; r++)
        if (a->len[r] > m)
            m = a->len[r];
    return m;
}

/* One (request, head) pair, det: query len-1 of attn_pairs.c's fwd_pair. */
SB_ISA_VARIANTS(det_pair, (float *y, const float *q, const float *kv, int len, int d, int width,
                           float *kt, float *p),
                (y, q, kv, len, d, width, kt, p))
{
    const ptrdiff_t ld = 2 * (ptrdiff_t)width;
    sb_attn_transpose(kt, kv, ld, len, d, len);
    sb_attn_dots(p, q, kt, len, d, len, sb_attn_scale(d));
    sb_attn_softmax(p, len, SB_ATTN_KEY_BLOCK);
    sb_attn_chunked_rows(y, p, 1, kv + width, ld, len, d, SB_ATTN_KEY_BLOCK);
}

void sb_attn_decode_pairs(float *y, const sb_attn_decode *a, sb_attn_decode_pair_fn *pair)
{
    const int pairs = a->n * a->h, d = a->d, width = a->h * a->d, m = max_len(a);
#pragma omp parallel if (pairs > 1)
    {
        float *kt = malloc(((size_t)d + 1) * (size_t)m * sizeof *kt);
        SB_ASSERT(kt != NULL);
#pragma omp for schedule(static)
        for (int p = 0; p < pairs; p++) {
            const int r = p / a->h, h = p % a->h;
            pair(y + (ptrdiff_t)r * width + h * d, a->qkv + (ptrdiff_t)r * 3 * width + h * d,
                 a->kv[r] + h * d, a->len[r], d, width, kt, kt + (size_t)d * (size_t)m);
        }
        free(kt);
    }
}

void sb_attn_decode_det(float *y, const sb_attn_decode *a)
{
    sb_attn_decode_pairs(y, a, det_pair);
}

int sb_attn_decode_splits(int len, int n, int h, int threads)
{
    const int items = n * h;
    int want = (4 * threads + items - 1) / items;
    const int most = (len + SB_ATTN_DECODE_MIN_SPLIT - 1) / SB_ATTN_DECODE_MIN_SPLIT;
    if (want > most)
        want = most;
    return want > 0 ? want : 1;
}

/* One split of one pair, loose: keys [j0, j1) of the pair; its max into
 * *mx, its sum into *l, its unnormalised output into o [d]. */
SB_ISA_VARIANTS(loose_split, (float *o, float *mx, float *l, const float *q, const float *kv,
                              int j0, int j1, int d, int width, float *kt, float *p),
                (o, mx, l, q, kv, j0, j1, d, width, kt, p))
{
    const ptrdiff_t ld = 2 * (ptrdiff_t)width;
    const int n = j1 - j0;
    const float *k = kv + (ptrdiff_t)j0 * ld;
    sb_attn_transpose(kt, k, ld, n, d, n);
    sb_attn_dots(p, q, kt, n, d, n, sb_attn_scale(d));
    float m = p[0];
    for (int j = 1; j < n; j++)
        if (p[j] > m)
            m = p[j];
    float sum = 0.0f;
    for (int j = 0; j < n; j++) {
        p[j] = expf(p[j] - m);
        sum += p[j];
    }
    sb_attn_chunked_rows(o, p, 1, k + width, ld, n, d, n);
    *mx = m;
    *l = sum;
}

void sb_attn_decode_loose(float *y, const sb_attn_decode *a)
{
    const int d = a->d, width = a->h * a->d, m = max_len(a), threads = omp_get_max_threads();
    /* item k of request r, head h, split s: first[r] + (h * splits[r] + s) */
    int *splits = malloc((size_t)a->n * 2 * sizeof *splits);
    SB_ASSERT(splits != NULL);
    int *first = splits + a->n, items = 0;
    for (int r = 0; r < a->n; r++) {
        /* as many splits as the cut into equal lengths leaves non-empty */
        const int want = sb_attn_decode_splits(a->len[r], a->n, a->h, threads);
        const int per = (a->len[r] + want - 1) / want;
        splits[r] = (a->len[r] + per - 1) / per;
        first[r] = items;
        items += a->h * splits[r];
    }
    float *part = malloc((size_t)items * ((size_t)d + 2) * sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel
    {
        float *kt = malloc(((size_t)d + 1) * (size_t)m * sizeof *kt);
        SB_ASSERT(kt != NULL);
#pragma omp for schedule(static)
        for (int it = 0; it < items; it++) {
            int r = 0;
            while (r + 1 < a->n && first[r + 1] <= it)
                r++;
            const int k = it - first[r], h = k / splits[r], s = k % splits[r];
            const int len = a->len[r], per = (len + splits[r] - 1) / splits[r];
            const int j0 = s * per, j1 = j0 + per < len ? j0 + per : len;
            float *pt = part + (size_t)it * ((size_t)d + 2);
            loose_split(pt, pt + d, pt + d + 1, a->qkv + (ptrdiff_t)r * 3 * width + h * d,
                        a->kv[r] + h * d, j0, j1, d, width, kt, kt + (size_t)d * (size_t)m);
        }
        free(kt);
#pragma omp for schedule(static)
        for (int pair = 0; pair < a->n * a->h; pair++) {
            const int r = pair / a->h, h = pair % a->h, ns = splits[r];
            const float *p0 = part + (size_t)(first[r] + h * ns) * ((size_t)d + 2);
            float mx = -INFINITY;
            for (int s = 0; s < ns; s++)
                if (p0[(size_t)s * ((size_t)d + 2) + (size_t)d] > mx)
                    mx = p0[(size_t)s * ((size_t)d + 2) + (size_t)d];
            float *yr = y + (ptrdiff_t)r * width + h * d;
            float l = 0.0f;
            for (int c = 0; c < d; c++)
                yr[c] = 0.0f;
            for (int s = 0; s < ns; s++) {
                const float *ps = p0 + (size_t)s * ((size_t)d + 2);
                const float w = expf(ps[d] - mx);
                l += ps[d + 1] * w;
                for (int c = 0; c < d; c++)
                    yr[c] += ps[c] * w;
            }
            for (int c = 0; c < d; c++)
                yr[c] = yr[c] / l;
        }
    }
    free(part);
    free(splits);
}
