/* KV-cache decoding of the character-level GPT (gpt_decode.h). */
#include <stdlib.h>
#include <string.h>

#include "gpt_decode.h"

const float *sb_gpt_param_data(const sb_gpt *g, const char *name)
{
    for (int i = 0; i < g->n_params; i++)
        if (strcmp(g->param[i].name, name) == 0)
            return g->params + g->param[i].offset;
    SB_ASSERT(!"no such parameter");
    return NULL;
}

static const float *block_param(const sb_gpt *g, int l, const char *part)
{
    char name[SB_GPT_NAME_SIZE];
    snprintf(name, sizeof name, "h%d.%s", l, part);
    return sb_gpt_param_data(g, name);
}

static float *zeros(size_t n, bool *ok)
{
    float *f = sb_floats_try(n);
    if (f)
        memset(f, 0, n * sizeof *f);
    *ok = *ok && f != NULL;
    return f;
}

sb_status sb_gpt_decoder_alloc(sb_gpt_decoder *d, sb_gpt *g, sb_attn_decode_fn *attend,
                               int slots, int rows)
{
    SB_ASSERT(slots >= 1 && rows >= 1);
    memset(d, 0, sizeof *d);
    d->g = g, d->attend = attend, d->slots = slots, d->rows = rows;
    const size_t C = (size_t)g->width, n = (size_t)rows;
    bool ok = true;
    for (int l = 0; l < g->layers; l++) {
        d->kv[l] = zeros((size_t)slots * (size_t)g->context * 2 * C, &ok);
        sb_gpt_block *b = &d->block[l];
        float **acts[] = {&b->ln1, &b->attn, &b->proj, &b->res1, &b->ln2, &b->fcproj, &b->res2};
        for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
            *acts[i] = zeros(n * C, &ok);
        b->qkv = zeros(n * 3 * C, &ok);
        b->fc = zeros(n * 4 * C, &ok);
        b->gelu = zeros(n * 4 * C, &ok);
    }
    d->embed = zeros(n * C, &ok);
    d->lnf = zeros(n * C, &ok);
    d->logits = zeros(n * (size_t)g->vocab, &ok);
    d->tokens = calloc(n, sizeof *d->tokens);
    d->len = calloc(n, sizeof *d->len);
    d->kvp = calloc(n, sizeof *d->kvp);
    if (!ok || !d->tokens || !d->len || !d->kvp) {
        sb_gpt_decoder_free(d);
        return SB_ERR_NOMEM;
    }
    return SB_OK;
}

void sb_gpt_decoder_free(sb_gpt_decoder *d)
{
    for (int l = 0; d->g && l < d->g->layers; l++) {
        free(d->kv[l]);
        sb_gpt_block *b = &d->block[l];
        float *acts[] = {b->ln1, b->qkv, b->attn, b->proj, b->res1,
                         b->ln2, b->fc, b->gelu, b->fcproj, b->res2};
        for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
            free(acts[i]);
    }
    free(d->embed);
    free(d->lnf);
    free(d->logits);
    free(d->tokens);
    free(d->len);
    free(d->kvp);
    memset(d, 0, sizeof *d);
}

/* Row `pos` of slot's cache of layer l. */
static float *cache_row(const sb_gpt_decoder *d, int l, int slot, int pos)
{
    const size_t C = (size_t)d->g->width;
    return d->kv[l] + ((size_t)slot * (size_t)d->g->context + (size_t)pos) * 2 * C;
}

void sb_gpt_prefill(sb_gpt_decoder *d, int slot, const int32_t *tokens, int n)
{
    sb_gpt *g = d->g;
    SB_ASSERT(slot >= 0 && slot < d->slots && n >= 1 && n <= g->context);
    const size_t C = (size_t)g->width;
    memcpy(g->tokens, tokens, (size_t)n * sizeof *tokens);
    const sb_model_probe none = {.hook = NULL};
    sb_gpt_forward(g, 1, n, 0, NULL, &none);
    for (int l = 0; l < g->layers; l++)
        for (int i = 0; i < n; i++)
            memcpy(cache_row(d, l, slot, i), g->block[l].qkv + (size_t)i * 3 * C + C,
                   2 * C * sizeof(float));
}

static void call(const sb_gpt_decoder *d, sb_op_call c, void *out, void *const in[])
{
    sb_model_call(d->g->k, &c, (void *const[]){out}, in);
}

static sb_op_call dense(int n, int in, int out)
{
    return (sb_op_call){.op = SB_OP_dense_fwd, .dense = {.n = n, .in = in, .out = out}};
}

static sb_op_call norm(int n, int c)
{
    return (sb_op_call){.op = SB_OP_layernorm_fwd, .norm = {.n = n, .c = c, .eps = 1e-5f}};
}

static sb_op_call vec(sb_op op, size_t n)
{
    return (sb_op_call){.op = op, .n = n};
}

/* Block l of a step of n requests on x [n][C]: gpt.c's block_forward, the
 * attention over each request's cache. */
static void block_step(sb_gpt_decoder *d, int l, const float *x, const sb_gpt_request *req,
                       int n)
{
    const sb_gpt *g = d->g;
    const int C = g->width;
    const size_t nc = (size_t)n * (size_t)C;
    sb_gpt_block *b = &d->block[l];
    void *xin = (void *)(uintptr_t)x;
#define P(part) ((void *)(uintptr_t)block_param(g, l, part))
    call(d, norm(n, C), b->ln1, (void *const[]){xin, P("ln1.w"), P("ln1.b")});
    call(d, dense(n, C, 3 * C), b->qkv, (void *const[]){b->ln1, P("qkv.W"), P("qkv.b")});
    for (int i = 0; i < n; i++) {
        /* the fault: the second request's row lands one position on */
        int at = req[i].pos;
        if (d->fault == SB_DECODE_FAULT_SECOND_REQUEST_CACHE_SHIFT && i == 1 && n > 1 &&
            at + 1 < g->context)
            at++;
        memcpy(cache_row(d, l, req[i].slot, at), b->qkv + (size_t)i * 3 * (size_t)C + C,
               2 * (size_t)C * sizeof(float));
        d->kvp[i] = cache_row(d, l, req[i].slot, 0);
        d->len[i] = req[i].pos + 1;
    }
    sb_attn_decode a = {.n = n, .h = g->heads, .d = C / g->heads, .qkv = b->qkv,
                        .kv = d->kvp, .len = d->len};
    d->attend(b->attn, &a);
    call(d, dense(n, C, C), b->proj, (void *const[]){b->attn, P("proj.W"), P("proj.b")});
    call(d, vec(SB_OP_residual_add, nc), b->res1, (void *const[]){xin, b->proj});
    call(d, norm(n, C), b->ln2, (void *const[]){b->res1, P("ln2.w"), P("ln2.b")});
    call(d, dense(n, C, 4 * C), b->fc, (void *const[]){b->ln2, P("fc.W"), P("fc.b")});
    call(d, vec(SB_OP_gelu_fwd, 4 * nc), b->gelu, (void *const[]){b->fc});
    call(d, dense(n, 4 * C, C), b->fcproj, (void *const[]){b->gelu, P("fcproj.W"), P("fcproj.b")});
    call(d, vec(SB_OP_residual_add, nc), b->res2, (void *const[]){b->res1, b->fcproj});
#undef P
}

void sb_gpt_decode_step(sb_gpt_decoder *d, const sb_gpt_request *req, int n)
{
    const sb_gpt *g = d->g;
    SB_ASSERT(n >= 1 && n <= d->rows);
    const int C = g->width;
    void *wte = (void *)(uintptr_t)sb_gpt_param_data(g, "wte");
    const float *wpe = sb_gpt_param_data(g, "wpe");
    for (int i = 0; i < n; i++) {
        SB_ASSERT(req[i].slot >= 0 && req[i].slot < d->slots && req[i].pos >= 0 &&
                  req[i].pos < g->context);
        d->tokens[i] = req[i].token;
        /* one row at position pos: the embedding of a window of one token
         * whose position table starts at pos */
        sb_op_call e = {.op = SB_OP_embedding_fwd,
                        .embed = {.n = 1, .t = 1, .vocab = g->vocab, .c = C}};
        call(d, e, d->embed + (size_t)i * (size_t)C,
             (void *const[]){&d->tokens[i], wte,
                             (void *)(uintptr_t)(wpe + (size_t)req[i].pos * (size_t)C)});
    }
    const float *x = d->embed;
    for (int l = 0; l < g->layers; l++) {
        block_step(d, l, x, req, n);
        x = d->block[l].res2;
    }
    void *xin = (void *)(uintptr_t)x;
    call(d, norm(n, C), d->lnf,
         (void *const[]){xin, (void *)(uintptr_t)sb_gpt_param_data(g, "lnf.w"),
                         (void *)(uintptr_t)sb_gpt_param_data(g, "lnf.b")});
    call(d, dense(n, C, g->vocab), d->logits,
         (void *const[]){d->lnf, (void *)(uintptr_t)sb_gpt_param_data(g, "head.W"),
                         (void *)(uintptr_t)sb_gpt_param_data(g, "head.b")});
}
