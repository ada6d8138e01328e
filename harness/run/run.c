/* One configuration of a case, in this process: the `run` child.
 *
 * A kernel case draws its inputs from the counter-based RNG, runs its op once
 * and probes inputs and outputs; a training case loads its data set and
 * trains with the probe hook at every op boundary. Either probes into the
 * sink (sink.c), which writes the trace and the dumps. */
#include <omp.h>
#include <string.h>

#include "sb_harness.h"
#include "sb_rng.h"
#include "run/batch_run.h"
#include "run/checkpoint.h"
#include "support/support.h"

/* ---- kernel cases ----------------------------------------------------------- */

static void fill_labels(int32_t *labels, size_t n, int k, uint64_t seed, uint32_t stream)
{
    for (size_t j = 0; j < n; j++)
        labels[j] = (int32_t)(sb_rng_u32(seed, stream, 0, j) % (uint32_t)k);
}

typedef struct kernel_buffers {
    sb_op_call call;
    sb_tensor state0[SB_OP_MAX_OUT];    /* optimiser state before the update */
    int n_state;
} kernel_buffers;

static void kernel_buffers_free(kernel_buffers *b)
{
    for (int i = 0; i < b->call.n_in; i++)
        free(b->call.in[i].data);
    for (int j = 0; j < b->call.n_out; j++)
        free(b->call.out[j].data);
    for (int j = 0; j < b->n_state; j++)
        free(b->state0[j].data);
}

static sb_status kernel_buffers_alloc(kernel_buffers *b)
{
    sb_op_call *call = &b->call;
    for (int i = 0; i < call->n_in; i++)
        if (!(call->in[i].data = calloc(1, sb_tensor_bytes(&call->in[i]))))
            return SB_ERR_NOMEM;
    for (int j = 0; j < call->n_out; j++)
        if (!(call->out[j].data = calloc(1, sb_tensor_bytes(&call->out[j]))))
            return SB_ERR_NOMEM;
    return SB_OK;
}

/* Inputs in [-1, 1) from stream SB_STREAM_CASE_INPUT + i, labels (classes,
 * tokens) in [0, sb_op_call_label_range);
 * optimiser state from the streams after the inputs', kept as it was. */
static sb_status kernel_inputs_fill(kernel_buffers *b, uint64_t seed)
{
    sb_op_call *call = &b->call;
    for (int i = 0; i < call->n_in; i++) {
        sb_tensor *t = &call->in[i];
        uint32_t stream = SB_STREAM_CASE_INPUT + (uint32_t)i;
        if (t->dtype == SB_DTYPE_I32)
            fill_labels(t->data, sb_tensor_count(t), sb_op_call_label_range(call), seed, stream);
        else
            sb_rng_fill_uniform(t->data, sb_tensor_count(t), -1.0f, 1.0f, seed, stream, 0);
    }
    /* optimiser state starts from drawn values and is an input too */
    if (!sb_op_updates_in_place(call->op))
        return SB_OK;
    for (int j = 0; j < call->n_out; j++) {
        sb_tensor *t = &call->out[j];
        uint32_t stream = SB_STREAM_CASE_INPUT + (uint32_t)(call->n_in + j);
        /* weights and moments take either sign, squared-gradient state not */
        float lo = sb_role_nonnegative(sb_op_roles_of(call->op).out[j]) ? 0.0f : -1.0f;
        sb_rng_fill_uniform(t->data, sb_tensor_count(t), lo, 1.0f, seed, stream, 0);
        b->state0[j] = *t;
        if (!(b->state0[j].data = malloc(sb_tensor_bytes(t))))
            return SB_ERR_NOMEM;
        memcpy(b->state0[j].data, t->data, sb_tensor_bytes(t));
        b->n_state = j + 1;
    }
    return SB_OK;
}

static sb_status run_kernel(const sb_case *c, sb_run_sink *sink, char *err, size_t errlen)
{
    kernel_buffers b;
    memset(&b, 0, sizeof b);
    b.call = c->call;
    if (sb_op_call_describe(&b.call) != SB_OK) {
        sb_err_set(err, errlen, "%s: the shape of op %s is absurd", c->path,
                   sb_op_name(c->call.op));
        return SB_ERR_INPUT;
    }
    sb_status st = kernel_buffers_alloc(&b);
    if (st == SB_OK)
        st = kernel_inputs_fill(&b, c->seed);
    if (st != SB_OK) {
        sb_err_set(err, errlen, "%s: %s for the op's tensors", c->path, sb_status_name(st));
        kernel_buffers_free(&b);
        return st;
    }

    /* Every tensor the op reads is a source probe "input.<i>": the call's
     * inputs, then the state it updates in place. */
    int n_inputs = b.call.n_in + b.n_state;
    char names[SB_OP_MAX_IN + SB_OP_MAX_OUT][24];   /* room for any int */
    const char *input_names[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    sb_tensor inputs[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    for (int i = 0; i < n_inputs; i++) {
        snprintf(names[i], sizeof names[i], "input.%d", i);
        input_names[i] = names[i];
        inputs[i] = i < b.call.n_in ? b.call.in[i] : b.state0[i - b.call.n_in];
        sb_probe_point p = {.step = 0, .name = names[i], .op = "source", .tensor = &inputs[i]};
        sb_run_sink_probe(sink, &p);
    }

    const char *op = sb_op_name(b.call.op);
    char out0[96];
    snprintf(out0, sizeof out0, "%s.out0", op);
    sb_run_sink_op_start(sink, 0, out0, op);
    sb_op_call_run(sb_case_kernels(c), &b.call);

    for (int j = 0; j < b.call.n_out; j++) {
        char name[96];
        snprintf(name, sizeof name, "%s.out%d", op, j);
        sb_probe_point p = {
            .step = 0, .name = name, .op = op, .tensor = &b.call.out[j],
            .inputs = input_names, .n_inputs = n_inputs,
            .input_tensors = inputs, .n_input_tensors = n_inputs,
            .bound = sb_op_has_reduction(b.call.op) ? sb_op_call_bound : NULL,
            .bound_ctx = &b.call, .out_index = j,
        };
        sb_run_sink_probe(sink, &p);
    }
    kernel_buffers_free(&b);
    return SB_OK;
}

/* ---- training cases --------------------------------------------------------- */

/* The case's model, by name from the registry, loads its data set and trains. */
static sb_status run_train(const sb_case *c, const sb_run_options *o, sb_run_sink *sink,
                           char *err, size_t errlen)
{
    const sb_model_kind *model = sb_model_find(c->model);
    SB_ASSERT(model != NULL);   /* the case loader checked the name */
    /* A dump is all a dumping run is for: train only up to its step. The
     * smallest of the limits wins. A run we cut short is compared by its
     * steps alone, so the epoch it cuts is not evaluated; a case's own
     * max_steps keeps the evaluation its golden has. */
    sb_train_config cfg = c->train;
    cfg.combine = o->combine;
    bool dumping = o->dump_probe || o->dump_all || o->dump_list;
    int64_t last = o->dump_list ? sb_dump_list_last_step(o->dump_list) : o->dump_step;
    if (dumping && (cfg.max_steps == 0 || cfg.max_steps > last + 1)) {
        cfg.max_steps = last + 1;
        cfg.cut_unevaluated = true;
    }
    if (o->max_steps > 0 && (cfg.max_steps == 0 || cfg.max_steps > o->max_steps)) {
        cfg.max_steps = o->max_steps;
        cfg.cut_unevaluated = true;
    }
    sb_epoch_metrics *metrics = calloc((size_t)model->evaluations(&cfg), sizeof *metrics);
    if (!metrics)
        return SB_ERR_NOMEM;
    /* The model hashes the leaves of a tensor while it is in cache with our
     * leaf hash, and the sink takes the root from those digests. */
    sb_leaf_hash_fn *leaf_hash = o->no_fused_hash ? NULL : sb_hash_leaf;
    sink->trust_leaves = leaf_hash != NULL;
    sb_model_run r = sb_case_model_run(c, sb_case_kernels(c), &cfg, o->data_dir);
    r.hook = sb_run_sink_probe, r.hook_ctx = sink, r.op_start = sb_run_sink_op_start;
    r.leaf_hash = leaf_hash;
    sb_checkpoint_file file = {.c = c, .path = o->checkpoint};
    sb_train_checkpoint ck = sb_checkpoint_bind(&file, o->stop_at);
    r.checkpoint = o->checkpoint ? &ck : NULL;
    int n_metrics = 0;
    sb_status st = model->run(&r, metrics, &n_metrics, err, errlen);
    for (int e = 0; st == SB_OK && e < n_metrics; e++)
        st = sb_trace_add_metrics(sink->trace, &metrics[e]);
    free(metrics);
    return st;
}

sb_status sb_run_case(const sb_case *c, const sb_run_options *o, sb_trace *out,
                      char *err, size_t errlen)
{
    if (!c || !o || !out || o->threads < 0 || o->max_steps < 0 ||
        (o->dump_probe && !o->dump_dir) ||
        (o->dump_all && (o->dump_probe || !o->dump_dir)) ||
        (o->dump_list && (o->dump_probe || o->dump_all || !o->dump_dir)))
        return SB_ERR_USAGE;
    if (c->kind == SB_CASE_COMMAND) {
        sb_err_set(err, errlen, "%s: a kind = command case runs its own command: sweep, "
                   "golden or locate it", c->path);
        return SB_ERR_USAGE;
    }
    if (o->checkpoint && (c->kind != SB_CASE_TRAIN || c->run_batch > 0 || c->n_ranks > 0 ||
                          c->train.reduce != SB_REDUCE_NONE)) {
        sb_err_set(err, errlen, "%s: a checkpoint is of a training case's own run (no batch "
                   "axis, no [parallel] section)", c->path);
        return SB_ERR_USAGE;
    }
    if (o->checkpoint && o->stop_at > 0 && o->stop_at >= sb_case_train_steps(c)) {
        sb_err_set(err, errlen, "%s: --stop-at %lld: K must be in 1..%lld (the run's last "
                   "step)", c->path, (long long)o->stop_at,
                   (long long)sb_case_train_steps(c) - 1);
        return SB_ERR_USAGE;
    }
    if (o->threads > 0)
        omp_set_num_threads(o->threads);

    /* the header names the case's reference configuration (a golden is the
     * run at it), so every trace of a case has the same header */
    sb_trace_header_from_case(&out->header, c, c->reference_threads);

    sb_run_sink sink;
    sb_run_sink_init(&sink, out, o);
    sb_status st = sink.status;     /* a stream that could not be opened */
    if (st != SB_OK)
        sb_err_set(err, errlen, "%s", sink.err);
    else if (c->run_batch > 0)
        st = sb_run_batch(c, o, &sink, err, errlen);
    else
        st = c->kind == SB_CASE_KERNEL ? run_kernel(c, &sink, err, errlen)
                                       : run_train(c, o, &sink, err, errlen);
    if (st != SB_OK) {
        sb_run_sink_close(&sink);
        return st;
    }
    return sb_run_sink_finish(&sink, err, errlen);
}
