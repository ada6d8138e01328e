/* The decode comparison (harness/CLI.md "decode"): the tensors of every
 * position of one sequence through a trained char_gpt, computed six ways,
 * each way a trace of per-position records named alike ("p5.h0.qkv"),
 * compared with the training forward pass's trace and judged as any
 * divergence is: the first divergent record, the origins (records whose
 * inputs are identical), each origin's elements against its op's
 * reordering bound, the verdict.
 *
 * The paths:
 *   train        the training forward pass over a batch of windows, the
 *                sequence the first (the others the next windows of the
 *                validation text): the reference
 *   prefill      the sequence as one prompt (gpt_decode.h)
 *   incremental  a prefill of the first `prompt` tokens, then one token a
 *                step with the cache, alone
 *   batch+K      the same, every step a batch of the sequence and K other
 *                requests (K = 1, 3, 15), the sequence the batch's second;
 *                the others are windows of the validation text at seeded
 *                starts, prefilled with seeded prompt lengths, one token a
 *                step; one that reaches the end of the context leaves and
 *                a new one takes its slot
 *
 * Records of position i, in order: p<i>.wte (embedding_fwd), per block l:
 * p<i>.h<l>.ln1 .qkv .kv .attn .proj .res1 .ln2 .fc .gelu .fcproj .res2,
 * then p<i>.lnf and p<i>.head (the logits). p<i>.h<l>.kv is the keys and
 * values the attention of position i reads ([i+1][2C]; the cache in the
 * decode paths), op kv_cache: exact, inputs p<i>.h<l>.qkv and
 * p<i-1>.h<l>.kv. The trace starts with sources: the tokens and every
 * parameter. */
#ifndef SB_DECODE_H
#define SB_DECODE_H

#include "model/gpt_decode.h"
#include "sb_harness.h"
#include "sb_text.h"

typedef enum sb_decode_path {
    SB_DECODE_TRAIN,
    SB_DECODE_PREFILL,
    SB_DECODE_INCREMENTAL,
    SB_DECODE_BATCH1,
    SB_DECODE_BATCH3,
    SB_DECODE_BATCH15,
    SB_DECODE_PATH_COUNT
} sb_decode_path;

const char *sb_decode_path_name(sb_decode_path p);  /* "train", ..., "batch+15" */
int sb_decode_path_others(sb_decode_path p);        /* K of batch+K, else 0 */

/* One record of a decode trace: a copy of the tensor, and what bounds it. */
typedef enum sb_decode_rec_kind {
    SB_DECODE_REC_SOURCE,
    SB_DECODE_REC_ROW,          /* call: the op on this one row, its inputs bound */
    SB_DECODE_REC_KV,           /* exact */
    SB_DECODE_REC_ATTN,         /* the last row of attention_fwd over the positions 0..pos */
} sb_decode_rec_kind;

typedef struct sb_decode_rec {
    sb_decode_rec_kind kind;
    int pos;
    sb_op_call call;
    float *data;                /* owned */
    size_t count;
    size_t qkv, kv;             /* SB_DECODE_REC_ATTN: the records it reads */
} sb_decode_rec;

typedef struct sb_decode_trace {
    sb_trace trace;
    sb_decode_rec *recs;        /* parallel to trace.records */
    size_t n, cap;
    int32_t *tokens;            /* the sequence, the tokens source's data */
    bool failed;                /* out of memory on the way */
} sb_decode_trace;

void sb_decode_trace_free(sb_decode_trace *t);

/* What every path of one comparison shares. */
typedef struct sb_decode_setup {
    sb_gpt *g;                  /* trained; its batch at least 1 */
    sb_attn_decode_fn *attend;  /* the family's decode attention */
    sb_decode_fault fault;
    const sb_text *val;         /* the validation text: the sequence is its first window */
    int prompt;                 /* 1..context: the prefill of the incremental paths */
    uint64_t seed;              /* the other requests */
} sb_decode_setup;

/* The trace of path p (SB_ERR_NOMEM; the text too short is the caller's
 * check: context * (batch + 1) + 1 characters). */
sb_status sb_decode_path_run(sb_decode_trace *out, const sb_decode_setup *s, sb_decode_path p);

/* The judgement of one path against the reference. */
typedef struct sb_decode_judgement {
    sb_divergence first;        /* found false: identical */
    int origins;                /* how many */
    int located;                /* origins whose elements were judged (the first ones) */
    sb_divergence worst;        /* the worst located origin (found false: none) */
    sb_verdict verdict;         /* the worst origin's; identical when none */
} sb_decode_judgement;

#define SB_DECODE_ORIGINS_LOCATED 64

void sb_decode_judge(sb_decode_judgement *j, const sb_decode_trace *ref,
                     const sb_decode_trace *run);

/* Position and record part of a record name "p<i>.<rest>": pos, and rest. */
const char *sb_decode_rec_part(const char *name, int *pos);
/* The largest |difference| of the logits of position pos, and whether the
 * most likely token (the first maximum) differs. */
/* The index of the first largest of x[0..n): the greedy token. */
size_t sb_decode_argmax(const float *x, size_t n);
double sb_decode_logit_diff(const sb_decode_trace *ref, const sb_decode_trace *run, int pos,
                            bool *argmax_differs);

#endif
