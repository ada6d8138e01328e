/* The records of a decode trace (decode.h): a copy of each per-position
 * tensor, its trace record, and what its bound is computed from. */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_paths.h"

void sb_decode_trace_free(sb_decode_trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->recs[i].data);
    free(t->recs);
    free(t->tokens);
    sb_trace_free(&t->trace);
    memset(t, 0, sizeof *t);
}

/* Appends a record of the tensor src (dtype f32 unless ints) with copy when
 * `own`; its index, or (size_t)-1 on out of memory (t->failed set). */
static size_t rec_add(sb_decode_trace *t, sb_decode_rec_kind kind, int pos, const char *name,
                      const char *op, const void *src, sb_dtype dtype, int ndim, int64_t d0,
                      int64_t d1, bool own, const char *const *inputs, int n_inputs)
{
    if (t->failed)
        return (size_t)-1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        sb_decode_rec *r = realloc(t->recs, cap * sizeof *r);
        if (!r) {
            t->failed = true;
            return (size_t)-1;
        }
        t->recs = r;
        t->cap = cap;
    }
    sb_decode_rec *r = &t->recs[t->n];
    memset(r, 0, sizeof *r);
    r->kind = kind, r->pos = pos;
    r->count = (size_t)d0 * (size_t)(ndim > 1 ? d1 : 1);
    const void *data = src;
    if (own) {
        r->data = malloc(r->count * sizeof(float));
        if (!r->data) {
            t->failed = true;
            return (size_t)-1;
        }
        memcpy(r->data, src, r->count * sizeof(float));
        data = r->data;
    }
    sb_tensor x = {.dtype = dtype, .ndim = ndim, .dim = {d0, d1}, .data = (void *)(uintptr_t)data};
    sb_probe_point pt = {.name = name, .op = op, .tensor = &x, .inputs = inputs,
                         .n_inputs = n_inputs};
    if (sb_trace_add_probe(&t->trace, &pt) != SB_OK) {
        free(r->data);
        t->failed = true;
        return (size_t)-1;
    }
    return t->n++;
}

void sb_decode_sources(sb_decode_trace *t, const sb_gpt *g, const int32_t *tokens, int n)
{
    t->tokens = malloc((size_t)n * sizeof *t->tokens);
    if (!t->tokens) {
        t->failed = true;
        return;
    }
    memcpy(t->tokens, tokens, (size_t)n * sizeof *tokens);
    rec_add(t, SB_DECODE_REC_SOURCE, -1, "tokens", "source", t->tokens, SB_DTYPE_I32, 1, n, 0,
            false, NULL, 0);
    for (int i = 0; i < g->n_params; i++) {
        const sb_gpt_param *q = &g->param[i];
        rec_add(t, SB_DECODE_REC_SOURCE, -1, q->name, "source", g->params + q->offset,
                SB_DTYPE_F32, 1, (int64_t)q->count, 0, false, NULL, 0);
    }
}

/* ---- the records of one position ------------------------------------------- */

typedef char rec_name[SB_GPT_NAME_SIZE];

/* What the records of one position are made with. */
typedef struct pos_emit {
    sb_decode_trace *t;
    const sb_gpt *g;
    int pos;
    rec_name x_name;            /* the residual stream's record */
    size_t x;                   /* its index */
} pos_emit;

static const float *param(const sb_gpt *g, int l, const char *part)
{
    char name[SB_GPT_NAME_SIZE];
    if (l >= 0)
        snprintf(name, sizeof name, "h%d.%s", l, part);
    else
        snprintf(name, sizeof name, "%s", part);
    return sb_gpt_param_data(g, name);
}

static const char *name_of(rec_name out, int pos, int l, const char *part)
{
    if (l >= 0)
        snprintf(out, sizeof(rec_name), "p%d.h%d.%s", pos, l, part);
    else
        snprintf(out, sizeof(rec_name), "p%d.%s", pos, part);
    return out;
}

/* A row record of op c (its inputs in[], their records' names in_names;
 * weights named by parameter), its call bound to the copies. */
static size_t row_add(pos_emit *e, int l, const char *part, sb_op_call c, const float *row,
                      const void *const in[], const char *const in_names[], int n_names)
{
    sb_status st = sb_op_call_describe(&c);
    SB_ASSERT(st == SB_OK);
    rec_name name;
    size_t count = (size_t)c.out[0].dim[0] * (size_t)(c.out[0].ndim > 1 ? c.out[0].dim[1] : 1);
    size_t i = rec_add(e->t, SB_DECODE_REC_ROW, e->pos, name_of(name, e->pos, l, part),
                       sb_op_name(c.op), row, SB_DTYPE_F32, 1, (int64_t)count, 0, true,
                       in_names, n_names);
    if (i == (size_t)-1)
        return i;
    sb_decode_rec *r = &e->t->recs[i];
    for (int k = 0; k < c.n_in; k++)
        c.in[k].data = (void *)(uintptr_t)in[k];
    c.out[0].data = r->data;
    r->call = c;
    return i;
}

static const float *data_of(const pos_emit *e, size_t i)
{
    return i == (size_t)-1 ? NULL : e->t->recs[i].data;
}

static sb_op_call dense(int in, int out)
{
    return (sb_op_call){.op = SB_OP_dense_fwd, .dense = {.n = 1, .in = in, .out = out}};
}

static sb_op_call norm(int c)
{
    return (sb_op_call){.op = SB_OP_layernorm_fwd, .norm = {.n = 1, .c = c, .eps = 1e-5f}};
}

static sb_op_call vec(sb_op op, size_t n)
{
    return (sb_op_call){.op = op, .n = n};
}

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define NAMES(...)                                                                          \
    ((const char *const[]){__VA_ARGS__}),                                                   \
        (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void block_emit(pos_emit *e, int l, const sb_decode_rows *rows)
{
    const sb_gpt *g = e->g;
    const int C = g->width, pos = e->pos;
    rec_name n_ln1, n_qkv, n_kv, n_prev_kv, n_attn, n_proj, n_res1, n_ln2, n_fc, n_gelu,
        n_fcproj, w, b;
    name_of(n_ln1, pos, l, "ln1"), name_of(n_qkv, pos, l, "qkv"), name_of(n_kv, pos, l, "kv");
    name_of(n_attn, pos, l, "attn"), name_of(n_proj, pos, l, "proj");
    name_of(n_res1, pos, l, "res1"), name_of(n_ln2, pos, l, "ln2"), name_of(n_fc, pos, l, "fc");
    name_of(n_gelu, pos, l, "gelu"), name_of(n_fcproj, pos, l, "fcproj");
    const sb_decode_block_rows *br = &rows->block[l];
#define W(part) (snprintf(w, sizeof w, "h%d.%s", l, part), w)
#define B(part) (snprintf(b, sizeof b, "h%d.%s", l, part), b)
    size_t ln1 = row_add(e, l, "ln1", norm(C), br->ln1,
                         IN(data_of(e, e->x), param(g, l, "ln1.w"), param(g, l, "ln1.b")),
                         NAMES(e->x_name, W("ln1.w"), B("ln1.b")));
    size_t qkv = row_add(e, l, "qkv", dense(C, 3 * C), br->qkv,
                         IN(data_of(e, ln1), param(g, l, "qkv.W"), param(g, l, "qkv.b")),
                         NAMES(n_ln1, W("qkv.W"), B("qkv.b")));
    int n_kv_in = pos > 0 ? 2 : 1;
    size_t kv = rec_add(e->t, SB_DECODE_REC_KV, pos, n_kv, "kv_cache", br->kv, SB_DTYPE_F32, 2,
                        pos + 1, 2 * C, true,
                        (const char *const[]){n_qkv, name_of(n_prev_kv, pos - 1, l, "kv")},
                        n_kv_in);
    size_t attn = rec_add(e->t, SB_DECODE_REC_ATTN, pos, n_attn, "attention_fwd", br->attn,
                          SB_DTYPE_F32, 1, C, 0, true, NAMES(n_qkv, n_kv));
    if (attn != (size_t)-1) {
        sb_decode_rec *r = &e->t->recs[attn];
        r->qkv = qkv;
        r->kv = kv;
        r->call.attn = (sb_attn_shape){.b = 1, .t = pos + 1, .h = g->heads, .d = C / g->heads};
    }
    size_t proj = row_add(e, l, "proj", dense(C, C), br->proj,
                          IN(data_of(e, attn), param(g, l, "proj.W"), param(g, l, "proj.b")),
                          NAMES(n_attn, W("proj.W"), B("proj.b")));
    size_t res1 = row_add(e, l, "res1", vec(SB_OP_residual_add, (size_t)C), br->res1,
                          IN(data_of(e, e->x), data_of(e, proj)), NAMES(e->x_name, n_proj));
    size_t ln2 = row_add(e, l, "ln2", norm(C), br->ln2,
                         IN(data_of(e, res1), param(g, l, "ln2.w"), param(g, l, "ln2.b")),
                         NAMES(n_res1, W("ln2.w"), B("ln2.b")));
    size_t fc = row_add(e, l, "fc", dense(C, 4 * C), br->fc,
                        IN(data_of(e, ln2), param(g, l, "fc.W"), param(g, l, "fc.b")),
                        NAMES(n_ln2, W("fc.W"), B("fc.b")));
    size_t gelu = row_add(e, l, "gelu", vec(SB_OP_gelu_fwd, 4 * (size_t)C), br->gelu,
                          IN(data_of(e, fc)), NAMES(n_fc));
    size_t fcproj = row_add(e, l, "fcproj", dense(4 * C, C), br->fcproj,
                            IN(data_of(e, gelu), param(g, l, "fcproj.W"),
                               param(g, l, "fcproj.b")),
                            NAMES(n_gelu, W("fcproj.W"), B("fcproj.b")));
    size_t res2 = row_add(e, l, "res2", vec(SB_OP_residual_add, (size_t)C), br->res2,
                          IN(data_of(e, res1), data_of(e, fcproj)), NAMES(n_res1, n_fcproj));
#undef W
#undef B
    e->x = res2;
    name_of(e->x_name, pos, l, "res2");
}

void sb_decode_emit(sb_decode_trace *t, const sb_gpt *g, int pos, const sb_decode_rows *rows)
{
    const int C = g->width;
    pos_emit e = {.t = t, .g = g, .pos = pos};
    sb_op_call emb = {.op = SB_OP_embedding_fwd,
                      .embed = {.n = 1, .t = 1, .vocab = g->vocab, .c = C}};
    e.x = row_add(&e, -1, "wte", emb, rows->embed,
                  IN(t->tokens + pos, param(g, -1, "wte"), param(g, -1, "wpe") + (size_t)pos * C),
                  NAMES("tokens", "wte", "wpe"));
    name_of(e.x_name, pos, -1, "wte");
    for (int l = 0; l < g->layers; l++)
        block_emit(&e, l, rows);
    rec_name n_lnf;
    size_t lnf = row_add(&e, -1, "lnf", norm(C), rows->lnf,
                         IN(data_of(&e, e.x), param(g, -1, "lnf.w"), param(g, -1, "lnf.b")),
                         NAMES(e.x_name, "lnf.w", "lnf.b"));
    row_add(&e, -1, "head", dense(C, g->vocab), rows->logits,
            IN(data_of(&e, lnf), param(g, -1, "head.W"), param(g, -1, "head.b")),
            NAMES(name_of(n_lnf, pos, -1, "lnf"), "head.W", "head.b"));
}
