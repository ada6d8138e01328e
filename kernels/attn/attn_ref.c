/* Causal self-attention, the readable definitions (attn.h): serial loops,
 * every sum in index order from 0. */
#include <stdlib.h>

#include "attn.h"

/* The probabilities of query i of one pair, p[0..i], from q_i and the keys
 * k_j (rows ld apart). */
static void probabilities(float *p, const float *q, const float *k, ptrdiff_t ld, int i, int d,
                          float scale)
{
    for (int j = 0; j <= i; j++) {
        float dot = 0.0f;
        for (int c = 0; c < d; c++)
            dot += q[c] * k[j * ld + c];
        p[j] = dot * scale;
    }
    float m = p[0];
    for (int j = 1; j <= i; j++)
        if (p[j] > m)
            m = p[j];
    float sum = 0.0f;
    for (int j = 0; j <= i; j++) {
        p[j] = expf(p[j] - m);
        sum += p[j];
    }
    for (int j = 0; j <= i; j++)
        p[j] = p[j] / sum;
}

void sb_attention_fwd_ref(float *y,            /* [b][t][C] */
                          const float *qkv,    /* [b][t][3C] */
                          const sb_attn_shape *s)
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = 3 * width;
    const float scale = sb_attn_scale(d);
    float *p = malloc((size_t)t * sizeof *p);
    SB_ASSERT(p != NULL);
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->h; h++) {
            const float *base = qkv + (ptrdiff_t)b * t * ld + (ptrdiff_t)h * d;
            const float *k = base + width, *v = base + 2 * width;
            for (int i = 0; i < t; i++) {
                probabilities(p, base + i * ld, k, ld, i, d, scale);
                float *yi = y + ((ptrdiff_t)b * t + i) * width + (ptrdiff_t)h * d;
                for (int c = 0; c < d; c++) {
                    float acc = 0.0f;
                    for (int j = 0; j <= i; j++)
                        acc += p[j] * v[j * ld + c];
                    yi[c] = acc;
                }
            }
        }
    free(p);
}

void sb_attention_bwd_ref(float *dqkv,         /* [b][t][3C] */
                          const float *dy,     /* [b][t][C] */
                          const float *qkv,    /* [b][t][3C] */
                          const sb_attn_shape *s)
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = 3 * width;
    const float scale = sb_attn_scale(d);
    /* p and ds of one pair, [t][t] (row i, columns 0..i) */
    float *p = malloc((size_t)t * (size_t)t * sizeof *p);
    float *ds = malloc((size_t)t * (size_t)t * sizeof *ds);
    SB_ASSERT(p != NULL && ds != NULL);
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->h; h++) {
            const ptrdiff_t off = (ptrdiff_t)b * t * ld + (ptrdiff_t)h * d;
            const float *q = qkv + off, *k = q + width, *v = q + 2 * width;
            float *dq = dqkv + off, *dk = dq + width, *dv = dq + 2 * width;
            const float *g = dy + (ptrdiff_t)b * t * width + (ptrdiff_t)h * d;
            for (int i = 0; i < t; i++) {
                float *pi = p + (ptrdiff_t)i * t, *dsi = ds + (ptrdiff_t)i * t;
                probabilities(pi, q + i * ld, k, ld, i, d, scale);
                for (int j = 0; j <= i; j++) {
                    float dot = 0.0f;
                    for (int c = 0; c < d; c++)
                        dot += g[i * width + c] * v[j * ld + c];
                    dsi[j] = dot;       /* dp_ij for now */
                }
                float dsum = 0.0f;
                for (int j = 0; j <= i; j++)
                    dsum += pi[j] * dsi[j];
                for (int j = 0; j <= i; j++)
                    dsi[j] = (pi[j] * (dsi[j] - dsum)) * scale;
            }
            for (int i = 0; i < t; i++)
                for (int c = 0; c < d; c++) {
                    float acc = 0.0f;
                    for (int j = 0; j <= i; j++)
                        acc += ds[(ptrdiff_t)i * t + j] * k[j * ld + c];
                    dq[i * ld + c] = acc;
                }
            for (int j = 0; j < t; j++)
                for (int c = 0; c < d; c++) {
                    float acc_k = 0.0f, acc_v = 0.0f;
                    for (int i = j; i < t; i++) {
                        acc_k += ds[(ptrdiff_t)i * t + j] * q[i * ld + c];
                        acc_v += p[(ptrdiff_t)i * t + j] * g[i * width + c];
                    }
                    dk[j * ld + c] = acc_k;
                    dv[j * ld + c] = acc_v;
                }
        }
    free(p);
    free(ds);
}
