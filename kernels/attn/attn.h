/* The attention area's shared pieces, for its own files, its tests and the
 * mutants of its ops (kernels/mutants/): multi-head self-attention over a
 * fused QKV tensor with grouped key/value heads, causal or not.
 *
 * A row of qkv holds the h query heads, then the kv key heads, then the kv
 * value heads, each d wide ([h d | kv d | kv d]; kv = h is multi-head
 * attention, [q | k | v] of 3C). Query head j reads key/value head
 * j / (h / kv): the h / kv query heads of a group share it.
 *
 * For sequence b, query head j, query i and its keys (j' <= i when causal,
 * every j' < t when not; q_i the d columns of head j in row (b, i), k_j', v_j'
 * those of its key/value head in row (b, j')):
 *   s_ij = (sum_c q_ic k_jc) * scale,   scale = fl(1 / sqrt(d)) (in double,
 *          as PyTorch's 1.0 / math.sqrt(d), rounded once to float)
 *   m_i  = max_j s_ij;  e_ij = expf(s_ij - m_i);  S_i = sum_j e_ij
 *   p_ij = e_ij / S_i
 *   y_i  = sum_j p_ij v_j
 * and the gradients, from dy:
 *   dp_ij = sum_c dy_ic v_jc;   D_i = sum_j p_ij dp_ij
 *   ds_ij = (p_ij * (dp_ij - D_i)) * scale
 *   dq_i = sum_j ds_ij k_j;  dk_j = sum_i ds_ij q_i;  dv_j = sum_i p_ij dy_i
 * over the keys a query sees and the queries that see a key. A key/value
 * head's dk and dv add its query heads' sums in head order: the first
 * head's sum, plus the second's, and so on (one head: its sum).
 * Every dot product over c runs in c order from 0 in every family. The sums
 * over keys or queries (S_i, y_i, D_i, dq, dk, dv) are what the families
 * order differently: each is cut into chunks of `chunk` consecutive terms
 * from the start of its range, each chunk summed from 0 in order, the chunk
 * sums added in chunk order. ref is one chunk (the plain sum), det chunks of
 * SB_ATTN_KEY_BLOCK (fixed: the thread count never enters), loose chunks of
 * ceil(range / threads), as a split of the keys over the threads would.
 * The forward computes each (sequence, query head) pair on one thread, the
 * backward each (sequence, key/value head) group with its query heads, so
 * every output element has one writer. */
#ifndef SB_ATTN_H
#define SB_ATTN_H

#include <math.h>
#include <stddef.h>

#include "gemm/sb_data_move.h"   /* sb_v8f, sb_transpose8, SB_ALWAYS_INLINE */
#include "op_kernels.h"

/* det's chunk of the key (and query) sums: part of the det definition */
#define SB_ATTN_KEY_BLOCK 16

static inline float sb_attn_scale(int d)
{
    return (float)(1.0 / sqrt((double)d));
}

/* C = h d: the width of y and of the query heads */
static inline int64_t sb_attn_width(const sb_attn_shape *s)
{
    return (int64_t)s->h * s->d;
}

/* the key/value heads */
static inline int sb_attn_kv(const sb_attn_shape *s)
{
    return s->kv_heads == 0 ? s->h : s->kv_heads;
}

/* the query heads per key/value head */
static inline int sb_attn_group(const sb_attn_shape *s)
{
    return s->h / sb_attn_kv(s);
}

/* the width of a qkv row, (h + 2 kv) d */
static inline int64_t sb_attn_ld(const sb_attn_shape *s)
{
    return ((int64_t)s->h + 2 * (int64_t)sb_attn_kv(s)) * s->d;
}

/* The keys query i sees, [0, n): i + 1 when causal, t when not. */
static inline int sb_attn_keys(const sb_attn_shape *s, int i)
{
    return s->noncausal ? s->t : i + 1;
}

/* The first query that sees key j: j when causal, 0 when not. */
static inline int sb_attn_first_query(const sb_attn_shape *s, int j)
{
    return s->noncausal ? 0 : j;
}

/* Offsets in a qkv tensor of the first row of sequence b: query head j,
 * key head g, value head g. */
static inline ptrdiff_t sb_attn_q_at(const sb_attn_shape *s, int b, int j)
{
    return (ptrdiff_t)b * s->t * sb_attn_ld(s) + (ptrdiff_t)j * s->d;
}

static inline ptrdiff_t sb_attn_k_at(const sb_attn_shape *s, int b, int g)
{
    return sb_attn_q_at(s, b, s->h + g);
}

static inline ptrdiff_t sb_attn_v_at(const sb_attn_shape *s, int b, int g)
{
    return sb_attn_q_at(s, b, s->h + sb_attn_kv(s) + g);
}

/* Scratch floats one thread needs for the pairs it computes: the transposed
 * keys and values [d][t] and two [t][t] matrices (probabilities and their
 * gradients), and with grouped heads a head's dk and dv [t][d] before they
 * join the group's. sb_op_call_describe refuses shapes where this exceeds
 * its element limit. */
static inline int64_t sb_attn_scratch_floats(const sb_attn_shape *s)
{
    const int64_t head_grads = sb_attn_group(s) > 1 ? 2 * (int64_t)s->t * s->d : 0;
    return 2 * (int64_t)s->d * s->t + 2 * (int64_t)s->t * s->t + head_grads;
}

/* The sum of n terms x[e * stride] in chunks of `chunk` (see the top). */
static inline float sb_attn_chunked_sum(const float *x, ptrdiff_t stride, int n, int chunk)
{
    float total = 0.0f;
    for (int e0 = 0; e0 < n; e0 += chunk) {
        const int e1 = n - e0 < chunk ? n : e0 + chunk;
        float part = 0.0f;
        for (int e = e0; e < e1; e++)
            part += x[e * stride];
        total += part;
    }
    return total;
}

/* The sums below keep blocks of 16 or 32 columns in vectors for the whole
 * reduction (GNU vector extensions, loaded and stored at any float's
 * address; each lane's additions and products are the float operations of
 * the scalar loop, never contracted): a loop of variable width would load
 * and store every sum at every term. The vectors hold 8 floats, AVX2's
 * width: GCC 12 takes 16-float ones apart through the stack in its AVX2 copy
 * (attention 7 times slower there than the loop of variable width). The
 * columns past the last whole block (fewer than 16) take the scalar loop.
 * Blocking decides only which columns run together, never a column's
 * arithmetic. They are always inlined, so that each copy of attn_pairs.c's
 * pair functions (SB_ISA_VARIANTS) has its own vector width. */

/* y[c] = sum_e w[e * ws] * rows[e * ld + c] in chunks of `chunk` for c < 8
 * vecs (vecs = 2 or 4) */
SB_ALWAYS_INLINE void sb_attn_rows_vectors(float *restrict y, const float *w, ptrdiff_t ws,
                                           const float *rows, ptrdiff_t ld, int n, int vecs,
                                           int chunk)
{
    sb_v8f total0 = {0}, total1 = {0}, total2 = {0}, total3 = {0};
    for (int e0 = 0; e0 < n; e0 += chunk) {
        const int e1 = n - e0 < chunk ? n : e0 + chunk;
        sb_v8f acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};
        for (int e = e0; e < e1; e++) {
            const float we = w[e * ws];
            const float *r = rows + e * ld;
            acc0 += we * *(const sb_v8f_at *)(r);
            acc1 += we * *(const sb_v8f_at *)(r + 8);
            if (vecs == 4) {
                acc2 += we * *(const sb_v8f_at *)(r + 16);
                acc3 += we * *(const sb_v8f_at *)(r + 24);
            }
        }
        total0 += acc0;
        total1 += acc1;
        if (vecs == 4) {
            total2 += acc2;
            total3 += acc3;
        }
    }
    *(sb_v8f_at *)(y) = total0;
    *(sb_v8f_at *)(y + 8) = total1;
    if (vecs == 4) {
        *(sb_v8f_at *)(y + 16) = total2;
        *(sb_v8f_at *)(y + 24) = total3;
    }
}

/* the same for c < width, width < 16, one column at a time */
SB_ALWAYS_INLINE void sb_attn_rows_scalar(float *restrict y, const float *w, ptrdiff_t ws,
                                          const float *rows, ptrdiff_t ld, int n, int width,
                                          int chunk)
{
    for (int c = 0; c < width; c++) {
        float total = 0.0f;
        for (int e0 = 0; e0 < n; e0 += chunk) {
            const int e1 = n - e0 < chunk ? n : e0 + chunk;
            float acc = 0.0f;
            for (int e = e0; e < e1; e++)
                acc += w[e * ws] * rows[e * ld + c];
            total += acc;
        }
        y[c] = total;
    }
}

/* y[c] = sum_e w[e * ws] * rows[e * ld + c] over n terms in chunks of
 * `chunk`, for c < d. */
SB_ALWAYS_INLINE void sb_attn_chunked_rows(float *restrict y, const float *w, ptrdiff_t ws,
                                           const float *rows, ptrdiff_t ld, int n, int d,
                                           int chunk)
{
    int c0 = 0;
    for (; c0 + 32 <= d; c0 += 32)
        sb_attn_rows_vectors(y + c0, w, ws, rows + c0, ld, n, 4, chunk);
    if (c0 + 16 <= d) {
        sb_attn_rows_vectors(y + c0, w, ws, rows + c0, ld, n, 2, chunk);
        c0 += 16;
    }
    sb_attn_rows_scalar(y + c0, w, ws, rows + c0, ld, n, d - c0, chunk);
}

/* mt[c * t + j] = m[j * ld + c] for j < n, c < d: d columns of n rows,
 * transposed so that the dot products of one row with all of them run
 * side by side; 8 x 8 blocks through registers (sb_transpose8), the edges
 * one element at a time. */
SB_ALWAYS_INLINE void sb_attn_transpose(float *restrict mt, const float *m, ptrdiff_t ld, int n,
                                        int d, int t)
{
    int j0 = 0;
    for (; j0 + 8 <= n; j0 += 8) {
        int c0 = 0;
        for (; c0 + 8 <= d; c0 += 8)
            sb_transpose8(mt + (ptrdiff_t)c0 * t + j0, t, m + j0 * ld + c0, ld);
        for (int c = c0; c < d; c++)
            for (int j = j0; j < j0 + 8; j++)
                mt[(ptrdiff_t)c * t + j] = m[j * ld + c];
    }
    for (int j = j0; j < n; j++)
        for (int c = 0; c < d; c++)
            mt[(ptrdiff_t)c * t + j] = m[j * ld + c];
}

/* out[j] = (sum_c a[c] * bt[c * t + j]) * scale for j < 8 vecs (vecs = 2 or
 * 4), each in c order */
SB_ALWAYS_INLINE void sb_attn_dots_vectors(float *restrict out, const float *restrict a,
                                           const float *restrict bt, int vecs, int d, int t,
                                           float scale)
{
    sb_v8f acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};
    for (int c = 0; c < d; c++) {
        const float *b = bt + (ptrdiff_t)c * t;
        acc0 += a[c] * *(const sb_v8f_at *)(b);
        acc1 += a[c] * *(const sb_v8f_at *)(b + 8);
        if (vecs == 4) {
            acc2 += a[c] * *(const sb_v8f_at *)(b + 16);
            acc3 += a[c] * *(const sb_v8f_at *)(b + 24);
        }
    }
    *(sb_v8f_at *)(out) = acc0 * scale;
    *(sb_v8f_at *)(out + 8) = acc1 * scale;
    if (vecs == 4) {
        *(sb_v8f_at *)(out + 16) = acc2 * scale;
        *(sb_v8f_at *)(out + 24) = acc3 * scale;
    }
}

/* out[j] = (sum_c a[c] * bt[c * t + j]) * scale for j < n: each in c order. */
SB_ALWAYS_INLINE void sb_attn_dots(float *restrict out, const float *restrict a,
                                   const float *restrict bt, int n, int d, int t, float scale)
{
    int j0 = 0;
    for (; j0 + 32 <= n; j0 += 32)
        sb_attn_dots_vectors(out + j0, a, bt + j0, 4, d, t, scale);
    if (j0 + 16 <= n) {
        sb_attn_dots_vectors(out + j0, a, bt + j0, 2, d, t, scale);
        j0 += 16;
    }
    for (int j = j0; j < n; j++) {
        float acc = 0.0f;
        for (int c = 0; c < d; c++)
            acc += a[c] * bt[(ptrdiff_t)c * t + j];
        out[j] = acc * scale;
    }
}

/* e[j] = expf(s[j] - max s) in place for j < n: the softmax's numerators. */
static inline void sb_attn_exp_shifted(float *p, int n)
{
    float m = p[0];
    for (int j = 1; j < n; j++)
        if (p[j] > m)
            m = p[j];
    for (int j = 0; j < n; j++)
        p[j] = expf(p[j] - m);
}

/* p[j] for j < n from the scaled scores in p: the stable softmax, its sum
 * in chunks of `chunk`. */
static inline void sb_attn_softmax(float *p, int n, int chunk)
{
    sb_attn_exp_shifted(p, n);
    const float sum = sb_attn_chunked_sum(p, 1, n, chunk);
    for (int j = 0; j < n; j++)
        p[j] = p[j] / sum;
}

/* The chunk of a sum over `range` terms: SB_ATTN_KEY_BLOCK for parts = 0
 * (det), else the range cut into `parts` chunks (loose: one per thread). */
static inline int sb_attn_chunk(int range, int parts)
{
    if (parts == 0)
        return SB_ATTN_KEY_BLOCK;
    const int c = (range + parts - 1) / parts;
    return c > 0 ? c : 1;
}

/* One thread's scratch for the pairs it computes (sb_attn_scratch_floats
 * floats in one allocation). */
typedef struct sb_attn_scratch {
    float *kt, *vt;     /* [d][t] */
    float *p, *ds;      /* [t][t], row i holds the columns of its keys */
    float *dk, *dv;     /* [t][d]: a head's dk and dv with grouped heads */
} sb_attn_scratch;
sb_attn_scratch sb_attn_scratch_new(const sb_attn_shape *s);
void sb_attn_scratch_free(sb_attn_scratch *w);

/* One query head's gradients with its sums chunked by sb_attn_chunk(range,
 * parts): q, k, v the first rows of the head and of its key/value head in
 * qkv, dq its first dqkv row, g its first dy row; its own dk and dv (not
 * added to its group's) go to dk and dv, rows ldk apart. */
void sb_attn_bwd_head(float *dq, float *dk, float *dv, ptrdiff_t ldk, const float *g,
                      const float *q, const float *k, const float *v, const sb_attn_shape *s,
                      sb_attn_scratch *w, int parts);

/* The det and loose kernels (attn_pairs.c): the (sequence, head) pairs or
 * (sequence, key/value head) groups in parallel, their sums chunked by
 * sb_attn_chunk(range, parts). */
void sb_attn_fwd_pairs(float *y, const float *qkv, const sb_attn_shape *s, int parts);
void sb_attn_bwd_pairs(float *dqkv, const float *dy, const float *qkv, const sb_attn_shape *s,
                       int parts);

/* The exact value in double of every output element and the forward error
 * bound of any family's float evaluation (attn_refd.c): what the reordering
 * bounds and the double evaluations share. */
void sb_attn_fwd_eval(double *value, double *err, const float *qkv, const sb_attn_shape *s);
void sb_attn_bwd_eval(double *value, double *err, const float *dy, const float *qkv,
                      const sb_attn_shape *s);

#endif
