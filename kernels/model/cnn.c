/* The Keras MNIST CNN, one op call per layer, with a probe after every op
 * (made after the next op when that op reads the tensor: see run()).
 *
 *   x [n][1][h][w] -> conv1 32x3x3 -> relu1 -> conv2 64x3x3 -> relu2
 *     -> pool 2x2 -> dropout1 -> flatten (c,h,w) -> dense1 128 -> relu3
 *     -> dropout2 -> dense2 10 -> softmax, cross-entropy (mean over n)
 *
 * Probe names are "<layer>.<pass>.<tensor>"; a probe's inputs name the probes
 * that hold the op's actual inputs, a parameter by its latest probe (init.*
 * before the first update, <optimizer>.* after). Per training step:
 *
 *   batch.x, batch.labels                                  (sources)
 *   conv1.fwd.out relu1.fwd.out conv2.fwd.out relu2.fwd.out pool.fwd.out
 *   dropout1.fwd.mask dropout1.fwd.out dense1.fwd.out relu3.fwd.out
 *   dropout2.fwd.mask dropout2.fwd.out dense2.fwd.out softmax.fwd.prob
 *   loss.fwd.loss
 *   loss.bwd.dlogits dense2.bwd.dW dense2.bwd.db dense2.bwd.dx
 *   dropout2.bwd.dx relu3.bwd.dx dense1.bwd.dW dense1.bwd.db dense1.bwd.dx
 *   dropout1.bwd.dx pool.bwd.dx relu2.bwd.dx conv2.bwd.dW conv2.bwd.db
 *   conv2.bwd.dx relu1.bwd.dx conv1.bwd.dW conv1.bwd.db
 *   [<opt>.step]                   (source: adam's 1-based step t)
 *   <opt>.conv1.W <opt>.conv1.W.<state>... <opt>.conv1.b <opt>.conv1.b.<state>...
 *   ... <opt>.dense2.b <opt>.dense2.b.<state>...
 *        (opt: sb_optimizer_name; state: sb_optimizer_state_name, the
 *        accumulators the update writes in place, adadelta's acc and delta_acc)
 *
 * Before step 0: init.conv1.W init.conv1.b ... init.dense2.b (sources).
 * The evaluation pass (train.c) has no dropout and names its probes by test
 * batch, so that every name is unique within a step: eval.b<k>.x (source),
 * eval.b<k>.conv1.out ... eval.b<k>.dense2.out.
 *
 * Random streams are SB_STREAM_INIT / SB_STREAM_DROPOUT plus the layer's
 * position in the Keras Sequential model (conv1 0, conv2 1, pool 2,
 * dropout1 3, flatten 4, dense1 5, dropout2 6, dense2 7). */
#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "sb_rng.h"

enum {
    LAYER_CONV1 = 0,
    LAYER_CONV2 = 1,
    LAYER_DROPOUT1 = 3,
    LAYER_DENSE1 = 5,
    LAYER_DROPOUT2 = 6,
    LAYER_DENSE2 = 7,
};

static const char *const param_names[SB_CNN_PARAM_COUNT] = {
    "conv1.W", "conv1.b", "conv2.W", "conv2.b",
    "dense1.W", "dense1.b", "dense2.W", "dense2.b",
};
static const char *const grad_names[SB_CNN_PARAM_COUNT] = {
    "conv1.bwd.dW", "conv1.bwd.db", "conv2.bwd.dW", "conv2.bwd.db",
    "dense1.bwd.dW", "dense1.bwd.db", "dense2.bwd.dW", "dense2.bwd.db",
};
static const char *const init_names[SB_CNN_PARAM_COUNT] = {
    "init.conv1.W", "init.conv1.b", "init.conv2.W", "init.conv2.b",
    "init.dense1.W", "init.dense1.b", "init.dense2.W", "init.dense2.b",
};

/* Forward tensors; their probe names in training, and the tensor part of
 * their names in evaluation (eval.b<k>.<tensor>; no dropout, no loss). */
enum {
    T_X, T_CONV1, T_RELU1, T_CONV2, T_RELU2, T_POOL, T_MASK1, T_DROP1,
    T_DENSE1, T_RELU3, T_MASK2, T_DROP2, T_DENSE2, T_PROB, T_LOSS, T_COUNT
};
static const char *const fwd_names[T_COUNT] = {
    "batch.x", "conv1.fwd.out", "relu1.fwd.out", "conv2.fwd.out",
    "relu2.fwd.out", "pool.fwd.out", "dropout1.fwd.mask", "dropout1.fwd.out",
    "dense1.fwd.out", "relu3.fwd.out", "dropout2.fwd.mask", "dropout2.fwd.out",
    "dense2.fwd.out", "softmax.fwd.prob", "loss.fwd.loss",
};
static const char *const eval_tensors[T_COUNT] = {
    [T_X] = "x", [T_CONV1] = "conv1.out", [T_RELU1] = "relu1.out",
    [T_CONV2] = "conv2.out", [T_RELU2] = "relu2.out", [T_POOL] = "pool.out",
    [T_DENSE1] = "dense1.out", [T_RELU3] = "relu3.out", [T_DENSE2] = "dense2.out",
};

void sb_cnn_eval_name(char out[SB_CNN_NAME_SIZE], int batch, const char *tensor)
{
    int len = snprintf(out, SB_CNN_NAME_SIZE, "eval.b%d.%s", batch, tensor);
    SB_ASSERT(len > 0 && len < SB_CNN_NAME_SIZE);
}

/* Pointer lists for one op call, in the order of its signature; NAMES
 * expands to the two arguments (array, count) of the inputs' probe names. */
#define PTRS(...) ((void *const[]){__VA_ARGS__})
#define NAMES(...)                                                             \
    ((const char *const[]){__VA_ARGS__}),                                      \
        (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* ---- running and probing -----------------------------------------------------
 * Every op goes through run(), which probes its output right after it (an
 * update: every output, update_run()),
 * or through hold() when the next op reads that output: the op runs, and its
 * probe waits for the next run(), which makes the held probes (oldest first)
 * and then its own, so the probes keep the program order. When the hook hands
 * down a leaf hash, that next op runs in its hashed mode (if its kernel has
 * one, sb_op_call_run_hashed) and hashes, block by block while they are in
 * cache, its output and each input a held probe produced: a large tensor is
 * then never read back from memory just to be hashed. */

/* The input of c that is the whole tensor of held probe h, or -1. */
static int held_input(const sb_op_call *c, const sb_cnn_held *h)
{
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i].data == h->c.out[0].data &&
            sb_tensor_bytes(&c->in[i]) == sb_tensor_bytes(&h->c.out[0]))
            return i;
    return -1;
}

/* Runs c on the model's kernels (bound to out and in), hashing the leaves
 * of its outputs into r when it can (true then), and probes what was held. */
static bool run_op(sb_cnn *m, const sb_model_probe *p, sb_op_call *c, const char *name,
                   void *const out[], void *const in[], sb_leaf_request *r)
{
    sb_model_bind(c, out, in);
    sb_model_op_start(p, name, c->op);
    *r = (sb_leaf_request){.hash = p->leaf_hash};
    bool hashed = false;
    if (p->hook && p->leaf_hash) {
        for (int j = 0; j < c->n_out; j++)
            r->out[j] = m->leaves[j];
        for (int k = 0; k < m->n_held; k++) {
            int i = held_input(c, &m->held[k]);
            if (i >= 0)
                r->in[i] = m->leaves[SB_OP_MAX_OUT + i];
        }
        hashed = sb_op_call_run_hashed(m->k, c, r);
    } else {
        sb_op_call_run(m->k, c);
    }
    for (int k = 0; k < m->n_held; k++) {
        const sb_cnn_held *h = &m->held[k];
        int i = held_input(c, h);
        sb_model_probe_op(p, h->name, &h->c, 0, h->in_names, h->n_names,
                          hashed && i >= 0 ? r->in[i] : NULL);
    }
    m->n_held = 0;
    return hashed;
}

/* Runs c on the model's kernels, probes what was held, then c's output. */
static void run(sb_cnn *m, const sb_model_probe *p, sb_op_call c, const char *name,
                void *const out[], void *const in[], const char *const in_names[],
                int n_names)
{
    sb_leaf_request r;
    bool hashed = run_op(m, p, &c, name, out, in, &r);
    sb_model_probe_op(p, name, &c, 0, in_names, n_names, hashed ? r.out[0] : NULL);
}

/* Runs the update c of parameter i, probes what was held, then the
 * parameter and each state the update wrote. */
static void update_run(sb_cnn *m, const sb_model_probe *p, sb_op_call c, int i,
                       const char *const in_names[], int n_names)
{
    sb_leaf_request r;
    bool hashed = run_op(m, p, &c, m->update_name[i],
                         PTRS(m->param[i], m->state[i][0], m->state[i][1]), PTRS(m->grad[i]),
                         &r);
    sb_model_probe_update(p, m->update_name[i], &m->state_probes[i], &c, in_names, n_names,
                          hashed ? r.out : NULL);
}

/* Runs c on the model's kernels and holds its probe for the next run(). */
static void hold(sb_cnn *m, const sb_model_probe *p, sb_op_call c, const char *name,
                 void *const out[], void *const in[], const char *const in_names[],
                 int n_names)
{
    SB_ASSERT(m->n_held < SB_CNN_MAX_HELD && n_names <= SB_OP_MAX_IN);
    sb_model_op_start(p, name, c.op);
    sb_model_call(m->k, &c, out, in);
    sb_cnn_held *h = &m->held[m->n_held++];
    h->c = c;
    h->name = name;
    h->n_names = n_names;
    for (int i = 0; i < n_names; i++)
        h->in_names[i] = in_names[i];
}

static sb_op_call conv_call(sb_op op, int n, int c, int h, int w, int k)
{
    return (sb_op_call){.op = op, .conv = {.n = n, .c = c, .h = h, .w = w, .k = k,
                                           .r = SB_CNN_KERNEL, .s = SB_CNN_KERNEL,
                                           .stride = 1, .pad = 0}};
}

static sb_op_call dense_call(sb_op op, int n, int in, int out)
{
    return (sb_op_call){.op = op, .dense = {.n = n, .in = in, .out = out}};
}

static sb_op_call vec_call(sb_op op, size_t count)
{
    return (sb_op_call){.op = op, .n = count};
}

static sb_op_call pool_call(sb_op op, int n, int c, int h, int w)
{
    return (sb_op_call){.op = op, .pool = {.n = n, .c = c, .h = h, .w = w}};
}

static sb_op_call class_call(const sb_cnn *m, sb_op op, int n)
{
    return (sb_op_call){.op = op, .cls = {.n = n, .k = SB_CNN_CLASSES,
                                          .mean_over = m->mean_over}};
}

static sb_op_call mask_call(const sb_cnn *m, float rate, uint32_t layer, int64_t step,
                            size_t count)
{
    return (sb_op_call){.op = SB_OP_dropout_mask, .n = count,
                        .dropout = {.rate = rate, .seed = m->cfg->seed,
                                    .stream = SB_STREAM_DROPOUT + layer,
                                    .step = (uint32_t)step}};
}

/* ---- buffers -------------------------------------------------------------- */

/* n zeroed floats on a cache line: the kernels' vector loads of a tensor
 * (the tall GEMM tile reads dense2's input 16 floats at a time) then never
 * straddle two lines. */
static float *floats(size_t n, bool *ok)
{
    float *f = sb_floats_try(n);
    if (f)
        memset(f, 0, n * sizeof *f);
    *ok = *ok && f != NULL;
    return f;
}

static void param_shape(sb_tensor *t, int ndim, int64_t d0, int64_t d1, int64_t d2,
                        int64_t d3)
{
    *t = (sb_tensor){.dtype = SB_DTYPE_F32, .ndim = ndim, .dim = {d0, d1, d2, d3}};
}

/* Describes the largest op calls once, so that an absurd size is an error
 * here and an impossible one later. */
static bool shapes_ok(const sb_cnn *m)
{
    sb_op_call calls[] = {
        conv_call(SB_OP_conv2d_fwd, m->batch, 1, m->h, m->w, SB_CNN_CONV1_K),
        conv_call(SB_OP_conv2d_fwd, m->batch, SB_CNN_CONV1_K, m->h1, m->w1, SB_CNN_CONV2_K),
        pool_call(SB_OP_maxpool_fwd, m->batch, SB_CNN_CONV2_K, m->h2, m->w2),
        dense_call(SB_OP_dense_fwd, m->batch, m->features, SB_CNN_HIDDEN),
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (sb_op_call_describe(&calls[i]) != SB_OK)
            return false;
    return true;
}

sb_status sb_cnn_alloc(sb_cnn *m, const sb_kernel_table *k, const sb_train_config *cfg,
                       int h, int w)
{
    memset(m, 0, sizeof *m);
    /* two valid 3x3 convolutions take 4 rows, the pool needs 2 more */
    if (h < 6 || w < 6 || cfg->batch < 1)
        return SB_ERR_SHAPE;
    m->k = k;
    m->cfg = cfg;
    m->batch = cfg->batch;
    m->h = h, m->w = w;
    m->h1 = h - 2, m->w1 = w - 2;
    m->h2 = h - 4, m->w2 = w - 4;
    m->h3 = m->h2 / 2, m->w3 = m->w2 / 2;
    if ((int64_t)SB_CNN_CONV2_K * m->h3 * m->w3 > INT32_MAX)
        return SB_ERR_SHAPE;
    m->features = SB_CNN_CONV2_K * m->h3 * m->w3;
    if (!shapes_ok(m))
        return SB_ERR_SHAPE;

    sb_tensor *v = m->param_view;
    param_shape(&v[SB_CNN_CONV1_W], 4, SB_CNN_CONV1_K, 1, SB_CNN_KERNEL, SB_CNN_KERNEL);
    param_shape(&v[SB_CNN_CONV1_B], 1, SB_CNN_CONV1_K, 1, 1, 1);
    param_shape(&v[SB_CNN_CONV2_W], 4, SB_CNN_CONV2_K, SB_CNN_CONV1_K, SB_CNN_KERNEL,
                SB_CNN_KERNEL);
    param_shape(&v[SB_CNN_CONV2_B], 1, SB_CNN_CONV2_K, 1, 1, 1);
    param_shape(&v[SB_CNN_DENSE1_W], 2, m->features, SB_CNN_HIDDEN, 1, 1);
    param_shape(&v[SB_CNN_DENSE1_B], 1, SB_CNN_HIDDEN, 1, 1, 1);
    param_shape(&v[SB_CNN_DENSE2_W], 2, SB_CNN_HIDDEN, SB_CNN_CLASSES, 1, 1);
    param_shape(&v[SB_CNN_DENSE2_B], 1, SB_CNN_CLASSES, 1, 1, 1);

    /* sgd and rmsprop keep one accumulator per weight, adam and adadelta two */
    sb_optimizer kind = cfg->optim.kind;
    bool ok = true;
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        size_t count = sb_tensor_count(&v[i]);
        snprintf(m->update_name[i], sizeof m->update_name[i], "%s.%s",
                 sb_optimizer_name(kind), param_names[i]);
        sb_model_state_names(&m->state_probes[i], kind, m->update_name[i]);
        m->param[i] = floats(count, &ok);
        m->grad[i] = floats(count, &ok);
        for (int s = 0; s < m->state_probes[i].n; s++)
            m->state[i][s] = floats(count, &ok);
        v[i].data = m->param[i];
        m->latest[i] = init_names[i];
        /* data parallel, an update reads the gradient combined over the ranks */
        snprintf(m->combined_name[i], sizeof m->combined_name[i], "allreduce.%s",
                 param_names[i]);
        m->grad_probe[i] = cfg->reduce == SB_REDUCE_NONE ? grad_names[i] : m->combined_name[i];
    }

    size_t b = (size_t)m->batch;
    size_t a1 = b * SB_CNN_CONV1_K * (size_t)(m->h1 * m->w1);
    size_t a2 = b * SB_CNN_CONV2_K * (size_t)(m->h2 * m->w2);
    size_t a3 = b * (size_t)m->features;
    size_t hid = b * SB_CNN_HIDDEN, cls = b * SB_CNN_CLASSES;
    m->x = floats(b * (size_t)(h * w), &ok);
    m->labels = calloc(b, sizeof *m->labels);
    ok = ok && m->labels != NULL;
    m->conv1 = floats(a1, &ok), m->relu1 = floats(a1, &ok);
    m->conv2 = floats(a2, &ok), m->relu2 = floats(a2, &ok);
    m->pool = floats(a3, &ok), m->mask1 = floats(a3, &ok), m->drop1 = floats(a3, &ok);
    m->dense1 = floats(hid, &ok), m->relu3 = floats(hid, &ok);
    m->mask2 = floats(hid, &ok), m->drop2 = floats(hid, &ok);
    m->logits = floats(cls, &ok), m->prob = floats(cls, &ok);
    m->dlogits = floats(cls, &ok);
    m->ddrop2 = floats(hid, &ok), m->drelu3 = floats(hid, &ok), m->ddense1 = floats(hid, &ok);
    m->ddrop1 = floats(a3, &ok), m->dpool = floats(a3, &ok);
    m->drelu2 = floats(a2, &ok), m->dconv2 = floats(a2, &ok);
    m->drelu1 = floats(a1, &ok), m->dconv1 = floats(a1, &ok);

    /* leaf digests of the largest tensor an op may hash: a conv activation
     * (the others are pooled or 128 wide) or a parameter */
    size_t largest = a1 > a2 ? a1 : a2;
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++)
        if (sb_tensor_count(&v[i]) > largest)
            largest = sb_tensor_count(&v[i]);
    size_t n_leaves = (largest * sizeof(float) + SB_HASH_LEAF_BYTES - 1) / SB_HASH_LEAF_BYTES;
    for (int i = 0; i < SB_CNN_LEAF_SLOTS; i++) {
        m->leaves[i] = calloc(n_leaves, sizeof *m->leaves[i]);
        ok = ok && m->leaves[i] != NULL;
    }
    if (cfg->reduce != SB_REDUCE_NONE)
        ok = ok && sb_cnn_parallel_alloc(m);
    if (!ok) {
        sb_cnn_free(m);
        return SB_ERR_NOMEM;
    }
    return SB_OK;
}

void sb_cnn_free(sb_cnn *m)
{
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        free(m->param[i]);
        free(m->grad[i]);
        free(m->state[i][0]);
        free(m->state[i][1]);
    }
    float *acts[] = {m->x, m->conv1, m->relu1, m->conv2, m->relu2, m->pool, m->mask1,
                     m->drop1, m->dense1, m->relu3, m->mask2, m->drop2, m->logits,
                     m->prob, m->dlogits, m->ddrop2, m->drelu3, m->ddense1, m->ddrop1,
                     m->dpool, m->drelu2, m->dconv2, m->drelu1, m->dconv1};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        free(acts[i]);
    for (int i = 0; i < SB_CNN_LEAF_SLOTS; i++)
        free(m->leaves[i]);
    free(m->labels);
    free(m->partials);
    memset(m, 0, sizeof *m);
}

/* ---- initialisation ------------------------------------------------------ */

void sb_cnn_init(sb_cnn *m, const sb_model_probe *p)
{
    const int rs = SB_CNN_KERNEL * SB_CNN_KERNEL;
    struct { sb_cnn_param w; uint32_t layer; int fan_in, fan_out; } layers[] = {
        {SB_CNN_CONV1_W, LAYER_CONV1, 1 * rs, SB_CNN_CONV1_K * rs},
        {SB_CNN_CONV2_W, LAYER_CONV2, SB_CNN_CONV1_K * rs, SB_CNN_CONV2_K * rs},
        {SB_CNN_DENSE1_W, LAYER_DENSE1, m->features, SB_CNN_HIDDEN},
        {SB_CNN_DENSE2_W, LAYER_DENSE2, SB_CNN_HIDDEN, SB_CNN_CLASSES},
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        sb_cnn_param w = layers[i].w, b = w + 1; /* each kernel's bias follows it */
        sb_init_glorot_uniform(m->param[w], sb_tensor_count(&m->param_view[w]),
                               layers[i].fan_in, layers[i].fan_out, m->cfg->seed,
                               SB_STREAM_INIT + layers[i].layer);
        sb_init_zeros(m->param[b], sb_tensor_count(&m->param_view[b]));
    }
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        sb_model_probe_source(p, init_names[i], &m->param_view[i]);
        m->latest[i] = init_names[i];
        m->state_probes[i].probed = false;
    }
}

/* ---- forward --------------------------------------------------------------- */

void sb_cnn_forward(sb_cnn *m, int n, int eval_batch, float *logits, const sb_model_probe *p)
{
    SB_ASSERT(m->n_held == 0); /* no probe waits across passes */
    SB_ASSERT(n >= 1 && n <= m->batch && eval_batch >= SB_CNN_SAMPLES);
    bool train = eval_batch == SB_CNN_TRAIN;
    char eval_names[T_COUNT][SB_CNN_NAME_SIZE];
    const char *nm[T_COUNT];
    for (int t = 0; t < T_COUNT; t++) {
        nm[t] = fwd_names[t];
        if (eval_batch == SB_CNN_SAMPLES && eval_tensors[t]) {
            nm[t] = eval_tensors[t];
        } else if (!train && eval_tensors[t]) {
            sb_cnn_eval_name(eval_names[t], eval_batch, eval_tensors[t]);
            nm[t] = eval_names[t];
        }
    }
    const char *const *w = m->latest;
    float *const *prm = m->param;
    size_t a1 = (size_t)n * SB_CNN_CONV1_K * (size_t)(m->h1 * m->w1);
    size_t a2 = (size_t)n * SB_CNN_CONV2_K * (size_t)(m->h2 * m->w2);
    size_t a3 = (size_t)n * (size_t)m->features, hid = (size_t)n * SB_CNN_HIDDEN;
    if (!logits)
        logits = m->logits;

    hold(m, p, conv_call(SB_OP_conv2d_fwd, n, 1, m->h, m->w, SB_CNN_CONV1_K), nm[T_CONV1],
         PTRS(m->conv1), PTRS(m->x, prm[SB_CNN_CONV1_W], prm[SB_CNN_CONV1_B]),
         NAMES(nm[T_X], w[SB_CNN_CONV1_W], w[SB_CNN_CONV1_B]));
    run(m, p, vec_call(SB_OP_relu_fwd, a1), nm[T_RELU1], PTRS(m->relu1), PTRS(m->conv1),
        NAMES(nm[T_CONV1]));
    hold(m, p, conv_call(SB_OP_conv2d_fwd, n, SB_CNN_CONV1_K, m->h1, m->w1, SB_CNN_CONV2_K),
         nm[T_CONV2], PTRS(m->conv2), PTRS(m->relu1, prm[SB_CNN_CONV2_W], prm[SB_CNN_CONV2_B]),
         NAMES(nm[T_RELU1], w[SB_CNN_CONV2_W], w[SB_CNN_CONV2_B]));
    run(m, p, vec_call(SB_OP_relu_fwd, a2), nm[T_RELU2], PTRS(m->relu2), PTRS(m->conv2),
        NAMES(nm[T_CONV2]));
    /* Flatten is free: the pool output is already [n][c][h][w] = [n][features].
     * Keras's Dropout is the identity outside training; in training the pool
     * output and the mask wait for dropout, which reads both. */
    sb_op_call pool = pool_call(SB_OP_maxpool_fwd, n, SB_CNN_CONV2_K, m->h2, m->w2);
    if (train)
        hold(m, p, pool, nm[T_POOL], PTRS(m->pool), PTRS(m->relu2), NAMES(nm[T_RELU2]));
    else
        run(m, p, pool, nm[T_POOL], PTRS(m->pool), PTRS(m->relu2), NAMES(nm[T_RELU2]));
    float *dense1_in = m->pool;
    const char *dense1_in_name = nm[T_POOL];
    if (train && !m->masks_given)
        hold(m, p, mask_call(m, m->cfg->dropout1, LAYER_DROPOUT1, m->ctr.rng_step, a3),
             nm[T_MASK1], PTRS(m->mask1), NULL, NULL, 0);
    if (train) {
        run(m, p, vec_call(SB_OP_dropout_fwd, a3), nm[T_DROP1], PTRS(m->drop1),
            PTRS(m->pool, m->mask1), NAMES(nm[T_POOL], nm[T_MASK1]));
        dense1_in = m->drop1, dense1_in_name = nm[T_DROP1];
    }
    hold(m, p, dense_call(SB_OP_dense_fwd, n, m->features, SB_CNN_HIDDEN), nm[T_DENSE1],
         PTRS(m->dense1), PTRS(dense1_in, prm[SB_CNN_DENSE1_W], prm[SB_CNN_DENSE1_B]),
         NAMES(dense1_in_name, w[SB_CNN_DENSE1_W], w[SB_CNN_DENSE1_B]));
    run(m, p, vec_call(SB_OP_relu_fwd, hid), nm[T_RELU3], PTRS(m->relu3), PTRS(m->dense1),
        NAMES(nm[T_DENSE1]));

    float *dense2_in = m->relu3;
    const char *dense2_in_name = nm[T_RELU3];
    if (train && !m->masks_given)
        hold(m, p, mask_call(m, m->cfg->dropout2, LAYER_DROPOUT2, m->ctr.rng_step, hid),
             nm[T_MASK2], PTRS(m->mask2), NULL, NULL, 0);
    if (train) {
        run(m, p, vec_call(SB_OP_dropout_fwd, hid), nm[T_DROP2], PTRS(m->drop2),
            PTRS(m->relu3, m->mask2), NAMES(nm[T_RELU3], nm[T_MASK2]));
        dense2_in = m->drop2, dense2_in_name = nm[T_DROP2];
    }
    run(m, p, dense_call(SB_OP_dense_fwd, n, SB_CNN_HIDDEN, SB_CNN_CLASSES), nm[T_DENSE2],
        PTRS(logits), PTRS(dense2_in, prm[SB_CNN_DENSE2_W], prm[SB_CNN_DENSE2_B]),
        NAMES(dense2_in_name, w[SB_CNN_DENSE2_W], w[SB_CNN_DENSE2_B]));
    if (!train)
        return;

    run(m, p, class_call(m, SB_OP_softmax_fwd, n), nm[T_PROB], PTRS(m->prob), PTRS(logits),
        NAMES(nm[T_DENSE2]));
    run(m, p, class_call(m, SB_OP_xent_loss, n), nm[T_LOSS], PTRS(&m->loss),
        PTRS(logits, m->labels), NAMES(nm[T_DENSE2], "batch.labels"));
}

/* ---- backward -------------------------------------------------------------- */

void sb_cnn_backward(sb_cnn *m, int n, const sb_model_probe *p)
{
    SB_ASSERT(m->n_held == 0); /* no probe waits across passes */
    SB_ASSERT(n >= 1 && n <= m->batch);
    const char *const *nm = fwd_names;
    const char *const *w = m->latest;
    float *const *prm = m->param;
    float *const *g = m->grad;
    size_t a1 = (size_t)n * SB_CNN_CONV1_K * (size_t)(m->h1 * m->w1);
    size_t a2 = (size_t)n * SB_CNN_CONV2_K * (size_t)(m->h2 * m->w2);
    size_t a3 = (size_t)n * (size_t)m->features, hid = (size_t)n * SB_CNN_HIDDEN;

    run(m, p, class_call(m, SB_OP_softmax_xent_bwd, n), "loss.bwd.dlogits", PTRS(m->dlogits),
        PTRS(m->prob, m->labels), NAMES(nm[T_PROB], "batch.labels"));

    sb_op_call d2 = dense_call(SB_OP_dense_bwd_weights, n, SB_CNN_HIDDEN, SB_CNN_CLASSES);
    run(m, p, d2, "dense2.bwd.dW", PTRS(g[SB_CNN_DENSE2_W]), PTRS(m->dlogits, m->drop2),
        NAMES("loss.bwd.dlogits", nm[T_DROP2]));
    d2.op = SB_OP_dense_bwd_bias;
    run(m, p, d2, "dense2.bwd.db", PTRS(g[SB_CNN_DENSE2_B]), PTRS(m->dlogits),
        NAMES("loss.bwd.dlogits"));
    d2.op = SB_OP_dense_bwd_data;
    hold(m, p, d2, "dense2.bwd.dx", PTRS(m->ddrop2), PTRS(m->dlogits, prm[SB_CNN_DENSE2_W]),
         NAMES("loss.bwd.dlogits", w[SB_CNN_DENSE2_W]));

    run(m, p, vec_call(SB_OP_dropout_bwd, hid), "dropout2.bwd.dx", PTRS(m->drelu3),
        PTRS(m->ddrop2, m->mask2), NAMES("dense2.bwd.dx", nm[T_MASK2]));
    run(m, p, vec_call(SB_OP_relu_bwd, hid), "relu3.bwd.dx", PTRS(m->ddense1),
        PTRS(m->drelu3, m->dense1), NAMES("dropout2.bwd.dx", nm[T_DENSE1]));

    sb_op_call d1 = dense_call(SB_OP_dense_bwd_weights, n, m->features, SB_CNN_HIDDEN);
    run(m, p, d1, "dense1.bwd.dW", PTRS(g[SB_CNN_DENSE1_W]), PTRS(m->ddense1, m->drop1),
        NAMES("relu3.bwd.dx", nm[T_DROP1]));
    d1.op = SB_OP_dense_bwd_bias;
    run(m, p, d1, "dense1.bwd.db", PTRS(g[SB_CNN_DENSE1_B]), PTRS(m->ddense1),
        NAMES("relu3.bwd.dx"));
    d1.op = SB_OP_dense_bwd_data;
    hold(m, p, d1, "dense1.bwd.dx", PTRS(m->ddrop1), PTRS(m->ddense1, prm[SB_CNN_DENSE1_W]),
         NAMES("relu3.bwd.dx", w[SB_CNN_DENSE1_W]));

    run(m, p, vec_call(SB_OP_dropout_bwd, a3), "dropout1.bwd.dx", PTRS(m->dpool),
        PTRS(m->ddrop1, m->mask1), NAMES("dense1.bwd.dx", nm[T_MASK1]));
    hold(m, p, pool_call(SB_OP_maxpool_bwd, n, SB_CNN_CONV2_K, m->h2, m->w2), "pool.bwd.dx",
         PTRS(m->drelu2), PTRS(m->dpool, m->relu2), NAMES("dropout1.bwd.dx", nm[T_RELU2]));
    run(m, p, vec_call(SB_OP_relu_bwd, a2), "relu2.bwd.dx", PTRS(m->dconv2),
        PTRS(m->drelu2, m->conv2), NAMES("pool.bwd.dx", nm[T_CONV2]));

    sb_op_call c2 = conv_call(SB_OP_conv2d_bwd_filter, n, SB_CNN_CONV1_K, m->h1, m->w1,
                              SB_CNN_CONV2_K);
    run(m, p, c2, "conv2.bwd.dW", PTRS(g[SB_CNN_CONV2_W]), PTRS(m->dconv2, m->relu1),
        NAMES("relu2.bwd.dx", nm[T_RELU1]));
    c2.op = SB_OP_conv2d_bwd_bias;
    run(m, p, c2, "conv2.bwd.db", PTRS(g[SB_CNN_CONV2_B]), PTRS(m->dconv2),
        NAMES("relu2.bwd.dx"));
    c2.op = SB_OP_conv2d_bwd_data;
    hold(m, p, c2, "conv2.bwd.dx", PTRS(m->drelu1), PTRS(m->dconv2, prm[SB_CNN_CONV2_W]),
         NAMES("relu2.bwd.dx", w[SB_CNN_CONV2_W]));
    run(m, p, vec_call(SB_OP_relu_bwd, a1), "relu1.bwd.dx", PTRS(m->dconv1),
        PTRS(m->drelu1, m->conv1), NAMES("conv2.bwd.dx", nm[T_CONV1]));

    /* conv1's data gradient would be the gradient at the images: not needed */
    sb_op_call c1 = conv_call(SB_OP_conv2d_bwd_filter, n, 1, m->h, m->w, SB_CNN_CONV1_K);
    run(m, p, c1, "conv1.bwd.dW", PTRS(g[SB_CNN_CONV1_W]), PTRS(m->dconv1, m->x),
        NAMES("relu1.bwd.dx", nm[T_X]));
    c1.op = SB_OP_conv2d_bwd_bias;
    run(m, p, c1, "conv1.bwd.db", PTRS(g[SB_CNN_CONV1_B]), PTRS(m->dconv1),
        NAMES("relu1.bwd.dx"));
}

/* ---- update ---------------------------------------------------------------- */

void sb_cnn_update(sb_cnn *m, const sb_model_probe *p)
{
    SB_ASSERT(m->n_held == 0); /* no probe waits across passes */
    const sb_optimizer kind = m->cfg->optim.kind;
    const int64_t t = m->ctr.optim_t + 1; /* adam counts iterations from 1 */
    int32_t t_held;
    const char *t_name = sb_model_probe_step(p, kind, t, &t_held);
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        sb_op_call c = vec_call(sb_optimizer_update_op(kind), sb_tensor_count(&m->param_view[i]));
        c.optim = m->cfg->optim;
        c.t = t;
        /* The parameter and its accumulators are updated in place: the probes
         * name the gradient, the parameter's previous value, the step adam
         * reads, and the accumulators' previous values (sb_model_probe_update);
         * the live input is the gradient. */
        const char *in_names[] = {m->grad_probe[i], m->latest[i], t_name};
        update_run(m, p, c, i, in_names, t_name ? 3 : 2);
        m->latest[i] = m->update_name[i];
    }
    m->ctr.optim_t++;
}

void sb_cnn_state(sb_cnn *m, sb_train_state *s)
{
    s->ctr = m->ctr;
    s->n_tensors = 0;
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        size_t count = sb_tensor_count(&m->param_view[i]);
        s->tensor[s->n_tensors++] = (sb_train_tensor){init_names[i] + strlen("init."),
                                                      m->param[i], count};
        for (int j = 0; j < m->state_probes[i].n; j++)
            s->tensor[s->n_tensors++] = (sb_train_tensor){m->state_probes[i].name[j],
                                                          m->state[i][j], count};
    }
}

void sb_cnn_resumed(sb_cnn *m)
{
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        m->latest[i] = m->update_name[i];
        m->state_probes[i].probed = true;
    }
}

/* ---- for the data-parallel step (cnn_parallel.c) ----------------------------- */

void sb_cnn_masks(sb_cnn *m, int n, int64_t step)
{
    size_t a3 = (size_t)n * (size_t)m->features, hid = (size_t)n * SB_CNN_HIDDEN;
    sb_op_call c = mask_call(m, m->cfg->dropout1, LAYER_DROPOUT1, step, a3);
    sb_model_call(m->k, &c, PTRS(m->mask1), NULL);
    c = mask_call(m, m->cfg->dropout2, LAYER_DROPOUT2, step, hid);
    sb_model_call(m->k, &c, PTRS(m->mask2), NULL);
}

sb_op_call sb_cnn_grad_call(const sb_cnn *m, sb_cnn_param i, int n)
{
    sb_op_call c;
    switch (i) {
    case SB_CNN_CONV1_W:
    case SB_CNN_CONV1_B:
        c = conv_call(i == SB_CNN_CONV1_W ? SB_OP_conv2d_bwd_filter : SB_OP_conv2d_bwd_bias, n,
                      1, m->h, m->w, SB_CNN_CONV1_K);
        sb_model_bind(&c, PTRS(m->grad[i]), PTRS(m->dconv1, m->x));
        return c;
    case SB_CNN_CONV2_W:
    case SB_CNN_CONV2_B:
        c = conv_call(i == SB_CNN_CONV2_W ? SB_OP_conv2d_bwd_filter : SB_OP_conv2d_bwd_bias, n,
                      SB_CNN_CONV1_K, m->h1, m->w1, SB_CNN_CONV2_K);
        sb_model_bind(&c, PTRS(m->grad[i]), PTRS(m->dconv2, m->relu1));
        return c;
    case SB_CNN_DENSE1_W:
    case SB_CNN_DENSE1_B:
        c = dense_call(i == SB_CNN_DENSE1_W ? SB_OP_dense_bwd_weights : SB_OP_dense_bwd_bias, n,
                       m->features, SB_CNN_HIDDEN);
        sb_model_bind(&c, PTRS(m->grad[i]), PTRS(m->ddense1, m->drop1));
        return c;
    case SB_CNN_DENSE2_W:
    case SB_CNN_DENSE2_B:
        c = dense_call(i == SB_CNN_DENSE2_W ? SB_OP_dense_bwd_weights : SB_OP_dense_bwd_bias, n,
                       SB_CNN_HIDDEN, SB_CNN_CLASSES);
        sb_model_bind(&c, PTRS(m->grad[i]), PTRS(m->dlogits, m->drop2));
        return c;
    case SB_CNN_PARAM_COUNT:
        break;
    }
    SB_ASSERT(!"no such parameter");
    return (sb_op_call){0};
}
