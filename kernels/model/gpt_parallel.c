/* The data-parallel training step of the GPT (sb_model.h, sb_grad_reduce;
 * the combine is data_parallel.c's).
 *
 * Every rank holds the whole global batch of windows (their starts are drawn
 * from the seed and the step, never from the rank count). A pass over
 * windows [first, first + windows) runs the usual forward and backward on a
 * view of the model whose per-row buffers start at that window's first row
 * and whose gradient buffer is a row of g->partials; the loss gradient is
 * divided by the global row count, windows * context (mean_over), so that
 * the partial gradients add up to the batch's gradient. Every op of a pass
 * but the parameter gradients' reductions is per row or per window, so a
 * chunk's rows come out as they would in a pass over the whole batch.
 *
 * The passes are not probed (what a rank computes depends on the rank
 * count); the step's probes are allreduce.<param>, the combined gradients. */
#include <string.h>

#include "data_parallel.h"
#include "gpt.h"

bool sb_gpt_parallel_alloc(sb_gpt *g)
{
    g->grad_total = g->total + 1; /* and the loss */
    g->partials = sb_floats_try(sb_partials_rows(g->cfg, g->batch) * g->grad_total);
    return g->partials != NULL;
}

/* g with every per-row buffer starting at the first row of window `first`. */
static sb_gpt rows_view(const sb_gpt *g, int first)
{
    sb_gpt v = *g;
    const size_t r = (size_t)first * (size_t)g->context;
    const size_t c1 = r * (size_t)g->width, c4 = 4 * c1;
    const size_t cqkv = r * (size_t)g->qkv_width, cqk = r * (size_t)g->qk_width;
    const size_t cv = r * (size_t)g->vocab;
    const bool rope = g->arch.position == SB_GPT_ROPE, swiglu = g->arch.mlp == SB_GPT_SWIGLU;
    v.tokens += r, v.targets += r, v.embed += c1;
    for (int l = 0; l < g->layers; l++) {
        sb_gpt_block *b = &v.block[l];
        b->ln1 += c1, b->qkv += cqkv, b->attn += c1, b->proj += c1, b->res1 += c1;
        b->ln2 += c1, b->fc += c4, b->gelu += c4, b->fcproj += c1, b->res2 += c1;
        if (swiglu)
            b->up += c4;
        if (rope)
            b->qk += cqk, b->qk_rot += cqk, b->rotated += cqkv;
    }
    v.lnf += c1, v.logits += cv, v.prob += cv;
    for (int i = 0; i < 3; i++)
        v.dres[i] += c1;
    v.dln += c1, v.dattn += c1, v.dqkv += cqkv, v.dgelu += c4, v.dfc += c4, v.dlogits += cv;
    if (swiglu)
        v.dup += c4, v.dsum += c1;
    if (rope)
        v.dqk += cqk, v.dqk_rot += cqk;
    return v;
}

/* sb_rows_pass_fn: windows [first, first + windows) of the n-window batch. */
static void rows_pass(void *model, int first, int windows, int n, float *row,
                      const sb_model_probe *quiet)
{
    const sb_gpt *g = model;
    sb_gpt v = rows_view(g, first);
    v.grads = row;
    v.mean_over = n * g->context;
    sb_gpt_forward(&v, windows, g->context, SB_GPT_TRAIN, NULL, quiet);
    sb_gpt_backward(&v, windows, quiet);
    /* the pass's loss is the mean over its rows: its part of the batch's mean */
    row[g->total] = v.loss * (float)windows / (float)n;
}

/* ---- the combined gradients' probes -------------------------------------------- */

/* The bound of a combined gradient is that of the whole batch's gradient
 * sum in any order: the bound of the op that makes the parameter's gradient
 * in a pass over the whole batch. The GPT's backward reuses its gradient
 * buffers from block to block, so no op call over the whole batch outlives
 * the backward; the bound, asked for only when a probe is dumped, runs that
 * pass then (unprobed, into a gradient buffer of its own) and takes the
 * bound of the op as it is made. That pass rewrites the activations, which
 * nothing of the step reads after the combine; every rank holds the whole
 * batch, so every rank's bound is the batch's. */
typedef struct whole_bound {
    sb_gpt *g;
    int param;
    int windows;
    float *bound;       /* the output, while the pass runs */
} whole_bound;

static void bound_take(void *ctx, const sb_probe_point *pt)
{
    const whole_bound *wb = ctx;
    if (strcmp(pt->name, wb->g->param[wb->param].grad_name) == 0)
        pt->bound(wb->bound, pt->bound_ctx, pt->out_index);
}

static void whole_batch_bound(float *bound, const void *ctx, int out_index)
{
    SB_ASSERT(out_index == 0);
    whole_bound wb = *(const whole_bound *)ctx;
    wb.bound = bound;
    sb_gpt v = *wb.g;
    v.grads = sb_floats_try(v.total);
    SB_ASSERT(v.grads != NULL);
    v.mean_over = 0;
    sb_model_probe finder = {.hook = bound_take, .ctx = &wb};
    sb_gpt_forward(&v, wb.windows, v.context, SB_GPT_TRAIN, NULL, &finder);
    sb_gpt_backward(&v, wb.windows, &finder);
    free(v.grads);
}

/* allreduce.<param> for every parameter, naming the batch and every
 * parameter's latest probe, as the CNN's do (2 + 62 inputs at most at
 * SB_GPT_MAX_LAYERS blocks, within a trace record's 64). */
static void combined_probe(sb_gpt *g, int windows, const sb_model_probe *p)
{
    if (!p->hook)
        return;
    const char *inputs[2 + SB_GPT_MAX_PARAMS] = {"batch.tokens", "batch.targets"};
    for (int i = 0; i < g->n_params; i++)
        inputs[2 + i] = g->param[i].latest;
    for (int i = 0; i < g->n_params; i++) {
        const sb_gpt_param *q = &g->param[i];
        sb_tensor grad = q->view;
        grad.data = g->grads + q->offset;
        const whole_bound wb = {.g = g, .param = i, .windows = windows};
        sb_probe_point pt = {
            .step = p->step, .name = q->combined_name, .op = SB_ALLREDUCE_OP,
            .tensor = &grad, .inputs = inputs, .n_inputs = 2 + g->n_params,
            .bound = whole_batch_bound, .bound_ctx = &wb, .out_index = 0,
        };
        p->hook(p->ctx, &pt);
    }
}

void sb_gpt_parallel_step(sb_gpt *g, int windows, const sb_model_probe *p)
{
    sb_data_parallel_combine(g->cfg, windows, p->step, g->partials, g->grad_total, rows_pass,
                             g);
    memcpy(g->grads, g->partials, g->total * sizeof *g->grads);
    g->loss = g->partials[g->total];
    combined_probe(g, windows, p);
}
