/* KV-cache decoding of the character-level GPT (gpt.h), as a server runs it:
 * a prefill of a request's prompt, then one token at a time, each step one
 * batch of requests of different lengths, each request's attention over
 * its own cache (kernels/attn/attn_decode.h). Every other op is the kernel
 * table's, on the step's rows: det's are batch-invariant (one order per
 * output element whatever the row count), loose's follow the row count and
 * the thread count as BLAS-style code does.
 *
 * The cache keeps, per layer and request slot, the K and V parts of every
 * position's qkv row: kv[l] [slots][context][2C]. */
#ifndef SB_GPT_DECODE_H
#define SB_GPT_DECODE_H

#include "attn/attn_decode.h"
#include "gpt.h"

/* A deliberate fault of the decoder (the decode mutants, kernels/mutants/). */
typedef enum sb_decode_fault {
    SB_DECODE_FAULT_NONE,
    SB_DECODE_FAULT_SECOND_REQUEST_CACHE_SHIFT, /* row 1 of a step of 2 or more writes its
                                                 * K and V one position too far */
} sb_decode_fault;

typedef struct sb_gpt_decoder {
    sb_gpt *g;                  /* the model; prefill runs its forward pass in g's buffers */
    sb_attn_decode_fn *attend;
    sb_decode_fault fault;
    int slots, rows;            /* request slots of the cache; most requests of a step */
    float *kv[SB_GPT_MAX_LAYERS];   /* [slots][context][2C] */
    /* the activations of the last step, row i request i: */
    float *embed;                   /* [rows][C] */
    sb_gpt_block block[SB_GPT_MAX_LAYERS];
    float *lnf, *logits;            /* [rows][C], [rows][V] */
    int32_t *tokens;                /* [rows] */
    int *len;                       /* [rows] */
    const float **kvp;              /* [rows] */
} sb_gpt_decoder;

/* One request of a step: its cache slot, the position of its token (its
 * cache holds positions 0..pos-1) and the token. */
typedef struct sb_gpt_request {
    int slot, pos;
    int32_t token;
} sb_gpt_request;

/* SB_ERR_NOMEM; slots, rows >= 1. */
sb_status sb_gpt_decoder_alloc(sb_gpt_decoder *d, sb_gpt *g, sb_attn_decode_fn *attend,
                               int slots, int rows);
void sb_gpt_decoder_free(sb_gpt_decoder *d);

/* The prompt tokens[0..n) of the request in `slot` (n <= context) through
 * the model's forward pass over one window of n tokens (what the training
 * forward runs for those positions), no probes; its K and V rows into the
 * slot's cache. The rows are in g's buffers (g->block, g->lnf, g->logits). */
void sb_gpt_prefill(sb_gpt_decoder *d, int slot, const int32_t *tokens, int n);

/* One decode step of n <= rows requests (distinct slots, pos < context):
 * each token's K and V into its cache at pos, its attention over positions
 * 0..pos, its logits into row i of d->logits; every activation in d's
 * buffers. */
void sb_gpt_decode_step(sb_gpt_decoder *d, const sb_gpt_request *req, int n);

/* The parameter of g named `name` ("h0.qkv.W"); SB_ASSERT that it exists. */
const float *sb_gpt_param_data(const sb_gpt *g, const char *name);

#endif
