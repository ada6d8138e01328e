/* Attention of one decode step (kernels/model/gpt_decode.c): n requests,
 * each one new query against the keys and values of its own cache, as a
 * server batches requests of different lengths.
 *
 * Request r's query is the q part of row r of qkv [n][3C]; its keys and
 * values are rows 0..len[r]-1 of kv[r], each row [2C] (K in columns [0, C),
 * V in [C, 2C)). Head h reads columns h*d .. h*d+d-1 of each part.
 *
 * det computes each (request, head) pair exactly as attention_fwd's det
 * computes query len-1 of a sequence (attn.h): the same dot products in c
 * order, the same stable softmax, the sums over keys in chunks of
 * SB_ATTN_KEY_BLOCK from key 0. A position's output has one order whatever
 * the batch, the other requests' lengths or the thread count, and it is the
 * training forward pass's order: decode gives the training forward's bits.
 *
 * loose is split-KV decoding as a fast CPU server runs it (flash decoding):
 * a request's keys are cut into sb_attn_decode_splits(len, n, threads)
 * splits, so that the (request, head, split) items fill the threads; each
 * split keeps its own max m_s, sum l_s = sum_j exp(s_j - m_s) and output
 * o_s = sum_j exp(s_j - m_s) v_j, and the splits combine in split order:
 * m = max_s m_s, y = (sum_s o_s exp(m_s - m)) / (sum_s l_s exp(m_s - m)).
 * Its bits follow the cache length, the number of requests and the thread
 * count. */
#ifndef SB_ATTN_DECODE_H
#define SB_ATTN_DECODE_H

typedef struct sb_attn_decode {
    int n, h, d;                /* requests, heads, head width (C = h d) */
    const float *qkv;           /* [n][3C] */
    const float *const *kv;     /* [n] rows of [len[r]][2C] */
    const int *len;             /* [n] keys of each request, >= 1 */
} sb_attn_decode;

/* y [n][C] */
typedef void sb_attn_decode_fn(float *y, const sb_attn_decode *a);

void sb_attn_decode_det(float *y, const sb_attn_decode *a);

/* One (request, head) pair: y [d] from the query q [d] and the keys and
 * values kv (row j at kv + j 2C: K, then V at + C) of len positions; kt
 * [d][len] and p [len] are scratch. */
typedef void sb_attn_decode_pair_fn(float *y, const float *q, const float *kv, int len, int d,
                                    int width, float *kt, float *p);
/* The pairs of a step in parallel, each by one thread with pair (det's,
 * or a mutant's). */
void sb_attn_decode_pairs(float *y, const sb_attn_decode *a, sb_attn_decode_pair_fn *pair);
void sb_attn_decode_loose(float *y, const sb_attn_decode *a);

/* loose's split count of a request with len keys in a step of n requests
 * over `threads` threads: enough (request, head, split) items for four per
 * thread, each split at least SB_ATTN_DECODE_MIN_SPLIT keys. */
#define SB_ATTN_DECODE_MIN_SPLIT 8
int sb_attn_decode_splits(int len, int n, int h, int threads);

#endif
