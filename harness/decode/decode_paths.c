/* The six paths of the decode comparison (decode.h), each a decode trace. */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_paths.h"
#include "sb_rng.h"

static const char *const path_names[SB_DECODE_PATH_COUNT] = {
    "train", "prefill", "incremental", "batch+1", "batch+3", "batch+15",
};

const char *sb_decode_path_name(sb_decode_path p)
{
    return path_names[p];
}

int sb_decode_path_others(sb_decode_path p)
{
    switch (p) {
    case SB_DECODE_BATCH1: return 1;
    case SB_DECODE_BATCH3: return 3;
    case SB_DECODE_BATCH15: return 15;
    case SB_DECODE_TRAIN:
    case SB_DECODE_PREFILL:
    case SB_DECODE_INCREMENTAL:
    case SB_DECODE_PATH_COUNT: break;
    }
    return 0;
}

/* The rows of a block's activations b at row r; kv NULL. */
static sb_decode_block_rows block_rows(const sb_gpt_block *b, size_t r, size_t C)
{
    return (sb_decode_block_rows){
        b->ln1 + r * C, b->qkv + r * 3 * C, b->attn + r * C, b->proj + r * C, b->res1 + r * C,
        b->ln2 + r * C, b->fc + r * 4 * C, b->gelu + r * 4 * C, b->fcproj + r * C,
        b->res2 + r * C, NULL,
    };
}

/* Positions 0..n-1 from the forward pass in g's buffers (window 0): the
 * keys and values gathered from the qkv rows into kv [L][context][2C]. */
static void emit_forward(sb_decode_trace *t, const sb_gpt *g, int n, float *kv)
{
    const size_t C = (size_t)g->width, T = (size_t)g->context;
    for (int l = 0; l < g->layers; l++)
        for (int i = 0; i < n; i++)
            memcpy(kv + ((size_t)l * T + (size_t)i) * 2 * C,
                   g->block[l].qkv + (size_t)i * 3 * C + C, 2 * C * sizeof(float));
    for (int i = 0; i < n; i++) {
        sb_decode_rows rows = {g->embed + i * C, g->lnf + i * C, g->logits + i * (size_t)g->vocab,
                               {{0}}};
        for (int l = 0; l < g->layers; l++) {
            rows.block[l] = block_rows(&g->block[l], (size_t)i, C);
            rows.block[l].kv = kv + (size_t)l * T * 2 * C;
        }
        sb_decode_emit(t, g, i, &rows);
    }
}

/* Row r of the decoder's last step as position pos of slot `slot`. */
static void emit_step(sb_decode_trace *t, const sb_gpt_decoder *d, int r, int slot, int pos)
{
    const sb_gpt *g = d->g;
    const size_t C = (size_t)g->width, T = (size_t)g->context, R = (size_t)r;
    sb_decode_rows rows = {d->embed + R * C, d->lnf + R * C, d->logits + R * (size_t)g->vocab,
                           {{0}}};
    for (int l = 0; l < g->layers; l++) {
        rows.block[l] = block_rows(&d->block[l], R, C);
        rows.block[l].kv = d->kv[l] + (size_t)slot * T * 2 * C;
    }
    sb_decode_emit(t, g, pos, &rows);
}

/* Another request of a batch: a window of the validation text from a
 * seeded start, prefilled with a seeded prompt, then a token a step. */
typedef struct other {
    int slot, pos;
    const uint8_t *text;
} other;

static void other_start(other *o, sb_gpt_decoder *d, const sb_decode_setup *s, uint32_t k)
{
    const sb_gpt *g = d->g;
    const int T = g->context;
    const uint64_t starts = (uint64_t)(s->val->n - T - 1);
    const uint64_t start = sb_rng_u32(s->seed, SB_STREAM_DECODE, k, 0) % starts;
    const int prompt = 1 + (int)(sb_rng_u32(s->seed, SB_STREAM_DECODE, k, 1) % (uint32_t)(T - 1));
    o->text = s->val->tokens + start;
    o->pos = prompt;
    int32_t *tok = malloc((size_t)prompt * sizeof *tok);
    SB_ASSERT(tok != NULL);
    for (int i = 0; i < prompt; i++)
        tok[i] = o->text[i];
    sb_gpt_prefill(d, o->slot, tok, prompt);
    free(tok);
}

/* incremental (others 0) and batch+K: the sequence in slot 0, row 1 of
 * each step when there are others (row 0 alone). */
static sb_status run_decode(sb_decode_trace *t, const sb_decode_setup *s, const int32_t *seq,
                            int others)
{
    sb_gpt *g = s->g;
    const int T = g->context, n = others + 1;
    sb_gpt_decoder d;
    if (sb_gpt_decoder_alloc(&d, g, s->attend, n, n) != SB_OK)
        return SB_ERR_NOMEM;
    d.fault = s->fault;
    float *kv = sb_floats_try((size_t)g->layers * (size_t)T * 2 * (size_t)g->width);
    other *o = malloc((size_t)(others > 0 ? others : 1) * sizeof *o);
    sb_gpt_request *req = malloc((size_t)n * sizeof *req);
    if (!kv || !o || !req) {
        free(kv), free(o), free(req);
        sb_gpt_decoder_free(&d);
        return SB_ERR_NOMEM;
    }
    sb_gpt_prefill(&d, 0, seq, s->prompt);
    emit_forward(t, g, s->prompt, kv);
    uint32_t joined = 0;
    for (int j = 0; j < others; j++) {
        o[j].slot = j + 1;
        other_start(&o[j], &d, s, joined++);
    }
    const int mine = others > 0 ? 1 : 0;
    for (int pos = s->prompt; pos < T; pos++) {
        for (int r = 0, j = 0; r < n; r++) {
            if (r == mine) {
                req[r] = (sb_gpt_request){0, pos, seq[pos]};
                continue;
            }
            req[r] = (sb_gpt_request){o[j].slot, o[j].pos, o[j].text[o[j].pos]};
            j++;
        }
        sb_gpt_decode_step(&d, req, n);
        emit_step(t, &d, mine, 0, pos);
        for (int j = 0; j < others; j++)
            if (++o[j].pos == T) /* it leaves; a new request takes its slot */
                other_start(&o[j], &d, s, joined++);
    }
    free(kv), free(o), free(req);
    sb_gpt_decoder_free(&d);
    return SB_OK;
}

sb_status sb_decode_path_run(sb_decode_trace *t, const sb_decode_setup *s, sb_decode_path p)
{
    sb_gpt *g = s->g;
    const int T = g->context;
    memset(t, 0, sizeof *t);
    sb_trace_init(&t->trace);
    int32_t *seq = malloc((size_t)T * sizeof *seq);
    if (!seq)
        return SB_ERR_NOMEM;
    for (int i = 0; i < T; i++)
        seq[i] = s->val->tokens[i];
    sb_decode_sources(t, g, seq, T);
    const sb_model_probe none = {.hook = NULL};
    sb_status st = SB_OK;
    switch (p) {
    case SB_DECODE_TRAIN: {
        /* window w the validation text from character w T, as evaluate() loads it */
        for (int w = 0; w < g->batch; w++)
            for (int i = 0; i < T; i++)
                g->tokens[w * T + i] = s->val->tokens[(size_t)w * (size_t)T + (size_t)i];
        sb_gpt_forward(g, g->batch, T, 0, NULL, &none);
        float *kv = sb_floats_try((size_t)g->layers * (size_t)T * 2 * (size_t)g->width);
        if (!kv) {
            st = SB_ERR_NOMEM;
            break;
        }
        emit_forward(t, g, T, kv);
        free(kv);
        break;
    }
    case SB_DECODE_PREFILL: {
        sb_gpt_decoder d;
        float *kv = sb_floats_try((size_t)g->layers * (size_t)T * 2 * (size_t)g->width);
        if (!kv || sb_gpt_decoder_alloc(&d, g, s->attend, 1, 1) != SB_OK) {
            free(kv);
            st = SB_ERR_NOMEM;
            break;
        }
        sb_gpt_prefill(&d, 0, seq, T);
        emit_forward(t, g, T, kv);
        sb_gpt_decoder_free(&d);
        free(kv);
        break;
    }
    case SB_DECODE_INCREMENTAL:
    case SB_DECODE_BATCH1:
    case SB_DECODE_BATCH3:
    case SB_DECODE_BATCH15:
        st = run_decode(t, s, seq, sb_decode_path_others(p));
        break;
    case SB_DECODE_PATH_COUNT:
        SB_ASSERT(!"no such path");
    }
    free(seq);
    if (st == SB_OK && t->failed)
        st = SB_ERR_NOMEM;
    return st;
}
