/* One configuration of a case, in this process: the `run` child.
 *
 * A kernel case draws its inputs from the counter-based RNG, runs its op once
 * and probes inputs and outputs; a training case loads its data set and
 * trains with the probe hook at every op boundary. The sink appends every
 * probe to the trace and dumps the one the locator asked for, or every probe
 * of one step (--dump-all) with a manifest of their ops and inputs. */
#include <errno.h>
#include <omp.h>
#include <string.h>

#include "samebits.h"
#include "sb_rng.h"
#include "run/batch_run.h"
#include "support/support.h"
#include "trace/trace_stream.h"

/* ---- the sink ------------------------------------------------------------- */

/* <dump_dir>/<name><suffix> (with a dump list <dump_dir>/<step>/<name><suffix>,
 * the step's folder made here); false (and s->err) when it does not fit or
 * cannot be made. */
static bool dump_path(sb_run_sink *s, char path[1024], int64_t step, const char *name,
                      const char *suffix)
{
    int n = s->o->dump_list
        ? snprintf(path, 1024, "%s/%lld/%s%s", s->o->dump_dir, (long long)step, name, suffix)
        : snprintf(path, 1024, "%s/%s%s", s->o->dump_dir, name, suffix);
    if (n >= 0 && n < 1024 && s->o->dump_list) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%lld", s->o->dump_dir, (long long)step);
        return sb_mkdir_parents(dir, s->err, sizeof s->err);
    }
    if (n >= 0 && n < 1024)
        return true;
    sb_err_set(s->err, sizeof s->err, "%.200s: dump path too long", s->o->dump_dir);
    return false;
}

/* --dump-all starts the manifest empty, so that an earlier run's lines
 * cannot pass for this one's. */
static void manifest_create(sb_run_sink *s)
{
    char path[1024];
    if (!dump_path(s, path, 0, "manifest", ".tsv")) {
        s->status = SB_ERR_USAGE;
        return;
    }
    FILE *f = fopen(path, "w");
    if (!f || fclose(f) != 0) {
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write: %s", path, strerror(errno));
        s->status = SB_ERR_IO;
    }
}

/* The stream is opened before the first probe, so that a run that dies at
 * once still leaves a stream that says so. */
static void stream_open(sb_run_sink *s)
{
    s->stream = malloc(sizeof *s->stream);
    if (!s->stream) {
        s->status = SB_ERR_NOMEM;
        return;
    }
    s->status = sb_trace_stream_open(s->stream, s->o->stream_path, s->err, sizeof s->err);
    if (s->status != SB_OK) {
        free(s->stream);
        s->stream = NULL;
    }
}

void sb_run_sink_init(sb_run_sink *s, sb_trace *t, const sb_run_options *o)
{
    memset(s, 0, sizeof *s);
    s->trace = t;
    s->o = o;
    /* a dump goes into its folder, made here when missing */
    if (o && o->dump_dir && (o->dump_all || o->dump_probe || o->dump_list) &&
        !sb_mkdir_parents(o->dump_dir, s->err, sizeof s->err))
        s->status = SB_ERR_IO;
    if (s->status == SB_OK && o && o->dump_list) {
        s->list_left = o->dump_list->n;
        s->list_dumped = calloc((size_t)o->dump_list->n + 1, sizeof *s->list_dumped);
        if (!s->list_dumped)
            s->status = SB_ERR_NOMEM;
    }
    if (s->status == SB_OK && o && o->dump_all && o->dump_dir)
        manifest_create(s);
    if (s->status == SB_OK && o && o->stream_path)
        stream_open(s);
}

void sb_run_sink_close(sb_run_sink *s)
{
    free(s->list_dumped);
    s->list_dumped = NULL;
    if (!s->stream)
        return;
    sb_trace_stream_close(s->stream);
    free(s->stream);
    s->stream = NULL;
}

/* A stream that cannot be written fails the run: a crash it should have
 * located would otherwise pass unlocated. */
static void stream_failed(sb_run_sink *s, sb_status st)
{
    s->status = st;
    sb_err_set(s->err, sizeof s->err, "%.200s: cannot write the trace stream (%s)",
               s->o->stream_path, sb_status_name(st));
}

void sb_run_sink_op_start(void *ctx, int64_t step, const char *probe, const char *op)
{
    sb_run_sink *s = ctx;
    if (s->status != SB_OK || !s->stream)
        return;
    sb_status st = sb_trace_stream_start(s->stream, step, probe, op);
    if (st != SB_OK)
        stream_failed(s, st);
}

/* The item of the dump list that p is and that is not written yet, or -1. */
static int list_item(const sb_run_sink *s, const sb_probe_point *p)
{
    const sb_dump_list *l = s->o ? s->o->dump_list : NULL;
    for (int i = 0; l && s->list_dumped && i < l->n; i++)
        if (!s->list_dumped[i] && l->items[i].step == p->step &&
            strcmp(l->items[i].probe, p->name) == 0)
            return i;
    return -1;
}

static bool dump_wanted(const sb_run_sink *s, const sb_probe_point *p)
{
    const sb_run_options *o = s->o;
    if (o && o->dump_list)
        return list_item(s, p) >= 0;
    if (!o || p->step != o->dump_step)
        return false;
    if (o->dump_all)
        return true;
    return o->dump_probe && !s->dumped && strcmp(p->name, o->dump_probe) == 0;
}

static sb_status dump_tensor(sb_run_sink *s, int64_t step, const char *name,
                             const char *suffix, const sb_tensor *t)
{
    char path[1024], file_suffix[40];
    snprintf(file_suffix, sizeof file_suffix, "%s.npy", suffix);
    if (!dump_path(s, path, step, name, file_suffix))
        return SB_ERR_USAGE;
    sb_status st = sb_npy_write(path, t);
    if (st != SB_OK)
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write (%s)", path, sb_status_name(st));
    return st;
}

/* One manifest line: name, op, and the input names joined by commas ("-"
 * for none), tab-separated; probe names have no tab, space or comma. */
static sb_status manifest_add(sb_run_sink *s, const sb_probe_point *p)
{
    char path[1024];
    if (!dump_path(s, path, 0, "manifest", ".tsv"))
        return SB_ERR_USAGE;
    FILE *f = fopen(path, "a");
    if (!f) {
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write: %s", path, strerror(errno));
        return SB_ERR_IO;
    }
    fprintf(f, "%s\t%s\t", p->name, p->op);
    if (p->n_inputs == 0)
        fputs("-", f);
    for (int i = 0; i < p->n_inputs; i++)
        fprintf(f, i ? ",%s" : "%s", p->inputs[i]);
    fputc('\n', f);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write", path);
        return SB_ERR_IO;
    }
    return SB_OK;
}

/* In --dump-all a name must not repeat within the step: its files would
 * overwrite the earlier record's. The record just added is the last one. */
static bool name_repeats_in_step(const sb_run_sink *s, const sb_probe_point *p)
{
    long at = sb_trace_find_latest(s->trace, p->name, s->trace->n_records - 1);
    return at >= 0 && s->trace->records[at].step == p->step;
}

/* <probe>.bound.npy: the op's bound, zeros for an exact op. */
static sb_status dump_bound(sb_run_sink *s, const sb_probe_point *p)
{
    sb_tensor bound = *p->tensor;
    bound.dtype = SB_DTYPE_F32;
    size_t count = sb_tensor_count(&bound);
    float *b = calloc(count ? count : 1, sizeof *b);
    if (!b)
        return SB_ERR_NOMEM;
    if (p->bound)
        p->bound(b, p->bound_ctx, p->out_index);
    bound.data = b;
    sb_status st = dump_tensor(s, p->step, p->name, ".bound", &bound);
    free(b);
    return st;
}

/* <probe>.npy, <probe>.bound.npy (zeros for an exact op, none when no
 * bound is known: harness/FORMATS.md) and <probe>.in<i>.npy for each live
 * input. */
static sb_status dump_probe(sb_run_sink *s, const sb_probe_point *p)
{
    if (!s->o->dump_dir || strchr(p->name, '/')) {
        sb_err_set(s->err, sizeof s->err, "cannot dump probe %.200s: %s", p->name,
                   s->o->dump_dir ? "name has a '/'" : "no dump directory");
        return SB_ERR_USAGE;
    }
    sb_status st = dump_tensor(s, p->step, p->name, "", p->tensor);
    if (st == SB_OK && (p->bound || p->exact || sb_op_name_exact(p->op)))
        st = dump_bound(s, p);
    for (int i = 0; st == SB_OK && i < p->n_input_tensors; i++) {
        char suffix[24];
        snprintf(suffix, sizeof suffix, ".in%d", i);
        st = dump_tensor(s, p->step, p->name, suffix, &p->input_tensors[i]);
    }
    if (st == SB_OK && s->o->dump_all)
        st = manifest_add(s, p);
    return st;
}

void sb_run_sink_probe(void *ctx, const sb_probe_point *p)
{
    sb_run_sink *s = ctx;
    if (s->status != SB_OK)
        return;
    sb_probe_point untrusted;
    if (p->leaves && !s->trust_leaves) {
        untrusted = *p;
        untrusted.leaves = NULL;
        p = &untrusted;
    }
    s->status = sb_trace_add_probe(s->trace, p);
    if (s->status != SB_OK) {
        sb_err_set(s->err, sizeof s->err, "probe %.200s: cannot add to the trace (%s)",
                   p->name, sb_status_name(s->status));
        return;
    }
    if (s->stream) {
        sb_status st = sb_trace_stream_record(s->stream, &s->trace->records[s->trace->n_records - 1]);
        if (st != SB_OK) {
            stream_failed(s, st);
            return;
        }
    }
    if (!dump_wanted(s, p))
        return;
    if (s->o->dump_all && name_repeats_in_step(s, p)) {
        sb_err_set(s->err, sizeof s->err,
                   "probe %.160s appears twice at step %lld: cannot dump both", p->name,
                   (long long)p->step);
        s->status = SB_ERR_INPUT;
        return;
    }
    int item = list_item(s, p);
    s->status = dump_probe(s, p);
    if (item >= 0 && s->status == SB_OK) {
        s->list_dumped[item] = true;
        s->list_left--;
    }
    s->dumped = s->status == SB_OK && (item < 0 || s->list_left == 0);
}

sb_status sb_run_sink_finish(sb_run_sink *s, char *err, size_t errlen)
{
    const sb_dump_list *l = s->o ? s->o->dump_list : NULL;
    if (s->status == SB_OK && l && s->list_left > 0) {
        int i = 0;
        while (s->list_dumped[i])
            i++;
        sb_err_set(s->err, sizeof s->err, "probe %.160s at step %lld never happened (and %d "
                   "more of the dump list)", l->items[i].probe, (long long)l->items[i].step,
                   s->list_left - 1);
        s->status = SB_ERR_INPUT;
    }
    sb_run_sink_close(s);
    if (s->status == SB_OK && s->o && (s->o->dump_probe || s->o->dump_all) && !s->dumped) {
        char step[32];
        snprintf(step, sizeof step, "%lld", (long long)s->o->dump_step);
        if (s->o->dump_all)
            sb_err_set(s->err, sizeof s->err, "no probe at step %s", step);
        else
            sb_err_set(s->err, sizeof s->err, "probe %.160s at step %s never happened",
                       s->o->dump_probe, step);
        s->status = SB_ERR_INPUT;
    }
    if (s->status != SB_OK)
        sb_err_set(err, errlen, "%s", s->err);
    return s->status;
}

const sb_kernel_table *sb_case_kernels(const sb_case *c)
{
    /* a rank mutant's fault is in the data-parallel step (train.rank_fault) */
    if (c->mutant[0] == '\0' || sb_rank_mutant_find(c->mutant) >= 0)
        return sb_kernels(c->family);
    const sb_kernel_table *k = sb_kernels_mutant(c->mutant);
    SB_ASSERT(k != NULL);   /* the case loader checked the name */
    return k;
}

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

sb_model_run sb_case_model_run(const sb_case *c, const sb_kernel_table *k,
                               const sb_train_config *cfg, const char *data_dir)
{
    return (sb_model_run){
        .k = k, .cfg = cfg, .dataset = c->dataset, .data_dir = data_dir,
        .train_begin = c->train_begin, .train_end = c->train_end,
        .test_begin = c->test_begin, .test_end = c->test_end, .what = c->path,
    };
}

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
