/* The parallel attention kernels of det and loose: the (sequence, head)
 * pairs of the forward, the (sequence, key/value head) groups of the
 * backward shared among the threads, each computed by one thread with its
 * sums chunked as the family says (attn.h). Keys and values are transposed
 * per pair so that the dot products of one row with every key run side by
 * side; each dot product still runs in c order, as in ref. */
#include <stdlib.h>

#include "attn.h"

sb_attn_scratch sb_attn_scratch_new(const sb_attn_shape *s)
{
    float *all = malloc((size_t)sb_attn_scratch_floats(s) * sizeof *all);
    SB_ASSERT(all != NULL);
    const size_t dt = (size_t)s->d * (size_t)s->t, tt = (size_t)s->t * (size_t)s->t;
    float *grads = all + 2 * dt + 2 * tt; /* used only when sb_attn_group(s) > 1 */
    return (sb_attn_scratch){all, all + dt, all + 2 * dt, all + 2 * dt + tt, grads, grads + dt};
}

void sb_attn_scratch_free(sb_attn_scratch *w)
{
    free(w->kt);
}

/* Rows of the probabilities of one pair, p[i][0..keys) for i < t (inlined
 * into sb_attn_bwd_head's copies for each vector width). */
SB_ALWAYS_INLINE void pair_probabilities(float *p, const float *q, ptrdiff_t ld, const float *kt,
                                         const sb_attn_shape *s, float scale, int parts)
{
    const int t = s->t, d = s->d;
    for (int i = 0; i < t; i++) {
        float *pi = p + (ptrdiff_t)i * t;
        const int n = sb_attn_keys(s, i);
        sb_attn_dots(pi, q + i * ld, kt, n, d, t, scale);
        sb_attn_softmax(pi, n, sb_attn_chunk(n, parts));
    }
}

/* One pair's outputs: q, k, v the first rows of its query head and its
 * key/value head, y its first y row. Compiled for the widest vectors the CPU
 * has: the loops run side by side over keys or over the d columns, each
 * element's additions and products in the same order at every width, and
 * never contracted (kernels/meson.build), so every copy gives the same
 * bits. */
SB_ISA_VARIANTS(fwd_pair, (float *y, const float *q, const float *k, const float *v,
                           const sb_attn_shape *s, sb_attn_scratch *w, int parts),
                (y, q, k, v, s, w, parts))
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = sb_attn_ld(s);
    const float scale = sb_attn_scale(d);
    sb_attn_transpose(w->kt, k, ld, t, d, t);
    for (int i = 0; i < t; i++) {
        const int n = sb_attn_keys(s, i);
        sb_attn_dots(w->p, q + i * ld, w->kt, n, d, t, scale);
        sb_attn_softmax(w->p, n, sb_attn_chunk(n, parts));
        sb_attn_chunked_rows(y + i * width, w->p, 1, v, ld, n, d, sb_attn_chunk(n, parts));
    }
}

/* One query head's gradients (sb_attn_bwd_head; built per instruction set as
 * fwd_pair). */
SB_ISA_VARIANTS(bwd_head, (float *dq, float *dk, float *dv, ptrdiff_t ldk, const float *g,
                           const float *q, const float *k, const float *v,
                           const sb_attn_shape *s, sb_attn_scratch *w, int parts),
                (dq, dk, dv, ldk, g, q, k, v, s, w, parts))
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = sb_attn_ld(s);
    const float scale = sb_attn_scale(d);
    sb_attn_transpose(w->kt, k, ld, t, d, t);
    sb_attn_transpose(w->vt, v, ld, t, d, t);
    pair_probabilities(w->p, q, ld, w->kt, s, scale, parts);
    for (int i = 0; i < t; i++) {
        const int n = sb_attn_keys(s, i);
        const float *pi = w->p + (ptrdiff_t)i * t;
        float *dsi = w->ds + (ptrdiff_t)i * t;
        sb_attn_dots(dsi, g + i * width, w->vt, n, d, t, 1.0f); /* dp_ij */
        float dsum; /* D_i: one "row" of width 1 */
        sb_attn_chunked_rows(&dsum, pi, 1, dsi, 1, n, 1, sb_attn_chunk(n, parts));
        for (int j = 0; j < n; j++)
            dsi[j] = (pi[j] * (dsi[j] - dsum)) * scale;
    }
    for (int i = 0; i < t; i++) {
        const int n = sb_attn_keys(s, i);
        sb_attn_chunked_rows(dq + i * ld, w->ds + (ptrdiff_t)i * t, 1, k, ld, n, d,
                             sb_attn_chunk(n, parts));
    }
    for (int j = 0; j < t; j++) {
        const int i0 = sb_attn_first_query(s, j), n = t - i0;
        const ptrdiff_t from = (ptrdiff_t)i0 * t + j; /* row i0, column j */
        sb_attn_chunked_rows(dk + j * ldk, w->ds + from, t, q + i0 * ld, ld, n, d,
                             sb_attn_chunk(n, parts));
        sb_attn_chunked_rows(dv + j * ldk, w->p + from, t, g + i0 * width, width, n, d,
                             sb_attn_chunk(n, parts));
    }
}

void sb_attn_bwd_head(float *dq, float *dk, float *dv, ptrdiff_t ldk, const float *g,
                      const float *q, const float *k, const float *v, const sb_attn_shape *s,
                      sb_attn_scratch *w, int parts)
{
    bwd_head(dq, dk, dv, ldk, g, q, k, v, s, w, parts);
}

/* One (sequence, key/value head) group's gradients: its query heads in
 * order, the first writing dk and dv, each next one's added to them. */
static void bwd_group(float *dqkv, const float *dy, const float *qkv, const sb_attn_shape *s,
                      int b, int kvh, sb_attn_scratch *w, int parts)
{
    const int t = s->t, d = s->d, group = sb_attn_group(s);
    const ptrdiff_t ld = sb_attn_ld(s);
    const ptrdiff_t k_at = sb_attn_k_at(s, b, kvh), v_at = sb_attn_v_at(s, b, kvh);
    float *dk = dqkv + k_at, *dv = dqkv + v_at;
    for (int m = 0; m < group; m++) {
        const int j = kvh * group + m;
        const ptrdiff_t q_at = sb_attn_q_at(s, b, j);
        const float *g = dy + (ptrdiff_t)b * t * sb_attn_width(s) + (ptrdiff_t)j * d;
        if (m == 0) {
            sb_attn_bwd_head(dqkv + q_at, dk, dv, ld, g, qkv + q_at, qkv + k_at, qkv + v_at, s, w,
                     parts);
            continue;
        }
        sb_attn_bwd_head(dqkv + q_at, w->dk, w->dv, d, g, qkv + q_at, qkv + k_at, qkv + v_at, s, w,
                 parts);
        for (int r = 0; r < t; r++)
            for (int c = 0; c < d; c++) {
                dk[r * ld + c] += w->dk[r * d + c];
                dv[r * ld + c] += w->dv[r * d + c];
            }
    }
}

/* The tensors of a call. The forward's unit of work is pair p (sequence
 * p / h, query head p % h), the backward's group p (sequence p / kv,
 * key/value head p % kv). */
typedef struct pair_job {
    float *out;             /* y, or dqkv */
    const float *dy;        /* NULL for the forward */
    const float *qkv;
    const sb_attn_shape *s;
    int parts;
} pair_job;

static void run_unit(const pair_job *job, int unit, sb_attn_scratch *w)
{
    const sb_attn_shape *s = job->s;
    if (job->dy != NULL) {
        const int kv = sb_attn_kv(s);
        bwd_group(job->out, job->dy, job->qkv, s, unit / kv, unit % kv, w, job->parts);
        return;
    }
    const int b = unit / s->h, j = unit % s->h, kvh = j / sb_attn_group(s);
    const ptrdiff_t out_at = (ptrdiff_t)b * s->t * sb_attn_width(s) + (ptrdiff_t)j * s->d;
    fwd_pair(job->out + out_at, job->qkv + sb_attn_q_at(s, b, j),
             job->qkv + sb_attn_k_at(s, b, kvh), job->qkv + sb_attn_v_at(s, b, kvh), s, w,
             job->parts);
}

/* The units in parallel, each thread with scratch of its own. */
static void run_units(const pair_job *job)
{
    const int units = job->s->b * (job->dy == NULL ? job->s->h : sb_attn_kv(job->s));
#pragma omp parallel if (units > 1)
    {
        sb_attn_scratch w = sb_attn_scratch_new(job->s);
#pragma omp for schedule(static)
        for (int unit = 0; unit < units; unit++)
            run_unit(job, unit, &w);
        sb_attn_scratch_free(&w);
    }
}

void sb_attn_fwd_pairs(float *y, const float *qkv, const sb_attn_shape *s, int parts)
{
    run_units(&(pair_job){y, NULL, qkv, s, parts});
}

void sb_attn_bwd_pairs(float *dqkv, const float *dy, const float *qkv, const sb_attn_shape *s,
                       int parts)
{
    run_units(&(pair_job){dqkv, dy, qkv, s, parts});
}
