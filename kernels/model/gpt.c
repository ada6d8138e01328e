/* The character-level GPT, one op call per layer, a probe right after every
 * op (the probe list is in README.md). Probe names are
 * "<layer>.<pass>.<tensor>"; a probe's inputs name the probes that hold the
 * op's actual inputs, a parameter by its latest probe (init.* before the
 * first update, adamw.* after). Random streams: SB_STREAM_INIT + the
 * parameter's index in the parameter buffer. */
#include <math.h>
#include <string.h>

#include "data_parallel.h"
#include "gpt.h"
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

/* Runs c on the model's kernels and probes its output. */
static void run(const sb_gpt *g, const sb_model_probe *p, sb_op_call c, const char *name,
                void *const out[], void *const in[], const char *const in_names[],
                int n_names)
{
    sb_model_op_start(p, name, c.op);
    sb_model_call(g->k, &c, out, in);
    sb_model_probe_op(p, name, &c, 0, in_names, n_names, NULL);
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

/* Parameter indices within the parameter list. */
enum { P_WTE, P_WPE, P_FIRST_BLOCK };
enum {
    B_LN1_W, B_LN1_B, B_QKV_W, B_QKV_B, B_PROJ_W, B_PROJ_B,
    B_LN2_W, B_LN2_B, B_FC_W, B_FC_B, B_FCPROJ_W, B_FCPROJ_B,
};
static int bp(int block, int which)
{
    return P_FIRST_BLOCK + block * SB_GPT_BLOCK_PARAMS + which;
}
/* lnf w, lnf b, head W, head b follow the blocks. */
static int tail_param(const sb_gpt *g, int which)
{
    return P_FIRST_BLOCK + g->layers * SB_GPT_BLOCK_PARAMS + which;
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

/* Appends parameter `name` of shape d0 x d1 (d1 = 0: a vector); its gradient
 * probe is <layer>.bwd.<grad> with layer the name's part before its last dot. */
static void param_add(sb_gpt *g, const char *name, int64_t d0, int64_t d1, bool decay,
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
}

static void params_list(sb_gpt *g)
{
    const int C = g->width;
    param_add(g, "wte", g->vocab, C, true, "dW");
    param_add(g, "wpe", g->context, C, true, "dW");
    for (int l = 0; l < g->layers; l++) {
        char n[SB_GPT_NAME_SIZE];
#define BLOCK_PARAM(part, d0, d1, decay, grad)                                 \
    snprintf(n, sizeof n, "h%d." part, l);                                     \
    param_add(g, n, d0, d1, decay, grad)
        BLOCK_PARAM("ln1.w", C, 0, false, "dw");
        BLOCK_PARAM("ln1.b", C, 0, false, "db");
        BLOCK_PARAM("qkv.W", C, 3 * C, true, "dW");
        BLOCK_PARAM("qkv.b", 3 * C, 0, false, "db");
        BLOCK_PARAM("proj.W", C, C, true, "dW");
        BLOCK_PARAM("proj.b", C, 0, false, "db");
        BLOCK_PARAM("ln2.w", C, 0, false, "dw");
        BLOCK_PARAM("ln2.b", C, 0, false, "db");
        BLOCK_PARAM("fc.W", C, 4 * C, true, "dW");
        BLOCK_PARAM("fc.b", 4 * C, 0, false, "db");
        BLOCK_PARAM("fcproj.W", 4 * C, C, true, "dW");
        BLOCK_PARAM("fcproj.b", C, 0, false, "db");
#undef BLOCK_PARAM
    }
    param_add(g, "lnf.w", C, 0, false, "dw");
    param_add(g, "lnf.b", C, 0, false, "db");
    param_add(g, "head.W", C, g->vocab, true, "dW");
    param_add(g, "head.b", g->vocab, 0, false, "db");
}

static float *floats(size_t n, bool *ok)
{
    float *f = sb_floats_try(n);
    if (f)
        memset(f, 0, n * sizeof *f);
    *ok = *ok && f != NULL;
    return f;
}

/* Describes the largest op calls once, so that an absurd size is an error
 * here and never an assertion later. */
static bool shapes_ok(const sb_gpt *g)
{
    const int n = g->rows, C = g->width;
    sb_op_call calls[] = {
        dense_call(SB_OP_dense_fwd, n, C, 4 * C),
        dense_call(SB_OP_dense_fwd, n, C, g->vocab),
        (sb_op_call){.op = SB_OP_attention_fwd,
                     .attn = {.b = g->batch, .t = g->context, .h = g->heads,
                              .d = C / g->heads}},
        (sb_op_call){.op = SB_OP_embedding_fwd,
                     .embed = {.n = n, .t = g->context, .vocab = g->vocab, .c = C}},
        norm_call(SB_OP_layernorm_fwd, n, C),
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
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
    if (!sb_data_parallel_config_ok(cfg))
        return SB_ERR_USAGE;
    g->k = k;
    g->cfg = cfg;
    g->layers = c->layers, g->heads = c->heads, g->width = c->width;
    g->context = c->context, g->vocab = vocab;
    g->batch = cfg->batch;
    g->rows = cfg->batch * c->context;
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
    g->tokens = calloc(n, sizeof *g->tokens);
    g->targets = calloc(n, sizeof *g->targets);
    ok = ok && g->tokens && g->targets;
    g->embed = floats(n * C, &ok);
    for (int l = 0; l < g->layers; l++) {
        sb_gpt_block *b = &g->block[l];
        b->ln1 = floats(n * C, &ok), b->qkv = floats(n * 3 * C, &ok);
        b->attn = floats(n * C, &ok), b->proj = floats(n * C, &ok);
        b->res1 = floats(n * C, &ok), b->ln2 = floats(n * C, &ok);
        b->fc = floats(n * 4 * C, &ok), b->gelu = floats(n * 4 * C, &ok);
        b->fcproj = floats(n * C, &ok), b->res2 = floats(n * C, &ok);
    }
    g->lnf = floats(n * C, &ok);
    g->logits = floats(n * V, &ok), g->prob = floats(n * V, &ok);
    for (int i = 0; i < 3; i++)
        g->dres[i] = floats(n * C, &ok);
    g->dln = floats(n * C, &ok), g->dattn = floats(n * C, &ok);
    g->dqkv = floats(n * 3 * C, &ok);
    g->dgelu = floats(n * 4 * C, &ok), g->dfc = floats(n * 4 * C, &ok);
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
                     g->dgelu, g->dfc, g->dlogits, g->partials};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    for (int l = 0; l < g->layers; l++) {
        sb_gpt_block *b = &g->block[l];
        float *acts[] = {b->ln1, b->qkv, b->attn, b->proj, b->res1,
                         b->ln2, b->fc, b->gelu, b->fcproj, b->res2};
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
}

/* ---- forward ---------------------------------------------------------------- */

/* Block l on x (its input, probe x_name) over n rows of `windows` windows of t. */
static void block_forward(sb_gpt *g, int l, float *x, const char *x_name, int windows,
                          int t, pass ps, const sb_model_probe *p)
{
    const int n = windows * t, C = g->width;
    sb_gpt_block *b = &g->block[l];
    name_t ln1, qkv, attn, proj, res1, ln2, fc, gelu, fcproj, res2;
    fwd_name(ln1, ps, l, "ln1"), fwd_name(qkv, ps, l, "qkv"), fwd_name(attn, ps, l, "attn");
    fwd_name(proj, ps, l, "proj"), fwd_name(res1, ps, l, "res1"), fwd_name(ln2, ps, l, "ln2");
    fwd_name(fc, ps, l, "fc"), fwd_name(gelu, ps, l, "gelu"), fwd_name(fcproj, ps, l, "fcproj");
    fwd_name(res2, ps, l, "res2");
    const size_t nc = (size_t)n * (size_t)C;

    run(g, p, norm_call(SB_OP_layernorm_fwd, n, C), ln1, PTRS(b->ln1),
        PTRS(x, pw(g, bp(l, B_LN1_W)), pw(g, bp(l, B_LN1_B))),
        NAMES(x_name, lw(g, bp(l, B_LN1_W)), lw(g, bp(l, B_LN1_B))));
    run(g, p, dense_call(SB_OP_dense_fwd, n, C, 3 * C), qkv, PTRS(b->qkv),
        PTRS(b->ln1, pw(g, bp(l, B_QKV_W)), pw(g, bp(l, B_QKV_B))),
        NAMES(ln1, lw(g, bp(l, B_QKV_W)), lw(g, bp(l, B_QKV_B))));
    sb_op_call a = {.op = SB_OP_attention_fwd,
                    .attn = {.b = windows, .t = t, .h = g->heads, .d = C / g->heads}};
    run(g, p, a, attn, PTRS(b->attn), PTRS(b->qkv), NAMES(qkv));
    run(g, p, dense_call(SB_OP_dense_fwd, n, C, C), proj, PTRS(b->proj),
        PTRS(b->attn, pw(g, bp(l, B_PROJ_W)), pw(g, bp(l, B_PROJ_B))),
        NAMES(attn, lw(g, bp(l, B_PROJ_W)), lw(g, bp(l, B_PROJ_B))));
    run(g, p, vec_call(SB_OP_residual_add, nc), res1, PTRS(b->res1), PTRS(x, b->proj),
        NAMES(x_name, proj));
    run(g, p, norm_call(SB_OP_layernorm_fwd, n, C), ln2, PTRS(b->ln2),
        PTRS(b->res1, pw(g, bp(l, B_LN2_W)), pw(g, bp(l, B_LN2_B))),
        NAMES(res1, lw(g, bp(l, B_LN2_W)), lw(g, bp(l, B_LN2_B))));
    run(g, p, dense_call(SB_OP_dense_fwd, n, C, 4 * C), fc, PTRS(b->fc),
        PTRS(b->ln2, pw(g, bp(l, B_FC_W)), pw(g, bp(l, B_FC_B))),
        NAMES(ln2, lw(g, bp(l, B_FC_W)), lw(g, bp(l, B_FC_B))));
    run(g, p, vec_call(SB_OP_gelu_fwd, 4 * nc), gelu, PTRS(b->gelu), PTRS(b->fc), NAMES(fc));
    run(g, p, dense_call(SB_OP_dense_fwd, n, 4 * C, C), fcproj, PTRS(b->fcproj),
        PTRS(b->gelu, pw(g, bp(l, B_FCPROJ_W)), pw(g, bp(l, B_FCPROJ_B))),
        NAMES(gelu, lw(g, bp(l, B_FCPROJ_W)), lw(g, bp(l, B_FCPROJ_B))));
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

    sb_op_call e = {.op = SB_OP_embedding_fwd,
                    .embed = {.n = n, .t = t, .vocab = g->vocab, .c = C}};
    run(g, p, e, embed, PTRS(g->embed), PTRS(g->tokens, pw(g, P_WTE), pw(g, P_WPE)),
        NAMES(tokens, lw(g, P_WTE), lw(g, P_WPE)));
    float *x = g->embed;
    snprintf(x_name, sizeof x_name, "%s", embed);
    for (int l = 0; l < g->layers; l++) {
        block_forward(g, l, x, x_name, windows, t, ps, p);
        x = g->block[l].res2;
        fwd_name(x_name, ps, l, "res2");
    }
    fwd_name(lnf, ps, -1, "lnf");
    fwd_name(head, ps, -1, "head");
    const int lw_ = tail_param(g, 0), lb = tail_param(g, 1);
    const int hw = tail_param(g, 2), hb = tail_param(g, 3);
    run(g, p, norm_call(SB_OP_layernorm_fwd, n, C), lnf, PTRS(g->lnf),
        PTRS(x, pw(g, lw_), pw(g, lb)), NAMES(x_name, lw(g, lw_), lw(g, lb)));
    run(g, p, dense_call(SB_OP_dense_fwd, n, C, g->vocab), head, PTRS(logits),
        PTRS(g->lnf, pw(g, hw), pw(g, hb)), NAMES(lnf, lw(g, hw), lw(g, hb)));
    if (!train)
        return;
    sb_op_call cls = {.op = SB_OP_softmax_fwd, .cls = {.n = n, .k = g->vocab}};
    run(g, p, cls, "softmax.fwd.prob", PTRS(g->prob), PTRS(logits), NAMES(head));
    cls.op = SB_OP_xent_loss;
    run(g, p, cls, "loss.fwd.loss", PTRS(&g->loss), PTRS(logits, g->targets),
        NAMES(head, "batch.targets"));
}

/* ---- backward --------------------------------------------------------------- */

/* The three gradients of a dense layer (x [n][in] @ W [in][out] + b) from dy:
 * <layer>.bwd.dW, .db, and .dx into dx. */
static void dense_backward(sb_gpt *g, const sb_model_probe *p, int block, const char *layer,
                           int w_param, int n, int in, int out, float *dy,
                           const char *dy_name, float *x, const char *x_name, float *dx)
{
    name_t dx_name;
    sb_op_call c = dense_call(SB_OP_dense_bwd_weights, n, in, out);
    run(g, p, c, g->param[w_param].grad_name, PTRS(gw(g, w_param)), PTRS(dy, x),
        NAMES(dy_name, x_name));
    c.op = SB_OP_dense_bwd_bias;
    run(g, p, c, g->param[w_param + 1].grad_name, PTRS(gw(g, w_param + 1)), PTRS(dy),
        NAMES(dy_name));
    if (!dx)
        return;
    c.op = SB_OP_dense_bwd_data;
    run(g, p, c, bwd_name(dx_name, block, layer, "dx"), PTRS(dx), PTRS(dy, pw(g, w_param)),
        NAMES(dy_name, lw(g, w_param)));
}

/* The three gradients of a layer norm of x with gamma w_param from dy:
 * <layer>.bwd.dx into dx, .dw, and .db (dense_bwd_bias: the column sum). */
static void norm_backward(sb_gpt *g, const sb_model_probe *p, int block, const char *layer,
                          int w_param, int n, float *dy, const char *dy_name,
                          float *x, const char *x_name, float *dx)
{
    const int C = g->width;
    name_t dx_name;
    run(g, p, norm_call(SB_OP_layernorm_bwd_data, n, C), bwd_name(dx_name, block, layer, "dx"),
        PTRS(dx), PTRS(dy, x, pw(g, w_param)), NAMES(dy_name, x_name, lw(g, w_param)));
    run(g, p, norm_call(SB_OP_layernorm_bwd_gamma, n, C), g->param[w_param].grad_name,
        PTRS(gw(g, w_param)), PTRS(dy, x), NAMES(dy_name, x_name));
    run(g, p, dense_call(SB_OP_dense_bwd_bias, n, C, C), g->param[w_param + 1].grad_name,
        PTRS(gw(g, w_param + 1)), PTRS(dy), NAMES(dy_name));
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
    name_t ln1, qkv, attn, res1, ln2, fc, gelu;
    fwd_name(ln1, ps, l, "ln1"), fwd_name(qkv, ps, l, "qkv"), fwd_name(attn, ps, l, "attn");
    fwd_name(res1, ps, l, "res1"), fwd_name(ln2, ps, l, "ln2"), fwd_name(fc, ps, l, "fc");
    fwd_name(gelu, ps, l, "gelu");
    name_t d_fcproj, d_gelu, d_fc, d_ln2, d_mid, d_proj, d_attn, d_qkv, d_ln1, d_in;
    bwd_name(d_fcproj, l, "fcproj", "dx"), bwd_name(d_gelu, l, "gelu", "dx");
    bwd_name(d_fc, l, "fc", "dx"), bwd_name(d_ln2, l, "ln2", "dx");
    bwd_name(d_mid, l, "res2", "dx"), bwd_name(d_proj, l, "proj", "dx");
    bwd_name(d_attn, l, "attn", "dx"), bwd_name(d_qkv, l, "qkv", "dx");
    bwd_name(d_ln1, l, "ln1", "dx"), bwd_name(d_in, l, "res1", "dx");

    /* MLP half: res2 = res1 + fcproj(gelu(fc(ln2(res1)))) */
    dense_backward(g, p, l, "fcproj", bp(l, B_FCPROJ_W), n, 4 * C, C, dout, dout_name, b->gelu,
                   gelu, g->dgelu);
    run(g, p, vec_call(SB_OP_gelu_bwd, 4 * nc), d_gelu, PTRS(g->dfc), PTRS(g->dgelu, b->fc),
        NAMES(d_fcproj, fc));
    dense_backward(g, p, l, "fc", bp(l, B_FC_W), n, C, 4 * C, g->dfc, d_gelu, b->ln2, ln2,
                   g->dln);
    norm_backward(g, p, l, "ln2", bp(l, B_LN2_W), n, g->dln, d_fc, b->res1, res1, g->dattn);
    /* the gradient at res1: through the residual, plus through ln2 */
    run(g, p, vec_call(SB_OP_residual_add, nc), d_mid, PTRS(dmid), PTRS(dout, g->dattn),
        NAMES(dout_name, d_ln2));

    /* attention half: res1 = x + proj(attn(qkv(ln1(x)))) */
    dense_backward(g, p, l, "proj", bp(l, B_PROJ_W), n, C, C, dmid, d_mid, b->attn, attn,
                   g->dattn);
    sb_op_call a = {.op = SB_OP_attention_bwd,
                    .attn = {.b = windows, .t = t, .h = g->heads, .d = C / g->heads}};
    run(g, p, a, d_attn, PTRS(g->dqkv), PTRS(g->dattn, b->qkv), NAMES(d_proj, qkv));
    dense_backward(g, p, l, "qkv", bp(l, B_QKV_W), n, C, 3 * C, g->dqkv, d_attn, b->ln1, ln1,
                   g->dln);
    norm_backward(g, p, l, "ln1", bp(l, B_LN1_W), n, g->dln, d_qkv, x, x_name, g->dattn);
    run(g, p, vec_call(SB_OP_residual_add, nc), d_in, PTRS(din), PTRS(dmid, g->dattn),
        NAMES(d_mid, d_ln1));
}

void sb_gpt_backward(sb_gpt *g, int windows, const sb_model_probe *p)
{
    const int t = g->context, n = windows * t, C = g->width, L = g->layers;
    const pass ps = {SB_GPT_TRAIN};
    name_t lnf, head, x_name, dout_name, d_head, d_lnf;
    fwd_name(lnf, ps, -1, "lnf");
    fwd_name(head, ps, -1, "head");
    sb_op_call cls = {.op = SB_OP_softmax_xent_bwd,
                      .cls = {.n = n, .k = g->vocab, .mean_over = g->mean_over}};
    run(g, p, cls, "loss.bwd.dlogits", PTRS(g->dlogits), PTRS(g->prob, g->targets),
        NAMES("softmax.fwd.prob", "batch.targets"));

    const int lw_ = tail_param(g, 0), hw = tail_param(g, 2);
    dense_backward(g, p, -1, "head", hw, n, C, g->vocab, g->dlogits, "loss.bwd.dlogits",
                   g->lnf, lnf, g->dln);
    float *x_last = g->block[L - 1].res2;
    fwd_name(x_name, ps, L - 1, "res2");
    norm_backward(g, p, -1, "lnf", lw_, n, g->dln, bwd_name(d_head, -1, "head", "dx"), x_last,
                  x_name, g->dres[0]);
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

    sb_op_call e = {.op = SB_OP_embedding_bwd_tokens,
                    .embed = {.n = n, .t = t, .vocab = g->vocab, .c = C}};
    run(g, p, e, g->param[P_WTE].grad_name, PTRS(gw(g, P_WTE)), PTRS(g->dres[out], g->tokens),
        NAMES(dout_name, "batch.tokens"));
    e.op = SB_OP_embedding_bwd_pos;
    run(g, p, e, g->param[P_WPE].grad_name, PTRS(gw(g, P_WPE)), PTRS(g->dres[out]),
        NAMES(dout_name));
}

/* ---- update ----------------------------------------------------------------- */

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
    for (int i = 0; i < g->n_params; i++) {
        sb_gpt_param *q = &g->param[i];
        c = vec_call(SB_OP_adamw_update, q->count);
        c.optim = g->cfg->optim;
        c.optim.grad_scale = scale;
        /* weight decay on matrices only: not on biases or LN parameters */
        if (!q->decay)
            c.optim.weight_decay = 0.0f;
        c.t = t;
        /* The parameter and its moments are updated in place: the probes
         * name the gradient, the parameter's previous value, the norm the
         * scale came from, the step and the moments' previous values
         * (sb_model_probe_update); the live input is the gradient. */
        sb_model_op_start(p, q->update_name, c.op);
        sb_model_call(g->k, &c, PTRS(pw(g, i), g->m + q->offset, g->v + q->offset),
                      PTRS(gw(g, i)));
        sb_model_probe_update(p, q->update_name, &q->state_probes, &c,
                              NAMES(q->grad_probe, q->latest, "gradnorm.fwd.norm", t_name),
                              NULL);
        q->latest = q->update_name;
    }
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
