/* Self-attention with grouped key/value heads, the readable definitions
 * (attn.h): serial loops, every sum in index order from 0. */
#include <stdlib.h>

#include "attn.h"

/* The probabilities of query i of one pair, p[0..n), from q_i and the keys
 * k_j (rows ld apart). */
static void probabilities(float *p, const float *q, const float *k, ptrdiff_t ld, int n, int d,
                          float scale)
{
    for (int j = 0; j < n; j++) {
        float dot = 0.0f;
        for (int c = 0; c < d; c++)
            dot += q[c] * k[j * ld + c];
        p[j] = dot * scale;
    }
    float m = p[0];
    for (int j = 1; j < n; j++)
        if (p[j] > m)
            m = p[j];
    float sum = 0.0f;
    for (int j = 0; j < n; j++) {
        p[j] = expf(p[j] - m);
        sum += p[j];
    }
    for (int j = 0; j < n; j++)
        p[j] = p[j] / sum;
}

void sb_attention_fwd_ref(float *y,            /* [b][t][C] */
                          const float *qkv,    /* [b][t][(h + 2 kv) d] */
                          const sb_attn_shape *s)
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = sb_attn_ld(s);
    const float scale = sb_attn_scale(d);
    float *p = malloc((size_t)t * sizeof *p);
    SB_ASSERT(p != NULL);
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->h; h++) {
            const int g = h / sb_attn_group(s);
            const float *q = qkv + sb_attn_q_at(s, b, h);
            const float *k = qkv + sb_attn_k_at(s, b, g), *v = qkv + sb_attn_v_at(s, b, g);
            for (int i = 0; i < t; i++) {
                const int n = sb_attn_keys(s, i);
                probabilities(p, q + i * ld, k, ld, n, d, scale);
                float *yi = y + ((ptrdiff_t)b * t + i) * width + (ptrdiff_t)h * d;
                for (int c = 0; c < d; c++) {
                    float acc = 0.0f;
                    for (int j = 0; j < n; j++)
                        acc += p[j] * v[j * ld + c];
                    yi[c] = acc;
                }
            }
        }
    free(p);
}

/* One query head's gradients (q, k, v, dq, dk, dv its first rows of qkv
 * and dqkv, g its first dy row): dq written, dk and dv written by the first
 * head of its group (first) and added to by the others. */
static void head_backward(float *dq, float *dk, float *dv, const float *g, const float *q,
                          const float *k, const float *v, const sb_attn_shape *s, float *p,
                          float *ds, bool first)
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = sb_attn_ld(s);
    const float scale = sb_attn_scale(d);
    for (int i = 0; i < t; i++) {
        const int n = sb_attn_keys(s, i);
        float *pi = p + (ptrdiff_t)i * t, *dsi = ds + (ptrdiff_t)i * t;
        probabilities(pi, q + i * ld, k, ld, n, d, scale);
        for (int j = 0; j < n; j++) {
            float dot = 0.0f;
            for (int c = 0; c < d; c++)
                dot += g[i * width + c] * v[j * ld + c];
            dsi[j] = dot;       /* dp_ij for now */
        }
        float dsum = 0.0f;
        for (int j = 0; j < n; j++)
            dsum += pi[j] * dsi[j];
        for (int j = 0; j < n; j++)
            dsi[j] = (pi[j] * (dsi[j] - dsum)) * scale;
    }
    for (int i = 0; i < t; i++)
        for (int c = 0; c < d; c++) {
            float acc = 0.0f;
            for (int j = 0; j < sb_attn_keys(s, i); j++)
                acc += ds[(ptrdiff_t)i * t + j] * k[j * ld + c];
            dq[i * ld + c] = acc;
        }
    for (int j = 0; j < t; j++)
        for (int c = 0; c < d; c++) {
            float acc_k = 0.0f, acc_v = 0.0f;
            for (int i = sb_attn_first_query(s, j); i < t; i++) {
                acc_k += ds[(ptrdiff_t)i * t + j] * q[i * ld + c];
                acc_v += p[(ptrdiff_t)i * t + j] * g[i * width + c];
            }
            dk[j * ld + c] = first ? acc_k : dk[j * ld + c] + acc_k;
            dv[j * ld + c] = first ? acc_v : dv[j * ld + c] + acc_v;
        }
}

void sb_attention_bwd_ref(float *dqkv,         /* [b][t][(h + 2 kv) d] */
                          const float *dy,     /* [b][t][C] */
                          const float *qkv,    /* [b][t][(h + 2 kv) d] */
                          const sb_attn_shape *s)
{
    const int t = s->t;
    /* p and ds of one head, [t][t] (row i, the columns of its keys) */
    float *p = malloc((size_t)t * (size_t)t * sizeof *p);
    float *ds = malloc((size_t)t * (size_t)t * sizeof *ds);
    SB_ASSERT(p != NULL && ds != NULL);
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->h; h++) {
            const int g = h / sb_attn_group(s);
            const ptrdiff_t q_at = sb_attn_q_at(s, b, h);
            const ptrdiff_t k_at = sb_attn_k_at(s, b, g), v_at = sb_attn_v_at(s, b, g);
            head_backward(dqkv + q_at, dqkv + k_at, dqkv + v_at,
                          dy + (ptrdiff_t)b * t * sb_attn_width(s) + (ptrdiff_t)h * s->d,
                          qkv + q_at, qkv + k_at, qkv + v_at, s, p, ds,
                          h % sb_attn_group(s) == 0);
        }
    free(p);
    free(ds);
}
