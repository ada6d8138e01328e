/* The parallel attention kernels of det and loose: the (sequence, head)
 * pairs shared among the threads, each pair computed by one thread with its
 * sums chunked as the family says (attn.h). Keys and values are transposed
 * per pair so that the dot products of one row with every key run side by
 * side; each dot product still runs in c order, as in ref. */
#include <stdlib.h>

#include "attn.h"

typedef struct pair_scratch {
    float *kt, *vt;     /* [d][t] */
    float *p, *ds;      /* [t][t], row i holds columns 0..i */
} pair_scratch;

static pair_scratch scratch_new(const sb_attn_shape *s)
{
    float *all = malloc((size_t)sb_attn_scratch_floats(s) * sizeof *all);
    SB_ASSERT(all != NULL);
    const size_t dt = (size_t)s->d * (size_t)s->t, tt = (size_t)s->t * (size_t)s->t;
    return (pair_scratch){all, all + dt, all + 2 * dt, all + 2 * dt + tt};
}

static void scratch_free(pair_scratch *w)
{
    free(w->kt);
}

/* Rows of the probabilities of one pair, p[i][0..i] for i < t (inlined
 * into bwd_pair's copies for each vector width). */
SB_ALWAYS_INLINE void pair_probabilities(float *p, const float *q, ptrdiff_t ld, const float *kt,
                                         int t, int d, float scale, int parts)
{
    for (int i = 0; i < t; i++) {
        float *pi = p + (ptrdiff_t)i * t;
        sb_attn_dots(pi, q + i * ld, kt, i + 1, d, t, scale);
        sb_attn_softmax(pi, i + 1, sb_attn_chunk(i + 1, parts));
    }
}

/* One pair's outputs: q the pair's first q row, y its first y row. Compiled
 * for the widest vectors the CPU has: the loops run side by side over keys
 * or over the d columns, each element's additions and products in the same
 * order at every width, and never contracted (kernels/meson.build), so every
 * copy gives the same bits. */
SB_ISA_VARIANTS(fwd_pair, (float *y, const float *q, const sb_attn_shape *s, pair_scratch *w, int parts),
                (y, q, s, w, parts))
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = 3 * width;
    const float scale = sb_attn_scale(d);
    const float *v = q + 2 * width;
    sb_attn_transpose(w->kt, q + width, ld, t, d, t);
    for (int i = 0; i < t; i++) {
        sb_attn_dots(w->p, q + i * ld, w->kt, i + 1, d, t, scale);
        sb_attn_softmax(w->p, i + 1, sb_attn_chunk(i + 1, parts));
        sb_attn_chunked_rows(y + i * width, w->p, 1, v, ld, i + 1, d,
                             sb_attn_chunk(i + 1, parts));
    }
}

/* One pair's gradients: q its first qkv row, dq its first dqkv row, g its
 * first dy row (cloned as fwd_pair). */
SB_ISA_VARIANTS(bwd_pair, (float *dq, const float *g, const float *q, const sb_attn_shape *s, pair_scratch *w, int parts),
                (dq, g, q, s, w, parts))
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = 3 * width;
    const float scale = sb_attn_scale(d);
    const float *k = q + width, *v = q + 2 * width;
    float *dk = dq + width, *dv = dq + 2 * width;
    sb_attn_transpose(w->kt, k, ld, t, d, t);
    sb_attn_transpose(w->vt, v, ld, t, d, t);
    pair_probabilities(w->p, q, ld, w->kt, t, d, scale, parts);
    for (int i = 0; i < t; i++) {
        const float *pi = w->p + (ptrdiff_t)i * t;
        float *dsi = w->ds + (ptrdiff_t)i * t;
        sb_attn_dots(dsi, g + i * width, w->vt, i + 1, d, t, 1.0f); /* dp_ij */
        float dsum; /* D_i: one "row" of width 1 */
        sb_attn_chunked_rows(&dsum, pi, 1, dsi, 1, i + 1, 1,
                             sb_attn_chunk(i + 1, parts));
        for (int j = 0; j <= i; j++)
            dsi[j] = (pi[j] * (dsi[j] - dsum)) * scale;
    }
    for (int i = 0; i < t; i++)
        sb_attn_chunked_rows(dq + i * ld, w->ds + (ptrdiff_t)i * t, 1, k, ld, i + 1, d,
                             sb_attn_chunk(i + 1, parts));
    for (int j = 0; j < t; j++) {
        const ptrdiff_t from = (ptrdiff_t)j * t + j; /* row j, column j */
        sb_attn_chunked_rows(dk + j * ld, w->ds + from, t, q + j * ld, ld, t - j, d,
                             sb_attn_chunk(t - j, parts));
        sb_attn_chunked_rows(dv + j * ld, w->p + from, t, g + j * width, width, t - j,
                             d, sb_attn_chunk(t - j, parts));
    }
}

/* The tensors of a call, and the pairs' function on them: pair p is
 * sequence p / h, head p % h. */
typedef struct pair_job {
    float *out;             /* y, or dqkv */
    const float *dy;        /* NULL for the forward */
    const float *qkv;
    const sb_attn_shape *s;
    int parts;
} pair_job;

static void run_pair(const pair_job *job, int pair, pair_scratch *w)
{
    const sb_attn_shape *s = job->s;
    const int b = pair / s->h, h = pair % s->h;
    const ptrdiff_t width = sb_attn_width(s);
    const ptrdiff_t off = (ptrdiff_t)b * s->t * 3 * width + (ptrdiff_t)h * s->d;
    const ptrdiff_t out_off = (ptrdiff_t)b * s->t * width + (ptrdiff_t)h * s->d;
    if (job->dy == NULL)
        fwd_pair(job->out + out_off, job->qkv + off, s, w, job->parts);
    else
        bwd_pair(job->out + off, job->dy + out_off, job->qkv + off, s, w, job->parts);
}

/* The pairs in parallel, each thread with scratch of its own. */
static void run_pairs(const pair_job *job)
{
    const int pairs = job->s->b * job->s->h;
#pragma omp parallel if (pairs > 1)
    {
        pair_scratch w = scratch_new(job->s);
#pragma omp for schedule(static)
        for (int pair = 0; pair < pairs; pair++)
            run_pair(job, pair, &w);
        scratch_free(&w);
    }
}

void sb_attn_fwd_pairs(float *y, const float *qkv, const sb_attn_shape *s, int parts)
{
    run_pairs(&(pair_job){y, NULL, qkv, s, parts});
}

void sb_attn_bwd_pairs(float *dqkv, const float *dy, const float *qkv, const sb_attn_shape *s,
                       int parts)
{
    run_pairs(&(pair_job){dqkv, dy, qkv, s, parts});
}
