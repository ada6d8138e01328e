/* char_gpt's training loop around the GPT of gpt.c: the windows of each
 * step, its forward and backward (or, data parallel, gpt_parallel.c's
 * step), the periodic evaluation on fixed validation windows, the metrics,
 * the registry entry, and the sampler.
 *
 * Probes besides those of gpt.c: before every step batch.tokens and
 * batch.targets (sources); at each evaluation (step = steps done), per
 * validation batch k: eval.b<k>.tokens (source), the forward pass
 * eval.b<k>.<layer>.out; then over all validation windows: eval.labels
 * (source), eval.loss (xent_loss), softmax.eval.prob, eval.accuracy. */
#include <stdlib.h>
#include <string.h>

#include "gpt.h"
#include "resume.h"
#include "sb_rng.h"

void sb_gpt_config_defaults(sb_train_config *cfg)
{
    sb_train_config_defaults(cfg);
    cfg->batch = 16;
    cfg->epochs = 0; /* not read: the schedule is gpt.steps */
    cfg->dropout1 = 0.0f, cfg->dropout2 = 0.0f;
    cfg->gpt = (sb_gpt_config){
        .layers = 2, .heads = 4, .width = 128, .context = 64,
        .steps = 300, .eval_every = 100, .eval_windows = 64, .clip = 1.0f,
    };
    sb_optim_defaults(&cfg->optim, SB_OPTIM_ADAMW);
}

bool sb_gpt_block_is_gpt2(const sb_gpt_block_config *b)
{
    return b->norm == SB_GPT_LAYERNORM && b->position == SB_GPT_LEARNED &&
           b->mlp == SB_GPT_GELU && b->kv_heads == 0 && !b->no_bias;
}

const char *sb_gpt_norm_name(sb_gpt_norm n)
{
    return n == SB_GPT_RMSNORM ? "rmsnorm" : "layernorm";
}

const char *sb_gpt_position_name(sb_gpt_position p)
{
    return p == SB_GPT_ROPE ? "rope" : "learned";
}

const char *sb_gpt_mlp_name(sb_gpt_mlp m)
{
    return m == SB_GPT_SWIGLU ? "swiglu" : "gelu";
}

int64_t sb_gpt_train_steps(const sb_train_config *cfg, int64_t n_train)
{
    (void)n_train; /* windows are drawn, not counted off the text */
    const int64_t steps = cfg->gpt.steps;
    return cfg->max_steps > 0 && cfg->max_steps < steps ? cfg->max_steps : steps;
}

int sb_gpt_evaluations(const sb_train_config *cfg)
{
    const int64_t every = cfg->gpt.eval_every > 0 ? cfg->gpt.eval_every : 1;
    const int64_t n = (cfg->gpt.steps + every - 1) / every;
    return n > 0 ? (int)n : 1;
}

/* ---- data --------------------------------------------------------------------- */

/* Window b of step s starts at a position drawn from (seed, step): a 64-bit
 * draw (words 2b and 2b+1 of the counter) modulo the start positions (its
 * bias, below 2^-40 for any text here, is immaterial). Every window has t
 * inputs and t targets, the next characters. */
static int64_t window_start(uint64_t seed, int64_t step, int b, int64_t starts)
{
    uint64_t hi = sb_rng_u32(seed, SB_STREAM_WINDOWS, (uint32_t)step, 2 * (uint64_t)b);
    uint64_t lo = sb_rng_u32(seed, SB_STREAM_WINDOWS, (uint32_t)step, 2 * (uint64_t)b + 1);
    return (int64_t)(((hi << 32) | lo) % (uint64_t)starts);
}

static void window_load(sb_gpt *g, int b, const uint8_t *text, int t)
{
    for (int i = 0; i < t; i++) {
        g->tokens[b * t + i] = text[i];
        g->targets[b * t + i] = text[i + 1];
    }
}

static void tokens_probe(const sb_gpt *g, int n, const char *tokens, const char *targets,
                         const sb_model_probe *p)
{
    sb_tensor x = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {n}, .data = g->tokens};
    sb_model_probe_source(p, tokens, &x);
    if (targets) {
        sb_tensor y = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {n}, .data = g->targets};
        sb_model_probe_source(p, targets, &y);
    }
}

/* ---- evaluation --------------------------------------------------------------- */

/* The validation windows, all of them at once. */
typedef struct eval_set {
    int windows;
    float *logits, *prob;   /* [windows * t][V] */
    int32_t *labels;        /* [windows * t]: the targets */
    float loss, accuracy;
} eval_set;

/* Window w of the validation text is characters [w t, (w + 1) t], fixed for
 * the whole run. */
static void evaluate(sb_gpt *g, const sb_text *val, eval_set *e, const sb_model_probe *p)
{
    const int t = g->context, V = g->vocab;
    char tokens_name[SB_GPT_NAME_SIZE], head_name[SB_GPT_NAME_SIZE];
    int batch = 0;
    for (int start = 0; start < e->windows; start += g->batch, batch++) {
        int n = e->windows - start < g->batch ? e->windows - start : g->batch;
        for (int b = 0; b < n; b++)
            window_load(g, b, val->tokens + (size_t)(start + b) * (size_t)t, t);
        memcpy(e->labels + (size_t)start * (size_t)t, g->targets,
               (size_t)n * (size_t)t * sizeof *e->labels);
        snprintf(tokens_name, sizeof tokens_name, "eval.b%d.tokens", batch);
        tokens_probe(g, n * t, tokens_name, NULL, p);
        sb_gpt_forward(g, n, t, batch, e->logits + (size_t)start * (size_t)t * (size_t)V, p);
    }
    const int rows = e->windows * t;
    sb_tensor labels = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {rows}, .data = e->labels};
    sb_model_probe_source(p, "eval.labels", &labels);

    /* the whole-set ops name the last batch's logits (sb_model_eval_set) */
    snprintf(head_name, sizeof head_name, "eval.b%d.head.out", batch - 1);
    sb_model_eval_set(g->k, p, rows, V, e->logits, e->prob, e->labels, head_name, &e->loss,
                      &e->accuracy);
}

/* ---- sampling ----------------------------------------------------------------- */

/* Characters from the trained model: the prompt is the first `context`
 * characters of the validation text; each next token is drawn from the
 * softmax of the last position's logits with uniform u_i =
 * sb_rng_uniform(seed, SB_STREAM_SAMPLE, 0, i), the first token whose
 * cumulative probability (summed in token order, in double) exceeds u_i
 * (the last token when rounding leaves u_i above the total). No probes. */
static void sample(sb_gpt *g, const sb_text *val, const sb_gpt_sample *s)
{
    const int T = g->context, V = g->vocab;
    int32_t *ctx = malloc((size_t)T * sizeof *ctx);
    SB_ASSERT(ctx != NULL);
    for (int i = 0; i < T; i++)
        ctx[i] = val->tokens[i];
    const sb_model_probe none = {.hook = NULL};
    float *prob = malloc((size_t)V * sizeof *prob);
    SB_ASSERT(prob != NULL);
    for (int i = 0; i < s->chars; i++) {
        memcpy(g->tokens, ctx, (size_t)T * sizeof *ctx);
        sb_gpt_forward(g, 1, T, 0, NULL, &none);
        sb_op_call c = {.op = SB_OP_softmax_fwd, .cls = {.n = 1, .k = V}};
        sb_model_call(g->k, &c, (void *const[]){prob},
                      (void *const[]){g->logits + (size_t)(T - 1) * (size_t)V});
        double u = (double)sb_rng_uniform(s->seed, SB_STREAM_SAMPLE, 0, (uint64_t)i);
        double sum = 0.0;
        int next = V - 1;
        for (int v = 0; v < V; v++) {
            sum += (double)prob[v];
            if (u < sum) {
                next = v;
                break;
            }
        }
        s->out[i] = sb_text_char(next);
        memmove(ctx, ctx + 1, (size_t)(T - 1) * sizeof *ctx);
        ctx[T - 1] = next;
    }
    s->out[s->chars] = '\0';
    free(prob);
    free(ctx);
}

/* ---- the loop ----------------------------------------------------------------- */

static sb_status text_range(const sb_model_run *r, const sb_text *all, sb_text *train,
                            sb_text *val, char *err, size_t errlen)
{
    const sb_gpt_config *c = &r->cfg->gpt;
    if (sb_text_slice(train, all, r->train_begin, r->train_end) != SB_OK ||
        sb_text_slice(val, all, r->test_begin, r->test_end) != SB_OK)
        return sb_msg(err, errlen, SB_ERR_INPUT, "%s: the train or test range is outside data "
                      "set %s (%lld characters)", r->what, r->dataset, (long long)all->n);
    if (train->n < (int64_t)c->context + 1)
        return sb_msg(err, errlen, SB_ERR_INPUT, "%s: the train range holds %lld characters; "
                      "a window of context %d needs %d", r->what, (long long)train->n,
                      c->context, c->context + 1);
    const int64_t need = (int64_t)c->eval_windows * c->context + 1;
    if (val->n < need)
        return sb_msg(err, errlen, SB_ERR_INPUT, "%s: the test range holds %lld characters; "
                      "%d validation windows of context %d need %lld", r->what,
                      (long long)val->n, c->eval_windows, c->context, (long long)need);
    return SB_OK;
}

/* The GPT's side of checkpoint and resume (resume.h). */
static void gpt_init(void *g, const sb_model_probe *p)
{
    sb_gpt_init(g, p);
}

static void gpt_state(void *g, sb_train_state *s)
{
    sb_gpt_state(g, s);
}

static void gpt_resumed(void *g)
{
    sb_gpt_resumed(g);
}

/* The counters of a whole run: the windows of the next step drawn at
 * order_key (the step); a resumed run goes on from the checkpoint's. */
sb_status sb_gpt_run(const sb_model_run *r, sb_epoch_metrics *metrics, int *n_metrics,
                     const sb_gpt_sample *s, char *err, size_t errlen)
{
    *n_metrics = 0;
    const sb_train_config *cfg = r->cfg;
    sb_text all, train, val;
    sb_status st = sb_text_open(&all, r->dataset, r->data_dir, err, errlen);
    if (st != SB_OK)
        return SB_ERR_INPUT;
    if ((st = text_range(r, &all, &train, &val, err, errlen)) != SB_OK) {
        sb_text_free(&all);
        return st;
    }
    sb_gpt g;
    if ((st = sb_gpt_alloc(&g, r->k, cfg, SB_TEXT_VOCAB)) != SB_OK) {
        sb_text_free(&all);
        if (st == SB_ERR_SHAPE)
            return sb_msg(err, errlen, SB_ERR_INPUT, "%s: the model cannot take these sizes "
                          "(layers 1..%d, width a multiple of heads, every tensor and the "
                          "parameters together at most 2^28 floats: batch * context * 4 * "
                          "width, batch * context * %d, the parameter count)", r->what,
                          SB_GPT_MAX_LAYERS, SB_TEXT_VOCAB);
        return sb_msg(err, errlen, st, "%s: %s", r->what, sb_status_name(st));
    }
    const int t = g.context;
    eval_set e = {.windows = cfg->gpt.eval_windows};
    const size_t erows = (size_t)e.windows * (size_t)t;
    e.logits = sb_floats_try(erows * SB_TEXT_VOCAB);
    e.prob = sb_floats_try(erows * SB_TEXT_VOCAB);
    e.labels = malloc(erows * sizeof *e.labels);
    if (!e.logits || !e.prob || !e.labels) {
        st = sb_msg(err, errlen, SB_ERR_NOMEM, "%s: out of memory", r->what);
        goto done;
    }

    sb_model_probe p = {.hook = r->hook, .ctx = r->hook_ctx, .op_start = r->op_start,
                        .leaf_hash = r->leaf_hash, .step = 0};
    const sb_train_model tm = {.m = &g, .ctr = &g.ctr, .init = gpt_init, .state = gpt_state,
                               .resumed = gpt_resumed};
    if ((st = sb_train_start(&tm, r, &p, err, errlen)) != SB_OK)
        goto done;
    sb_train_counters *c = &g.ctr;
    p.step = c->step;
    const int64_t steps = sb_gpt_train_steps(cfg, train.n);
    const int64_t starts = train.n - t; /* a window needs t + 1 characters */
    /* a resumed run first closes the step its checkpoint came after */
    bool stepped = c->step > 0;
    while (stepped || p.step < steps) {
        if (!stepped) {
            for (int b = 0; b < g.batch; b++)
                window_load(&g, b,
                            train.tokens + window_start(cfg->seed, c->order_key, b, starts), t);
            tokens_probe(&g, g.rows, "batch.tokens", "batch.targets", &p);
            if (cfg->reduce == SB_REDUCE_NONE) {
                sb_gpt_forward(&g, g.batch, t, SB_GPT_TRAIN, NULL, &p);
                sb_gpt_backward(&g, g.batch, &p);
            } else {
                sb_gpt_parallel_step(&g, g.batch, &p);
            }
            sb_gpt_update(&g, &p);
            c->loss_sum += (double)g.loss;
            c->losses++;
            c->order_key++;
            c->rng_step++;
            p.step = ++c->step;
            if (sb_train_stop_due(r->checkpoint, c->step)) {
                st = sb_train_save(&tm, r->checkpoint, err, errlen);
                goto done;
            }
        }
        stepped = false;
        bool due = p.step % cfg->gpt.eval_every == 0 || p.step == cfg->gpt.steps;
        bool cut_end = p.step == steps && steps < cfg->gpt.steps && !cfg->cut_unevaluated;
        if (!due && !cut_end)
            continue;
        evaluate(&g, &val, &e, &p);
        metrics[*n_metrics] = (sb_epoch_metrics){
            /* the evaluations so far, counted from step 0 (a resumed run's too) */
            .epoch = (int)((p.step + cfg->gpt.eval_every - 1) / cfg->gpt.eval_every),
            .steps = p.step,
            .train_loss = c->loss_sum / (double)c->losses,
            .test_loss = (double)e.loss,
            .test_accuracy = (double)e.accuracy,
        };
        ++*n_metrics;
        c->loss_sum = 0.0;
        c->losses = 0;
    }
    if (s && s->trained)
        s->trained(s->ctx, &g, &val);
    if (s && s->chars > 0)
        sample(&g, &val, s);
done:
    free(e.logits);
    free(e.prob);
    free(e.labels);
    sb_gpt_free(&g);
    sb_text_free(&all);
    return st;
}

static sb_status gpt_run(const sb_model_run *r, sb_epoch_metrics *metrics, int *n_metrics,
                         char *err, size_t errlen)
{
    return sb_gpt_run(r, metrics, n_metrics, NULL, err, errlen);
}

const sb_model_kind sb_gpt_kind = {
    .name = "char_gpt",
    .datasets = "fortunes",
    .dataset_ok = sb_text_known,
    .defaults = sb_gpt_config_defaults,
    .steps = sb_gpt_train_steps,
    .evaluations = sb_gpt_evaluations,
    .run = gpt_run,
    .samples_open = sb_gpt_samples_open,
    .samples_forward = sb_gpt_samples_forward,
    .samples_close = sb_gpt_samples_close,
    .data_parallel = true,
};
