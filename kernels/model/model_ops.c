/* A model's ways of touching the outside: running an op through the
 * generic op call, telling the probe hook what came out (with the leaf
 * digests of the tensor when an op hashed them), and saying which op starts. */
#include "model_ops.h"

void sb_model_bind(sb_op_call *c, void *const out[], void *const in[])
{
    /* Every shape the model uses was checked when its buffers were sized. */
    sb_status s = sb_op_call_describe(c);
    SB_ASSERT(s == SB_OK);
    for (int i = 0; i < c->n_in; i++)
        c->in[i].data = in[i];
    for (int i = 0; i < c->n_out; i++)
        c->out[i].data = out[i];
}

void sb_model_call(const sb_kernel_table *k, sb_op_call *c, void *const out[],
                   void *const in[])
{
    sb_model_bind(c, out, in);
    sb_op_call_run(k, c);
}

void sb_model_probe_op(const sb_model_probe *p, const char *name, const sb_op_call *c,
                       int out_index, const char *const inputs[], int n_inputs,
                       const sb_leaf_digest *leaves)
{
    if (!p->hook)
        return;
    SB_ASSERT(out_index >= 0 && out_index < c->n_out);
    SB_ASSERT(n_inputs >= c->n_in);
    sb_probe_point pt = {
        .step = p->step,
        .name = name,
        .op = sb_op_name(c->op),
        .tensor = &c->out[out_index],
        .inputs = inputs,
        .n_inputs = n_inputs,
        .input_tensors = c->n_in > 0 ? c->in : NULL,
        .n_input_tensors = c->n_in,
        .bound = sb_op_call_bound,
        .bound_ctx = c,
        .out_index = out_index,
        .leaves = leaves,
    };
    p->hook(p->ctx, &pt);
}

void sb_model_state_names(sb_model_state_probes *s, sb_optimizer kind, const char *update_name)
{
    s->n = sb_op_roles_of(sb_optimizer_update_op(kind)).n_out - 1;
    s->probed = false;
    for (int j = 0; j < s->n; j++) {
        int len = snprintf(s->name[j], sizeof s->name[j], "%s.%s", update_name,
                           sb_optimizer_state_name(kind, j));
        SB_ASSERT(len > 0 && len < (int)sizeof s->name[j]);
    }
}

void sb_model_probe_update(const sb_model_probe *p, const char *update_name,
                           sb_model_state_probes *s, const sb_op_call *c,
                           const char *const in_names[], int n_names,
                           sb_leaf_digest *const leaves[])
{
    SB_ASSERT(c->n_out == 1 + s->n && n_names + s->n <= SB_OP_MAX_IN + SB_OP_MAX_OUT);
    const char *names[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    int n = 0;
    for (int i = 0; i < n_names; i++)
        names[n++] = in_names[i];
    for (int j = 0; s->probed && j < s->n; j++)
        names[n++] = s->name[j];
    for (int j = 0; j < c->n_out; j++)
        sb_model_probe_op(p, j == 0 ? update_name : s->name[j - 1], c, j, names, n,
                          leaves ? leaves[j] : NULL);
    s->probed = true;
}

const char *sb_model_probe_step(const sb_model_probe *p, sb_optimizer kind, int64_t t,
                                int32_t *holder)
{
    static const char *const names[SB_OPTIM_COUNT] = {
        [SB_OPTIM_ADAM] = "adam.step", [SB_OPTIM_ADAMW] = "adamw.step"};
    if (!sb_optimizer_counts_steps(kind))
        return NULL;
    SB_ASSERT(names[kind] != NULL && t >= 1 && t <= INT32_MAX);
    *holder = (int32_t)t;
    const sb_tensor step = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {1}, .data = holder};
    sb_model_probe_source(p, names[kind], &step);
    return names[kind];
}

void sb_model_probe_source(const sb_model_probe *p, const char *name, const sb_tensor *t)
{
    if (!p->hook)
        return;
    sb_probe_point pt = {
        .step = p->step,
        .name = name,
        .op = "source",
        .tensor = t,
    };
    p->hook(p->ctx, &pt);
}

void sb_model_op_start(const sb_model_probe *p, const char *name, sb_op op)
{
    if (p->op_start)
        p->op_start(p->ctx, p->step, name, sb_op_name(op));
}

void sb_model_eval_set(const sb_kernel_table *k, const sb_model_probe *p, int n, int classes,
                       float *logits, float *prob, int32_t *labels, const char *logits_name,
                       float *loss, float *accuracy)
{
    sb_op_call c = {.op = SB_OP_xent_loss, .cls = {.n = n, .k = classes}};
    sb_model_op_start(p, "eval.loss", c.op);
    sb_model_call(k, &c, (void *const[]){loss}, (void *const[]){logits, labels});
    sb_model_probe_op(p, "eval.loss", &c, 0, (const char *const[]){logits_name, "eval.labels"}, 2,
                      NULL);
    c.op = SB_OP_softmax_fwd;
    sb_model_op_start(p, "softmax.eval.prob", c.op);
    sb_model_call(k, &c, (void *const[]){prob}, (void *const[]){logits});
    sb_model_probe_op(p, "softmax.eval.prob", &c, 0, (const char *const[]){logits_name}, 1, NULL);
    c.op = SB_OP_accuracy;
    sb_model_op_start(p, "eval.accuracy", c.op);
    sb_model_call(k, &c, (void *const[]){accuracy}, (void *const[]){prob, labels});
    sb_model_probe_op(p, "eval.accuracy", &c, 0,
                      (const char *const[]){"softmax.eval.prob", "eval.labels"}, 2, NULL);
}
