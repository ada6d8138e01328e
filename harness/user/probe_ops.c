/* The probe helpers of sb_probe_ops.h: a user's program probes an op's output
 * with one call, its inputs named by the latest probes of their data
 * pointers, the op's name and bound filled from the kernel list. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sb_harness.h"

sb_probes sb_probes_begin(sb_probe_fn *probe, void *probe_ctx)
{
    return (sb_probes){.probe = probe, .ctx = probe_ctx, .status = SB_OK};
}

sb_status sb_probes_end(sb_probes *pc)
{
    for (size_t i = 0; i < pc->n_names; i++)
        free(pc->names[i].name);
    free(pc->names);
    pc->names = NULL;
    pc->n_names = pc->cap_names = 0;
    return pc->status;
}

/* The latest probe of data, or SB_TRACE_UNTRACED. */
static const char *name_of(const sb_probes *pc, const void *data)
{
    for (size_t i = 0; i < pc->n_names; i++)
        if (pc->names[i].data == data)
            return pc->names[i].name;
    return SB_TRACE_UNTRACED;
}

static sb_status fail(sb_probes *pc, sb_status st)
{
    if (pc->status == SB_OK)
        pc->status = st;
    return st;
}

/* data's latest probe is now `name`. */
static sb_status name_set(sb_probes *pc, const void *data, const char *name)
{
    char *copy = malloc(strlen(name) + 1);
    if (!copy)
        return fail(pc, SB_ERR_NOMEM);
    strcpy(copy, name);
    for (size_t i = 0; i < pc->n_names; i++)
        if (pc->names[i].data == data) {
            free(pc->names[i].name);
            pc->names[i].name = copy;
            return SB_OK;
        }
    if (pc->n_names == pc->cap_names) {
        size_t cap = pc->cap_names ? 2 * pc->cap_names : 32;
        sb_probe_name *n = realloc(pc->names, cap * sizeof *n);
        if (!n) {
            free(copy);
            return fail(pc, SB_ERR_NOMEM);
        }
        pc->names = n;
        pc->cap_names = cap;
    }
    pc->names[pc->n_names++] = (sb_probe_name){data, copy};
    return SB_OK;
}

sb_status sb_probes_restored(sb_probes *pc, const void *data, const char *name)
{
    return name_set(pc, data, name);
}

sb_status sb_probe_source(sb_probes *pc, int64_t step, const char *name, sb_tensor t)
{
    sb_probe_point p = {.step = step, .name = name, .op = "source", .tensor = &t};
    pc->probe(pc->ctx, &p);
    return name_set(pc, t.data, name);
}

/* The probe of out made from in[0..n_in), and after them `extra` (a name
 * already resolved, or NULL): state an op updates in place. */
static sb_status probe_out(sb_probes *pc, int64_t step, const char *name, const char *op,
                           const sb_tensor *out, int n_in, const sb_tensor *in, const char *extra,
                           sb_bound_fn *bound, const void *bound_ctx)
{
    if (n_in < 0 || n_in > SB_OP_MAX_IN + 1) {
        fprintf(stderr, "sb_probe_op: step %lld probe %s: %d inputs, at most %d\n",
                (long long)step, name, n_in, SB_OP_MAX_IN + 1);
        return fail(pc, SB_ERR_USAGE);
    }
    const char *inputs[SB_OP_MAX_IN + 2];
    for (int i = 0; i < n_in; i++)
        inputs[i] = name_of(pc, in[i].data);
    int n_names = n_in;
    if (extra)
        inputs[n_names++] = extra;
    /* no bound: an op without a reduction (sb_probe_ops.h), any difference
     * a bug */
    sb_probe_point p = {.step = step, .name = name, .op = op, .tensor = out,
                        .inputs = inputs, .n_inputs = n_names,
                        .input_tensors = n_in > 0 ? in : NULL, .n_input_tensors = n_in,
                        .bound = bound, .bound_ctx = bound_ctx, .exact = bound == NULL};
    pc->probe(pc->ctx, &p);
    return name_set(pc, out->data, name);
}

sb_status sb_probe_op(sb_probes *pc, int64_t step, const char *name, const char *op,
                      sb_tensor out, int n_in, const sb_tensor *in, sb_bound_fn *bound,
                      const void *bound_ctx)
{
    return probe_out(pc, step, name, op, &out, n_in, in, NULL, bound, bound_ctx);
}

/* The probe of op call c, described (with status st) and its tensors' data
 * set. */
static sb_status probe_call(sb_probes *pc, int64_t step, const char *name, const sb_op_call *c,
                            sb_status st)
{
    if (st != SB_OK) {
        fprintf(stderr, "sb_probe_%s: step %lld probe %s: the shape is absurd (%s)\n",
                sb_op_name(c->op), (long long)step, name, sb_status_name(st));
        return fail(pc, st);
    }
    /* an update names the parameter it updated, as its input too */
    const char *extra = NULL;
    if (sb_op_updates_in_place(c->op)) {
        extra = name_of(pc, c->out[0].data);
        if (strcmp(extra, SB_TRACE_UNTRACED) == 0)
            extra = NULL;
    }
    return probe_out(pc, step, name, sb_op_name(c->op), &c->out[0], c->n_in, c->in, extra,
                     sb_op_has_reduction(c->op) ? sb_op_call_bound : NULL, c);
}

/* ---- one helper per op of the kernel list -------------------------------- */

/* The parameters of the outputs and inputs, by role, as kernels.def's
 * signatures have them (sb_op_probes.h declares them from those: a
 * difference does not compile). */
#define PROBE_IN_x const float *
#define PROBE_IN_w const float *
#define PROBE_IN_b const float *
#define PROBE_IN_y const float *
#define PROBE_IN_z const float *
#define PROBE_IN_labels const int32_t *
#define PROBE_IN_scalar const float *
#define PROBE_IN_v const float *
#define PROBE_IN_row const float *
/* one output's type: float, but for an argmax's index (a one-output op) */
#define PROBE_OUT_x float *
#define PROBE_OUT_w float *
#define PROBE_OUT_b float *
#define PROBE_OUT_y float *
#define PROBE_OUT_z float *
#define PROBE_OUT_scalar float *
#define PROBE_OUT_v float *
#define PROBE_OUT_row float *
#define PROBE_OUT_index int32_t *
#define PROBE_DECL_OUT1(a) PROBE_OUT_##a o0
#define PROBE_DECL_OUT2(a, b) float *o0, float *o1
#define PROBE_DECL_OUT3(a, b, c_) float *o0, float *o1, float *o2
#define PROBE_DECL_IN0()
#define PROBE_DECL_IN1(a) , PROBE_IN_##a i0
#define PROBE_DECL_IN2(a, b) PROBE_DECL_IN1(a), PROBE_IN_##b i1
#define PROBE_DECL_IN3(a, b, c_) PROBE_DECL_IN2(a, b), PROBE_IN_##c_ i2
#define PROBE_DECL_IN4(a, b, c_, d) PROBE_DECL_IN3(a, b, c_), PROBE_IN_##d i3
/* ... into the op call c */
#define PROBE_SET_OUT1(a) c.out[0].data = o0;
#define PROBE_SET_OUT2(a, b) PROBE_SET_OUT1(a) c.out[1].data = o1;
#define PROBE_SET_OUT3(a, b, c_) PROBE_SET_OUT2(a, b) c.out[2].data = o2;
#define PROBE_SET_IN0()
#define PROBE_SET_IN1(a) c.in[0].data = (void *)(uintptr_t)i0;
#define PROBE_SET_IN2(a, b) PROBE_SET_IN1(a) c.in[1].data = (void *)(uintptr_t)i1;
#define PROBE_SET_IN3(a, b, c_) PROBE_SET_IN2(a, b) c.in[2].data = (void *)(uintptr_t)i2;
#define PROBE_SET_IN4(a, b, c_, d) PROBE_SET_IN3(a, b, c_) c.in[3].data = (void *)(uintptr_t)i3;
/* The params: the signature's tail, and where the op call keeps them. */
#define PROBE_TAIL_conv , const sb_conv_shape *s
#define PROBE_TAIL_dense , const sb_dense_shape *s
#define PROBE_TAIL_pool , const sb_pool_shape *s
#define PROBE_TAIL_cls , const sb_class_shape *s
#define PROBE_TAIL_clsd , const sb_class_shape *s
#define PROBE_TAIL_count , size_t n
#define PROBE_TAIL_dropout , const sb_dropout_params *d, size_t n
#define PROBE_TAIL_sgd , const sb_optim_params *o, size_t n
#define PROBE_TAIL_rmsprop , const sb_optim_params *o, size_t n
#define PROBE_TAIL_adam , const sb_optim_params *o, int64_t t, size_t n
#define PROBE_TAIL_adadelta , const sb_optim_params *o, size_t n
#define PROBE_TAIL_embed , const sb_embed_shape *s
#define PROBE_TAIL_norm , const sb_norm_shape *s
#define PROBE_TAIL_attn , const sb_attn_shape *s
#define PROBE_TAIL_rope , const sb_rope_shape *s
#define PROBE_TAIL_adamw , const sb_optim_params *o, int64_t t, size_t n
#define PROBE_TAIL_nll , const sb_nll_shape *s
#define PROBE_TAIL_reduce , const sb_reduce_shape *s
#define PROBE_TAIL_window , const sb_window_shape *s
#define PROBE_FILL_conv c.conv = *s;
#define PROBE_FILL_dense c.dense = *s;
#define PROBE_FILL_pool c.pool = *s;
#define PROBE_FILL_cls c.cls = *s;
#define PROBE_FILL_clsd c.cls = *s;
#define PROBE_FILL_count c.n = n;
#define PROBE_FILL_dropout c.dropout = *d; c.n = n;
#define PROBE_FILL_sgd c.optim = *o; c.n = n;
#define PROBE_FILL_rmsprop c.optim = *o; c.n = n;
#define PROBE_FILL_adam c.optim = *o; c.t = t; c.n = n;
#define PROBE_FILL_adadelta c.optim = *o; c.n = n;
#define PROBE_FILL_embed c.embed = *s;
#define PROBE_FILL_norm c.norm = *s;
#define PROBE_FILL_attn c.attn = *s;
#define PROBE_FILL_rope c.rope = *s;
#define PROBE_FILL_adamw c.optim = *o; c.t = t; c.n = n;
#define PROBE_FILL_nll c.nll = *s;
#define PROBE_FILL_reduce c.reduce = *s;
#define PROBE_FILL_window c.window = *s;

#define SB_OP(name, area, params, outputs, inputs, ...)                                   \
    sb_status sb_probe_##name(sb_probes *pc, int64_t step, const char *probe,             \
                              PROBE_DECL_##outputs PROBE_DECL_##inputs PROBE_TAIL_##params) \
    {                                                                                      \
        sb_op_call c = {.op = SB_OP_##name};                                               \
        PROBE_FILL_##params                                                                \
        sb_status st = sb_op_call_describe(&c);                                            \
        PROBE_SET_##outputs                                                                \
        PROBE_SET_##inputs                                                                 \
        return probe_call(pc, step, probe, &c, st);                                        \
    }
#include "kernels.def"
#undef SB_OP
