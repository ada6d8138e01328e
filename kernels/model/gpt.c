/* The character-level GPT, one op call per layer, a probe right after every
 * op (the probe list is in README.md). Probe names are
 * "<layer>.<pass>.<tensor>"; a probe's inputs name the probes that hold the
 * op's actual inputs, a parameter by its latest probe (init.* before the
 * first update, adamw.* after). Random streams: SB_STREAM_INIT + the
 * parameter's index in the parameter buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_parallel.h"
#include "gpt.h"
#include "optim/adamw_parts.h"
#include "sb_rng.h"

/* ---- names ---------------------------------------------------------------- */

/* The pass a forward op belongs to: training ("h0.ln1.fwd.out") or test
 * batch k of an evaluation ("eval.b<k>.h0.ln1.out"). */
typedef struct pass {
    int eval_batch;             /* SB_GPT_TRAIN or k */
} pass;

typedef char name_t[SB_GPT_NAME_SIZE];

/* The forward probe of `layer` (a block "h<l>.<layer>" when block >= 0). */
static const char *fwd_name(name_t out, pass ps, int block, const char *layer)
{
    char l[SB_GPT_NAME_SIZE];
    int n = block >= 0 ? snprintf(l, sizeof l, "h%d.%s", block, layer)
                       : snprintf(l, sizeof l, "%s", layer);
    SB_ASSERT(n > 0 && n < (int)sizeof l);
    n = ps.eval_batch == SB_GPT_TRAIN ? snprintf(out, SB_GPT_NAME_SIZE, "%s.fwd.out", l)
                                      : snprintf(out, SB_GPT_NAME_SIZE, "eval.b%d.%s.out",
                                                 ps.eval_batch, l);
    SB_ASSERT(n > 0 && n < SB_GPT_NAME_SIZE);
    return out;
}

/* A backward probe "h<l>.<layer>.bwd.<tensor>" (block >= 0) or "<layer>.bwd.<tensor>". */
static const char *bwd_name(name_t out, int block, const char *layer, const char *tensor)
{
    int n = block >= 0 ? snprintf(out, SB_GPT_NAME_SIZE, "h%d.%s.bwd.%s", block, layer, tensor)
                       : snprintf(out, SB_GPT_NAME_SIZE, "%s.bwd.%s", layer, tensor);
    SB_ASSERT(n > 0 && n < SB_GPT_NAME_SIZE);
    return out;
}

/* ---- running and probing ---------------------------------------------------- */

#define PTRS(...) ((void *const[]){__VA_ARGS__})
#define NAMES(...)                                                             \
    ((const char *const[]){__VA_ARGS__}),                                      \
        (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* Runs c on the model's kernels and probes its output. When the hook hands
 * down a leaf hash and the op has a hashed mode (the elementwise ops:
 * sb_op_call_run_hashed), the op hashes its output leaf by leaf while it is
 * in cache and the probe brings the digests. */
static void run(const sb_gpt *g, const sb_model_probe *p, sb_op_call c, const char *name,
                void *const out[], void *const in[], const char *const in_names[],
                int n_names)
{
    sb_model_op_start(p, name, c.op);
    sb_model_bind(&c, out, in);
    sb_leaf_request r = {.hash = p->leaf_hash};
    if (p->hook && p->leaf_hash && c.n_out == 1) {
        const size_t bytes = sb_tensor_bytes(&c.out[0]);
        r.out[0] = malloc((bytes / SB_HASH_LEAF_BYTES + 1) * sizeof *r.out[0]);
        SB_ASSERT(r.out[0] != NULL);
    }
    const bool hashed = r.out[0] && sb_op_call_run_hashed(g->k, &c, &r);
    if (!r.out[0])
        sb_op_call_run(g->k, &c);
    sb_model_probe_op(p, name, &c, 0, in_names, n_names, hashed ? r.out[0] : NULL);
    free(r.out[0]);
}

static sb_op_call dense_call(sb_op op, int n, int in, int out)
{
    return (sb_op_call){.op = op, .dense = {.n = n, .in = in, .out = out}};
}

static sb_op_call norm_call(sb_op op, int n, int c)
{
    return (sb_op_call){.op = op, .norm = {.n = n, .c = c, .eps = 1e-5f}};
}

static sb_op_call vec_call(sb_op op, size_t count)
{
    return (sb_op_call){.op = op, .n = count};
}

/* ---- parameters and buffers ------------------------------------------------- */

/* Parameter roles: P_* besides the blocks, B_* in each block, each in the
 * order of the parameter list (a role the block does not have is left
 * out). */
enum { P_WTE, P_WPE, P_LNF_W, P_LNF_B, P_HEAD_W, P_HEAD_B };
enum {
    B_LN1_W, B_LN1_B, B_QKV_W, B_QKV_B, B_PROJ_W, B_PROJ_B,
    B_LN2_W, B_LN2_B, B_FC_W, B_FC_B, B_UP_W, B_UP_B, B_FCPROJ_W, B_FCPROJ_B,
};

/* The parameter index of block role `which` of block l, -1 when absent
 * (a bias with no_bias, a norm's beta with RMSNorm, up without SwiGLU). */
static int bp(const sb_gpt *g, int l, int which)
{
    return g->block_param[l][which];
}
/* the same for a P_* role */
static int other(const sb_gpt *g, int which)
{
    return g->other_param[which];
}

static float *pw(const sb_gpt *g, int i)
{
    return g->params + g->param[i].offset;
}
static float *gw(const sb_gpt *g, int i)
{
    return g->grads + g->param[i].offset;
}
static const char *lw(const sb_gpt *g, int i)
{
    return g->param[i].latest;
}

/* An optional parameter (a bias, wpe): its values, or the constant zeros
 * when the block has none; and its probe name likewise. */
#define ZEROS_PROBE "const.zeros"
static float *pw_or_zeros(const sb_gpt *g, int i)
{
    return i >= 0 ? pw(g, i) : g->zeros;
}
static const char *lw_or_zeros(const sb_gpt *g, int i)
{
    return i >= 0 ? lw(g, i) : ZEROS_PROBE;
}

/* Appends parameter `name` of shape d0 x d1 (d1 = 0: a vector) and returns
 * its index; its gradient probe is <layer>.bwd.<grad> with layer the name's
 * part before its last dot. */
static int param_add(sb_gpt *g, const char *name, int64_t d0, int64_t d1, bool decay,
                     const char *grad)
{
    SB_ASSERT(g->n_params < SB_GPT_MAX_PARAMS);
    sb_gpt_param *q = &g->param[g->n_params++];
    q->offset = g->total;
    q->count = (size_t)d0 * (size_t)(d1 > 0 ? d1 : 1);
    q->view = (sb_tensor){.dtype = SB_DTYPE_F32, .ndim = d1 > 0 ? 2 : 1, .dim = {d0, d1}};
    q->decay = decay;
    snprintf(q->name, sizeof q->name, "%s", name);
    snprintf(q->init_name, sizeof q->init_name, "init.%s", name);
    snprintf(q->update_name, sizeof q->update_name, "adamw.%s", name);
    sb_model_state_names(&q->state_probes, SB_OPTIM_ADAMW, q->update_name);
    const char *dot = strrchr(name, '.');
    int layer_len = dot ? (int)(dot - name) : (int)strlen(name);
    snprintf(q->grad_name, sizeof q->grad_name, "%.*s.bwd.%s", layer_len, name, grad);
    snprintf(q->combined_name, sizeof q->combined_name, "allreduce.%s", name);
    /* data parallel, the update reads the gradient combined over the ranks */
    q->grad_probe = g->cfg->reduce == SB_REDUCE_NONE ? q->grad_name : q->combined_name;
    q->latest = q->init_name;
    g->total += q->count;
    return g->n_params - 1;
}

static void params_list(sb_gpt *g)
{
    const int C = g->width, H = 4 * C;
    const bool bias = !g->arch.no_bias, beta = g->arch.norm == SB_GPT_LAYERNORM;
    const bool up = g->arch.mlp == SB_GPT_SWIGLU;
    for (int i = 0; i < SB_GPT_OTHER_PARAMS; i++)
        g->other_param[i] = -1;
    g->other_param[P_WTE] = param_add(g, "wte", g->vocab, C, true, "dW");
    if (g->arch.position == SB_GPT_LEARNED)
        g->other_param[P_WPE] = param_add(g, "wpe", g->context, C, true, "dW");
    for (int l = 0; l < g->layers; l++) {
        int *at = g->block_param[l];
        char n[SB_GPT_NAME_SIZE];
        for (int i = 0; i < SB_GPT_BLOCK_PARAMS; i++)
            at[i] = -1;
#define BLOCK_PARAM(role, present, part, d0, d1, decay, grad)                  \
    if (present) {                                                             \
        snprintf(n, sizeof n, "h%d." part, l);                                 \
        at[role] = param_add(g, n, d0, d1, decay, grad);                       \
    }
        BLOCK_PARAM(B_LN1_W, true, "ln1.w", C, 0, false, "dw");
        BLOCK_PARAM(B_LN1_B, beta, "ln1.b", C, 0, false, "db");
        BLOCK_PARAM(B_QKV_W, true, "qkv.W", C, g->qkv_width, true, "dW");
        BLOCK_PARAM(B_QKV_B, bias, "qkv.b", g->qkv_width, 0, false, "db");
        BLOCK_PARAM(B_PROJ_W, true, "proj.W", C, C, true, "dW");
        BLOCK_PARAM(B_PROJ_B, bias, "proj.b", C, 0, false, "db");
        BLOCK_PARAM(B_LN2_W, true, "ln2.w", C, 0, false, "dw");
        BLOCK_PARAM(B_LN2_B, beta, "ln2.b", C, 0, false, "db");
        BLOCK_PARAM(B_FC_W, true, "fc.W", C, H, true, "dW");
        BLOCK_PARAM(B_FC_B, bias, "fc.b", H, 0, false, "db");
        BLOCK_PARAM(B_UP_W, up, "up.W", C, H, true, "dW");
        BLOCK_PARAM(B_UP_B, up && bias, "up.b", H, 0, false, "db");
        BLOCK_PARAM(B_FCPROJ_W, true, "fcproj.W", H, C, true, "dW");
        BLOCK_PARAM(B_FCPROJ_B, bias, "fcproj.b", C, 0, false, "db");
#undef BLOCK_PARAM
    }
    g->other_param[P_LNF_W] = param_add(g, "lnf.w", C, 0, false, "dw");
    if (beta)
        g->other_param[P_LNF_B] = param_add(g, "lnf.b", C, 0, false, "db");
    g->other_param[P_HEAD_W] = param_add(g, "head.W", C, g->vocab, true, "dW");
    if (bias)
        g->other_param[P_HEAD_B] = param_add(g, "head.b", g->vocab, 0, false, "db");
}

static float *floats(size_t n, bool *ok)
{
    float *f = sb_floats_try(n);
    if (f)
        memset(f, 0, n * sizeof *f);
    *ok = *ok && f != NULL;
    return f;
}

/* Floats `n` when `want`, else NULL (and *ok as it was). */
static float *floats_if(bool want, size_t n, bool *ok)
{
    return want ? floats(n, ok) : NULL;
}

static sb_attn_shape attn_shape(const sb_gpt *g, int windows, int t)
{
    return (sb_attn_shape){.b = windows, .t = t, .h = g->heads, .d = g->width / g->heads,
                           .kv_heads = g->arch.kv_heads};
}

static sb_op_call rope_call(const sb_gpt *g, sb_op op, int n, int t)
{
    const int d = g->width / g->heads;
    return (sb_op_call){.op = op, .rope = {.n = n, .t = t, .h = g->qk_width / d, .d = d,
                                           .base = 10000.0f}};
}

/* Describes the largest op calls once, so that an absurd size is an error
 * here and never an assertion later. */
static bool shapes_ok(const sb_gpt *g)
{
    const int n = g->rows, C = g->width;
    sb_op_call calls[] = {
        dense_call(SB_OP_dense_fwd, n, C, 4 * C),
        dense_call(SB_OP_dense_fwd, n, C, g->vocab),
        dense_call(SB_OP_dense_fwd, n, C, g->qkv_width),
        (sb_op_call){.op = SB_OP_attention_fwd, .attn = attn_shape(g, g->batch, g->context)},
        (sb_op_call){.op = SB_OP_embedding_fwd,
                     .embed = {.n = n, .t = g->context, .vocab = g->vocab, .c = C}},
        norm_call(SB_OP_layernorm_fwd, n, C),
        rope_call(g, SB_OP_rope_fwd, n, g->context),
    };
    const size_t checked = sizeof calls / sizeof calls[0] - (g->arch.position == SB_GPT_ROPE ? 0 : 1);
    for (size_t i = 0; i < checked; i++)
        if (sb_op_call_describe(&calls[i]) != SB_OK)
            return false;
    return true;
}

sb_status sb_gpt_alloc(sb_gpt *g, const sb_kernel_table *k, const sb_train_config *cfg,
                       int vocab)
{
    memset(g, 0, sizeof *g);
    const sb_gpt_config *c = &cfg->gpt;
    if (c->layers < 1 || c->layers > SB_GPT_MAX_LAYERS || c->heads < 1 || c->width < 1 ||
        c->width % c->heads != 0 || c->context < 1 || cfg->batch < 1 || vocab < 1 ||
        (int64_t)cfg->batch * c->context * 4 * c->width > ((int64_t)1 << 28))
        return SB_ERR_SHAPE;
    g->arch = c->block;
    const int kv = g->arch.kv_heads == 0 ? c->heads : g->arch.kv_heads;
    const int d = c->width / c->heads;
    if (kv < 1 || c->heads % kv != 0 || (g->arch.position == SB_GPT_ROPE && d % 2 != 0))
        return SB_ERR_SHAPE;
    if (!sb_data_parallel_config_ok(cfg))
        return SB_ERR_USAGE;
    g->k = k;
    g->cfg = cfg;
    g->layers = c->layers, g->heads = c->heads, g->width = c->width;
    g->context = c->context, g->vocab = vocab;
    g->batch = cfg->batch;
    g->rows = cfg->batch * c->context;
    g->arch.kv_heads = kv;
    g->qkv_width = (c->heads + 2 * kv) * d, g->qk_width = (c->heads + kv) * d;
    if (!shapes_ok(g))
        return SB_ERR_SHAPE;
    params_list(g);
    /* the gradient norm and the updates take every parameter as one vector */
    if (g->total > ((size_t)1 << 28))
        return SB_ERR_SHAPE;

    bool ok = true;
    g->params = floats(g->total, &ok);
    g->grads = floats(g->total, &ok);
    g->m = floats(g->total, &ok);
    g->v = floats(g->total, &ok);
    for (int i = 0; ok && i < g->n_params; i++)
        g->param[i].view.data = pw(g, i);

    const size_t n = (size_t)g->rows, C = (size_t)g->width, V = (size_t)vocab;
    const size_t QKV = (size_t)g->qkv_width, QK = (size_t)g->qk_width;
    const bool rope = g->arch.position == SB_GPT_ROPE, swiglu = g->arch.mlp == SB_GPT_SWIGLU;
    /* the absent wpe [context][C] and biases (at most the widest layer) */
    if (rope || g->arch.no_bias) {
        size_t z = (size_t)g->context * C;
        const size_t widths[] = {4 * C, V, QKV};
        for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
            z = widths[i] > z ? widths[i] : z;
        g->n_zeros = z;
        g->zeros = floats(z, &ok);
    }
    g->tokens = calloc(n, sizeof *g->tokens);
    g->targets = calloc(n, sizeof *g->targets);
    ok = ok && g->tokens && g->targets;
    g->embed = floats(n * C, &ok);
    for (int l = 0; l < g->layers; l++) {
        sb_gpt_block *b = &g->block[l];
        b->ln1 = floats(n * C, &ok), b->qkv = floats(n * QKV, &ok);
        b->attn = floats(n * C, &ok), b->proj = floats(n * C, &ok);
        b->res1 = floats(n * C, &ok), b->ln2 = floats(n * C, &ok);
        b->fc = floats(n * 4 * C, &ok), b->gelu = floats(n * 4 * C, &ok);
        b->fcproj = floats(n * C, &ok), b->res2 = floats(n * C, &ok);
        b->up = floats_if(swiglu, n * 4 * C, &ok);
        b->qk = floats_if(rope, n * QK, &ok), b->qk_rot = floats_if(rope, n * QK, &ok);
        b->rotated = floats_if(rope, n * QKV, &ok);
    }
    g->lnf = floats(n * C, &ok);
    g->logits = floats(n * V, &ok), g->prob = floats(n * V, &ok);
    for (int i = 0; i < 3; i++)
        g->dres[i] = floats(n * C, &ok);
    g->dln = floats(n * C, &ok), g->dattn = floats(n * C, &ok);
    g->dqkv = floats(n * QKV, &ok);
    g->dgelu = floats(n * 4 * C, &ok), g->dfc = floats(n * 4 * C, &ok);
    g->dup = floats_if(swiglu, n * 4 * C, &ok), g->dsum = floats_if(swiglu, n * C, &ok);
    g->dqk = floats_if(rope, n * QK, &ok), g->dqk_rot = floats_if(rope, n * QK, &ok);
    g->dlogits = floats(n * V, &ok);
    if (cfg->reduce != SB_REDUCE_NONE)
        ok = ok && sb_gpt_parallel_alloc(g);
    if (!ok) {
        sb_gpt_free(g);
        return SB_ERR_NOMEM;
    }
    return SB_OK;
}

void sb_gpt_free(sb_gpt *g)
{
    float *bufs[] = {g->params, g->grads, g->m, g->v, g->embed, g->lnf, g->logits, g->prob,
                     g->dres[0], g->dres[1], g->dres[2], g->dln, g->dattn, g->dqkv,
                     g->dgelu, g->dfc, g->dlogits, g->partials, g->zeros, g->dup, g->dsum,
                     g->dqk, g->dqk_rot};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    for (int l = 0; l < g->layers; l++) {
        sb_gpt_block *b = &g->block[l];
        float *acts[] = {b->ln1, b->qkv, b->attn, b->proj, b->res1, b->ln2, b->fc, b->gelu,
                         b->fcproj, b->res2, b->up, b->qk, b->qk_rot, b->rotated};
        for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
            free(acts[i]);
    }
    free(g->tokens);
    free(g->targets);
    memset(g, 0, sizeof *g);
}

/* ---- initialisation --------------------------------------------------------- */

void sb_gpt_init(sb_gpt *g, const sb_model_probe *p)
{
    /* GPT-2: the projections that write into the residual stream start
     * smaller, by 1/sqrt(2 layers), so the stream's variance does not grow
     * with depth. */
    const float std = 0.02f;
    const float residual_std = (float)(0.02 / sqrt(2.0 * g->layers));
    for (int i = 0; i < g->n_params; i++) {
        sb_gpt_param *q = &g->param[i];
        const char *last = strrchr(q->name, '.');
        const char *part = last ? last + 1 : q->name;
        uint32_t stream = SB_STREAM_INIT + (uint32_t)i;
        if (!q->decay) {
            /* biases and LN beta 0, LN gamma 1 */
            sb_init_constant(pw(g, i), q->count, strcmp(part, "w") == 0 ? 1.0f : 0.0f);
        } else {
            bool residual = strstr(q->name, ".proj.W") || strstr(q->name, ".fcproj.W");
            sb_init_normal(pw(g, i), q->count, residual ? residual_std : std, g->cfg->seed,
                           stream);
        }
        sb_model_probe_source(p, q->init_name, &q->view);
        q->latest = q->init_name;
        q->state_probes.probed = false;
    }
    if (g->zeros) {
        const sb_tensor z = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {(int64_t)g->n_zeros},
                             .data = g->zeros};
        sb_model_probe_source(p, ZEROS_PROBE, &z);
    }
}

/* ---- forward ---------------------------------------------------------------- */

/* dst[r][0..cols) = src[r][0..cols) for r < rows, rows ld_dst and ld_src
 * apart: the rotary path's moves of q and k into and out of the fused qkv
 * (exact, one writer per element). */
static void copy_columns(float *dst, size_t ld_dst, const float *src, size_t ld_src,
                         size_t rows, size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
    for (size_t r = 0; r < rows; r++)
        memcpy(dst + r * ld_dst, src + r * ld_src, cols * sizeof *dst);
}

/* The norm of x (probe x_name) over n rows into y: layer norm with gamma
 * w_param and beta b_param, or RMSNorm with gamma w_param. */
static void norm_forward(sb_gpt *g, const sb_model_probe *p, const char *name, int n,
                         float *y, float *x, const char *x_name, int w_param, int b_param)
{
    const int C = g->width;
    if (g->arch.norm == SB_GPT_RMSNORM) {
        run(g, p, norm_call(SB_OP_rmsnorm_fwd, n, C), name, PTRS(y), PTRS(x, pw(g, w_param)),
            NAMES(x_name, lw(g, w_param)));
        return;
    }
    run(g, p, norm_call(SB_OP_layernorm_fwd, n, C), name, PTRS(y),
        PTRS(x, pw(g, w_param), pw(g, b_param)),
        NAMES(x_name, lw(g, w_param), lw(g, b_param)));
}

/* y = x @ W + b over n rows (in -> out), b the constant zeros without a bias. */
static void dense_forward(sb_gpt *g, const sb_model_probe *p, const char *name, int n, int in,
                          int out, float *y, float *x, const char *x_name, int w_param,
                          int b_param)
{
    run(g, p, dense_call(SB_OP_dense_fwd, n, in, out), name, PTRS(y),
        PTRS(x, pw(g, w_param), pw_or_zeros(g, b_param)),
        NAMES(x_name, lw(g, w_param), lw_or_zeros(g, b_param)));
}

/* The rotary path's forward for block l over n = windows t rows: q and k
 * of b->qkv rotated (probe `rope`, from probe qkv) into b->rotated, with
 * qkv's v beside them. */
static void rope_forward(sb_gpt *g, int l, int n, int t, const char *rope, const char *qkv,
                         const sb_model_probe *p)
{
    sb_gpt_block *b = &g->block[l];
    const size_t QKV = (size_t)g->qkv_width, QK = (size_t)g->qk_width, rows = (size_t)n;
    copy_columns(b->qk, QK, b->qkv, QKV, rows, QK);
    run(g, p, rope_call(g, SB_OP_rope_fwd, n, t), rope, PTRS(b->qk_rot), PTRS(b->qk),
        NAMES(qkv));
    copy_columns(b->rotated, QKV, b->qk_rot, QK, rows, QK);
    copy_columns(b->rotated + QK, QKV, b->qkv + QK, QKV, rows, QKV - QK);
}

/* Block l on x (its input, probe x_name) over n rows of `windows` windows of t. */
static void block_forward(sb_gpt *g, int l, float *x, const char *x_name, int windows,
                          int t, pass ps, const sb_model_probe *p)
{
    const int n = windows * t, C = g->width;
    sb_gpt_block *b = &g->block[l];
    name_t ln1, qkv, rope, attn, proj, res1, ln2, fc, up, gelu, fcproj, res2;
    fwd_name(ln1, ps, l, "ln1"), fwd_name(qkv, ps, l, "qkv"), fwd_name(attn, ps, l, "attn");
    fwd_name(proj, ps, l, "proj"), fwd_name(res1, ps, l, "res1"), fwd_name(ln2, ps, l, "ln2");
    fwd_name(fc, ps, l, "fc"), fwd_name(fcproj, ps, l, "fcproj");
    fwd_name(res2, ps, l, "res2"), fwd_name(rope, ps, l, "rope"), fwd_name(up, ps, l, "up");
    fwd_name(gelu, ps, l, g->arch.mlp == SB_GPT_SWIGLU ? "swiglu" : "gelu");
    const size_t nc = (size_t)n * (size_t)C;

    norm_forward(g, p, ln1, n, b->ln1, x, x_name, bp(g, l, B_LN1_W), bp(g, l, B_LN1_B));
    dense_forward(g, p, qkv, n, C, g->qkv_width, b->qkv, b->ln1, ln1, bp(g, l, B_QKV_W),
                  bp(g, l, B_QKV_B));
    sb_op_call a = {.op = SB_OP_attention_fwd, .attn = attn_shape(g, windows, t)};
    if (g->arch.position == SB_GPT_ROPE) {
        rope_forward(g, l, n, t, rope, qkv, p);
        run(g, p, a, attn, PTRS(b->attn), PTRS(b->rotated), NAMES(rope, qkv));
    } else {
        run(g, p, a, attn, PTRS(b->attn), PTRS(b->qkv), NAMES(qkv));
    }
    dense_forward(g, p, proj, n, C, C, b->proj, b->attn, attn, bp(g, l, B_PROJ_W),
                  bp(g, l, B_PROJ_B));
    run(g, p, vec_call(SB_OP_residual_add, nc), res1, PTRS(b->res1), PTRS(x, b->proj),
        NAMES(x_name, proj));
    norm_forward(g, p, ln2, n, b->ln2, b->res1, res1, bp(g, l, B_LN2_W), bp(g, l, B_LN2_B));
    dense_forward(g, p, fc, n, C, 4 * C, b->fc, b->ln2, ln2, bp(g, l, B_FC_W),
                  bp(g, l, B_FC_B));
    if (g->arch.mlp == SB_GPT_SWIGLU) {
        dense_forward(g, p, up, n, C, 4 * C, b->up, b->ln2, ln2, bp(g, l, B_UP_W),
                      bp(g, l, B_UP_B));
        run(g, p, vec_call(SB_OP_swiglu_fwd, 4 * nc), gelu, PTRS(b->gelu), PTRS(b->fc, b->up),
            NAMES(fc, up));
    } else {
        run(g, p, vec_call(SB_OP_gelu_fwd, 4 * nc), gelu, PTRS(b->gelu), PTRS(b->fc),
            NAMES(fc));
    }
    dense_forward(g, p, fcproj, n, 4 * C, C, b->fcproj, b->gelu, gelu, bp(g, l, B_FCPROJ_W),
                  bp(g, l, B_FCPROJ_B));
    run(g, p, vec_call(SB_OP_residual_add, nc), res2, PTRS(b->res2), PTRS(b->res1, b->fcproj),
        NAMES(res1, fcproj));
}

void sb_gpt_forward(sb_gpt *g, int windows, int t, int eval_batch, float *logits,
                    const sb_model_probe *p)
{
    SB_ASSERT(windows >= 1 && windows <= g->batch && t >= 1 && t <= g->context);
    const int n = windows * t, C = g->width;
    const pass ps = {eval_batch};
    const bool train = eval_batch == SB_GPT_TRAIN;
    if (!logits)
        logits = g->logits;
    name_t tokens, embed, x_name, lnf, head;
    if (train)
        snprintf(tokens, sizeof tokens, "batch.tokens");
    else
        snprintf(tokens, sizeof tokens, "eval.b%d.tokens", eval_batch);
    fwd_name(embed, ps, -1, "wte");

    const int wte = other(g, P_WTE), wpe = other(g, P_WPE);
    sb_op_call e = {.op = SB_OP_embedding_fwd,
                    .embed = {.n = n, .t = t, .vocab = g->vocab, .c = C}};
    run(g, p, e, embed, PTRS(g->embed), PTRS(g->tokens, pw(g, wte), pw_or_zeros(g, wpe)),
        NAMES(tokens, lw(g, wte), lw_or_zeros(g, wpe)));
    float *x = g->embed;
    snprintf(x_name, sizeof x_name, "%s", embed);
    for (int l = 0; l < g->layers; l++) {
        block_forward(g, l, x, x_name, windows, t, ps, p);
        x = g->block[l].res2;
        fwd_name(x_name, ps, l, "res2");
    }
    fwd_name(lnf, ps, -1, "lnf");
    fwd_name(head, ps, -1, "head");
    norm_forward(g, p, lnf, n, g->lnf, x, x_name, other(g, P_LNF_W), other(g, P_LNF_B));
    dense_forward(g, p, head, n, C, g->vocab, logits, g->lnf, lnf, other(g, P_HEAD_W),
                  other(g, P_HEAD_B));
    if (!train)
        return;
    sb_op_call cls = {.op = SB_OP_softmax_fwd, .cls = {.n = n, .k = g->vocab}};
    run(g, p, cls, "softmax.fwd.prob", PTRS(g->prob), PTRS(logits), NAMES(head));
    cls.op = SB_OP_xent_loss;
    run(g, p, cls, "loss.fwd.loss", PTRS(&g->loss), PTRS(logits, g->targets),
        NAMES(head, "batch.targets"));
}

/* ---- backward --------------------------------------------------------------- */

/* The gradients of a dense layer (x [n][in] @ W [in][out] + b) from dy
 * (probes dy_names, one or two): <layer>.bwd.dW, .db (with a bias), and
 * .dx into dx. */
static void dense_backward(sb_gpt *g, const sb_model_probe *p, int block, const char *layer,
                           int w_param, int b_param, int n, int in, int out, float *dy,
                           const char *const dy_names[2], float *x, const char *x_name,
                           float *dx)
{
    name_t dx_name;
    const char *const with_x[] = {dy_names[0], x_name, dy_names[1]};
    const int n_with_x = dy_names[1] ? 3 : 2;
    sb_op_call c = dense_call(SB_OP_dense_bwd_weights, n, in, out);
    run(g, p, c, g->param[w_param].grad_name, PTRS(gw(g, w_param)), PTRS(dy, x), with_x,
        n_with_x);
    if (b_param >= 0) {
        c.op = SB_OP_dense_bwd_bias;
        run(g, p, c, g->param[b_param].grad_name, PTRS(gw(g, b_param)), PTRS(dy), dy_names,
            dy_names[1] ? 2 : 1);
    }
    if (!dx)
        return;
    const char *const with_w[] = {dy_names[0], lw(g, w_param), dy_names[1]};
    c.op = SB_OP_dense_bwd_data;
    run(g, p, c, bwd_name(dx_name, block, layer, "dx"), PTRS(dx), PTRS(dy, pw(g, w_param)),
        with_w, n_with_x);
}

#define ONE_NAME(a) ((const char *const[2]){(a), NULL})

/* The gradients of a norm of x with gamma w_param (and beta b_param for a
 * layer norm) from dy: <layer>.bwd.dx into dx, .dw, and .db (dense_bwd_bias:
 * the column sum). */
static void norm_backward(sb_gpt *g, const sb_model_probe *p, int block, const char *layer,
                          int w_param, int b_param, int n, float *dy, const char *dy_name,
                          float *x, const char *x_name, float *dx)
{
    const int C = g->width;
    const bool rms = g->arch.norm == SB_GPT_RMSNORM;
    name_t dx_name;
    run(g, p, norm_call(rms ? SB_OP_rmsnorm_bwd_data : SB_OP_layernorm_bwd_data, n, C),
        bwd_name(dx_name, block, layer, "dx"), PTRS(dx), PTRS(dy, x, pw(g, w_param)),
        NAMES(dy_name, x_name, lw(g, w_param)));
    run(g, p, norm_call(rms ? SB_OP_rmsnorm_bwd_gamma : SB_OP_layernorm_bwd_gamma, n, C),
        g->param[w_param].grad_name, PTRS(gw(g, w_param)), PTRS(dy, x), NAMES(dy_name, x_name));
    if (rms)
        return;
    run(g, p, dense_call(SB_OP_dense_bwd_bias, n, C, C), g->param[b_param].grad_name,
        PTRS(gw(g, b_param)), PTRS(dy), NAMES(dy_name));
}

/* The MLP half of block l backward from dout (probe dout_name): returns
 * the gradient at ln2's output, its probe name into d_ln2out. */
static float *mlp_backward(sb_gpt *g, int l, float *dout, const char *dout_name, int n,
                         const sb_model_probe *p, name_t d_ln2out)
{
    const int C = g->width;
    const size_t nc = (size_t)n * (size_t)C;
    const pass ps = {SB_GPT_TRAIN};
    sb_gpt_block *b = &g->block[l];
    name_t ln2, fc, up, act, d_fcproj, d_act, d_actb, d_up;
    fwd_name(ln2, ps, l, "ln2"), fwd_name(fc, ps, l, "fc"), fwd_name(up, ps, l, "up");
    bwd_name(d_fcproj, l, "fcproj", "dx");
    if (g->arch.mlp == SB_GPT_GELU) {
        fwd_name(act, ps, l, "gelu");
        dense_backward(g, p, l, "fcproj", bp(g, l, B_FCPROJ_W), bp(g, l, B_FCPROJ_B), n, 4 * C,
                       C, dout, ONE_NAME(dout_name), b->gelu, act, g->dgelu);
        run(g, p, vec_call(SB_OP_gelu_bwd, 4 * nc), bwd_name(d_act, l, "gelu", "dx"),
            PTRS(g->dfc), PTRS(g->dgelu, b->fc), NAMES(d_fcproj, fc));
        dense_backward(g, p, l, "fc", bp(g, l, B_FC_W), bp(g, l, B_FC_B), n, C, 4 * C, g->dfc,
                       ONE_NAME(d_act), b->ln2, ln2, g->dln);
        bwd_name(d_ln2out, l, "fc", "dx");
        return g->dln;
    }
    /* SwiGLU: gelu holds silu(fc) * up; fc's and up's input gradients add */
    fwd_name(act, ps, l, "swiglu");
    dense_backward(g, p, l, "fcproj", bp(g, l, B_FCPROJ_W), bp(g, l, B_FCPROJ_B), n, 4 * C, C,
                   dout, ONE_NAME(dout_name), b->gelu, act, g->dgelu);
    run(g, p, vec_call(SB_OP_swiglu_bwd_a, 4 * nc), bwd_name(d_act, l, "swiglu", "da"),
        PTRS(g->dfc), PTRS(g->dgelu, b->fc, b->up), NAMES(d_fcproj, fc, up));
    run(g, p, vec_call(SB_OP_swiglu_bwd_b, 4 * nc), bwd_name(d_actb, l, "swiglu", "db"),
        PTRS(g->dup), PTRS(g->dgelu, b->fc), NAMES(d_fcproj, fc));
    dense_backward(g, p, l, "fc", bp(g, l, B_FC_W), bp(g, l, B_FC_B), n, C, 4 * C, g->dfc,
                   ONE_NAME(d_act), b->ln2, ln2, g->dln);
    dense_backward(g, p, l, "up", bp(g, l, B_UP_W), bp(g, l, B_UP_B), n, C, 4 * C, g->dup,
                   ONE_NAME(d_actb), b->ln2, ln2, g->dsum);
    bwd_name(d_ln2out, l, "ln2", "dy");
    bwd_name(d_up, l, "up", "dx");
    name_t d_fc;
    bwd_name(d_fc, l, "fc", "dx");
    /* their sum into g->dup's first n C floats (up's gradient is spent) */
    run(g, p, vec_call(SB_OP_residual_add, nc), d_ln2out, PTRS(g->dup), PTRS(g->dln, g->dsum),
        NAMES(d_fc, d_up));
    return g->dup;
}

/* The attention half's qkv gradient of block l from g->dattn (probe
 * d_proj): into g->dqkv, the probes that hold it into dqkv_names. */
static void attention_backward(sb_gpt *g, int l, int windows, const char *d_proj,
                               const sb_model_probe *p, name_t d_attn, name_t d_rope)
{
    const int t = g->context, n = windows * t;
    const pass ps = {SB_GPT_TRAIN};
    sb_gpt_block *b = &g->block[l];
    name_t qkv, rope;
    fwd_name(qkv, ps, l, "qkv"), fwd_name(rope, ps, l, "rope");
    bwd_name(d_attn, l, "attn", "dx");
    sb_op_call a = {.op = SB_OP_attention_bwd, .attn = attn_shape(g, windows, t)};
    if (g->arch.position == SB_GPT_LEARNED) {
        run(g, p, a, d_attn, PTRS(g->dqkv), PTRS(g->dattn, b->qkv), NAMES(d_proj, qkv));
        d_rope[0] = '\0';
        return;
    }
    run(g, p, a, d_attn, PTRS(g->dqkv), PTRS(g->dattn, b->rotated), NAMES(d_proj, rope, qkv));
    /* the rotation is linear: its gradient rotates back dq and dk */
    const size_t QKV = (size_t)g->qkv_width, QK = (size_t)g->qk_width, rows = (size_t)n;
    copy_columns(g->dqk, QK, g->dqkv, QKV, rows, QK);
    run(g, p, rope_call(g, SB_OP_rope_bwd, n, t), bwd_name(d_rope, l, "rope", "dx"),
        PTRS(g->dqk_rot), PTRS(g->dqk), NAMES(d_attn));
    copy_columns(g->dqkv, QKV, g->dqk_rot, QK, rows, QK);
}

/* Block l backward from dout, the gradient at its output (probe dout_name);
 * din gets the gradient at its input, probe h<l>.res1.bwd.dx. */
static void block_backward(sb_gpt *g, int l, float *x, const char *x_name,
                           float *dout, const char *dout_name, float *dmid, float *din,
                           int windows, const sb_model_probe *p)
{
    const int t = g->context, n = windows * t, C = g->width;
    const size_t nc = (size_t)n * (size_t)C;
    const pass ps = {SB_GPT_TRAIN};
    sb_gpt_block *b = &g->block[l];
    name_t ln1, attn, res1;
    fwd_name(ln1, ps, l, "ln1"), fwd_name(attn, ps, l, "attn"), fwd_name(res1, ps, l, "res1");
    name_t d_ln2out, d_ln2, d_mid, d_proj, d_attn, d_rope, d_qkv, d_ln1, d_in;
    bwd_name(d_ln2, l, "ln2", "dx");
    bwd_name(d_mid, l, "res2", "dx"), bwd_name(d_proj, l, "proj", "dx");
    bwd_name(d_qkv, l, "qkv", "dx");
    bwd_name(d_ln1, l, "ln1", "dx"), bwd_name(d_in, l, "res1", "dx");

    /* MLP half: res2 = res1 + fcproj(mlp(ln2(res1))) */
    float *dln2 = mlp_backward(g, l, dout, dout_name, n, p, d_ln2out);
    norm_backward(g, p, l, "ln2", bp(g, l, B_LN2_W), bp(g, l, B_LN2_B), n, dln2, d_ln2out,
                  b->res1, res1, g->dattn);
    /* the gradient at res1: through the residual, plus through ln2 */
    run(g, p, vec_call(SB_OP_residual_add, nc), d_mid, PTRS(dmid), PTRS(dout, g->dattn),
        NAMES(dout_name, d_ln2));

    /* attention half: res1 = x + proj(attn(qkv(ln1(x)))) */
    dense_backward(g, p, l, "proj", bp(g, l, B_PROJ_W), bp(g, l, B_PROJ_B), n, C, C, dmid,
                   ONE_NAME(d_mid), b->attn, attn, g->dattn);
    attention_backward(g, l, windows, d_proj, p, d_attn, d_rope);
    const char *const dqkv_names[2] = {d_rope[0] ? d_rope : d_attn, d_rope[0] ? d_attn : NULL};
    dense_backward(g, p, l, "qkv", bp(g, l, B_QKV_W), bp(g, l, B_QKV_B), n, C, g->qkv_width,
                   g->dqkv, dqkv_names, b->ln1, ln1, g->dln);
    norm_backward(g, p, l, "ln1", bp(g, l, B_LN1_W), bp(g, l, B_LN1_B), n, g->dln, d_qkv, x,
                  x_name, g->dattn);
    run(g, p, vec_call(SB_OP_residual_add, nc), d_in, PTRS(din), PTRS(dmid, g->dattn),
        NAMES(d_mid, d_ln1));
}

void sb_gpt_backward(sb_gpt *g, int windows, const sb_model_probe *p)
{
    const int t = g->context, n = windows * t, C = g->width, L = g->layers;
    const pass ps = {SB_GPT_TRAIN};
    name_t lnf, x_name, dout_name, d_head, d_lnf;
    fwd_name(lnf, ps, -1, "lnf");
    sb_op_call cls = {.op = SB_OP_softmax_xent_bwd,
                      .cls = {.n = n, .k = g->vocab, .mean_over = g->mean_over}};
    run(g, p, cls, "loss.bwd.dlogits", PTRS(g->dlogits), PTRS(g->prob, g->targets),
        NAMES("softmax.fwd.prob", "batch.targets"));

    dense_backward(g, p, -1, "head", other(g, P_HEAD_W), other(g, P_HEAD_B), n, C, g->vocab,
                   g->dlogits, ONE_NAME("loss.bwd.dlogits"), g->lnf, lnf, g->dln);
    float *x_last = g->block[L - 1].res2;
    fwd_name(x_name, ps, L - 1, "res2");
    norm_backward(g, p, -1, "lnf", other(g, P_LNF_W), other(g, P_LNF_B), n, g->dln,
                  bwd_name(d_head, -1, "head", "dx"), x_last, x_name, g->dres[0]);
    bwd_name(d_lnf, -1, "lnf", "dx");

    /* the gradient at each block's output, its middle and its input rotate
     * through three buffers */
    int out = 0;
    snprintf(dout_name, sizeof dout_name, "%s", d_lnf);
    for (int l = L - 1; l >= 0; l--) {
        float *x = l > 0 ? g->block[l - 1].res2 : g->embed;
        if (l > 0)
            fwd_name(x_name, ps, l - 1, "res2");
        else
            fwd_name(x_name, ps, -1, "wte");
        int mid = (out + 1) % 3, in = (out + 2) % 3;
        block_backward(g, l, x, x_name, g->dres[out], dout_name, g->dres[mid], g->dres[in],
                       windows, p);
        bwd_name(dout_name, l, "res1", "dx");
        out = in;
    }

    const int wte = other(g, P_WTE), wpe = other(g, P_WPE);
    sb_op_call e = {.op = SB_OP_embedding_bwd_tokens,
                    .embed = {.n = n, .t = t, .vocab = g->vocab, .c = C}};
    run(g, p, e, g->param[wte].grad_name, PTRS(gw(g, wte)), PTRS(g->dres[out], g->tokens),
        NAMES(dout_name, "batch.tokens"));
    if (wpe < 0)
        return;
    e.op = SB_OP_embedding_bwd_pos;
    run(g, p, e, g->param[wpe].grad_name, PTRS(gw(g, wpe)), PTRS(g->dres[out]),
        NAMES(dout_name));
}

/* ---- update ----------------------------------------------------------------- */

/* The parameters as parts of one AdamW update (adamw_parts.h), and, when
 * the probes take leaf digests, the room for them, returned (to be freed). */
static sb_leaf_digest *update_parts(const sb_gpt *g, const sb_model_probe *p,
                                    sb_adamw_part *parts)
{
    size_t leaves = 0;
    for (int i = 0; i < g->n_params; i++) {
        const sb_gpt_param *q = &g->param[i];
        parts[i] = (sb_adamw_part){.offset = q->offset, .count = q->count, .decay = q->decay};
        leaves += sb_adamw_part_leaves(q->count);
    }
    if (!p->hook || !p->leaf_hash)
        return NULL;
    sb_leaf_digest *d = malloc(3 * leaves * sizeof *d);
    SB_ASSERT(d != NULL);
    sb_leaf_digest *next = d;
    for (int i = 0; i < g->n_params; i++)
        for (int j = 0; j < 3; j++) {
            parts[i].leaves[j] = next;
            next += sb_adamw_part_leaves(parts[i].count);
        }
    return d;
}

void sb_gpt_update(sb_gpt *g, const sb_model_probe *p)
{
    /* The global norm over the one gradient buffer, named by every gradient
     * probe (SB_GPT_MAX_LAYERS keeps them within a record's inputs). */
    const char *grad_names[SB_GPT_MAX_PARAMS];
    for (int i = 0; i < g->n_params; i++)
        grad_names[i] = g->param[i].grad_probe;
    sb_op_call c = vec_call(SB_OP_grad_norm, g->total);
    run(g, p, c, "gradnorm.fwd.norm", PTRS(&g->norm), PTRS(g->grads), grad_names, g->n_params);

    /* torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6)
     * when that is below 1, in float as PyTorch computes it */
    float scale = 1.0f;
    if (g->cfg->gpt.clip > 0.0f) {
        float coef = g->cfg->gpt.clip / (g->norm + 1e-6f);
        scale = coef < 1.0f ? coef : 1.0f;
    }
    const int64_t t = g->ctr.optim_t + 1; /* AdamW counts steps from 1 */
    int32_t t_held;
    const char *t_name = sb_model_probe_step(p, SB_OPTIM_ADAMW, t, &t_held);
    sb_optim_params o = g->cfg->optim;
    o.grad_scale = scale;
    sb_leaf_digest *digests = NULL;
    sb_adamw_part parts[SB_GPT_MAX_PARAMS];
    const bool fused = g->k->adamw_update == sb_adamw_update_det;
    if (fused) {
        /* det's (and loose's) kernel: every parameter in one region */
        digests = update_parts(g, p, parts);
        sb_model_op_start(p, g->param[0].update_name, SB_OP_adamw_update);
        sb_adamw_update_parts(g->params, g->m, g->v, g->grads, &o, t, parts, g->n_params,
                              p->hook ? p->leaf_hash : NULL);
    }
    for (int i = 0; i < g->n_params; i++) {
        sb_gpt_param *q = &g->param[i];
        c = vec_call(SB_OP_adamw_update, q->count);
        c.optim = o;
        /* weight decay on matrices only: not on biases or LN parameters */
        if (!q->decay)
            c.optim.weight_decay = 0.0f;
        c.t = t;
        /* The parameter and its moments are updated in place: the probes
         * name the gradient, the parameter's previous value, the norm the
         * scale came from, the step and the moments' previous values
         * (sb_model_probe_update); the live input is the gradient. */
        void *const out[] = {pw(g, i), g->m + q->offset, g->v + q->offset};
        if (fused) {
            sb_model_bind(&c, out, PTRS(gw(g, i)));
        } else {
            sb_model_op_start(p, q->update_name, c.op);
            sb_model_call(g->k, &c, out, PTRS(gw(g, i)));
        }
        sb_model_probe_update(p, q->update_name, &q->state_probes, &c,
                              NAMES(q->grad_probe, q->latest, "gradnorm.fwd.norm", t_name),
                              digests ? parts[i].leaves : NULL);
        q->latest = q->update_name;
    }
    free(digests);
    g->ctr.optim_t++;
}

void sb_gpt_state(sb_gpt *g, sb_train_state *s)
{
    s->ctr = g->ctr;
    s->tensor[0] = (sb_train_tensor){"params", g->params, g->total};
    s->tensor[1] = (sb_train_tensor){"adamw.m", g->m, g->total};
    s->tensor[2] = (sb_train_tensor){"adamw.v", g->v, g->total};
    s->n_tensors = 3;
}

void sb_gpt_resumed(sb_gpt *g)
{
    for (int i = 0; i < g->n_params; i++) {
        g->param[i].latest = g->param[i].update_name;
        g->param[i].state_probes.probed = true;
    }
}
