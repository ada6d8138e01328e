/* A run on the batch axis (`samebits run CASE --batch B`): the case's samples
 * computed inside batches of B samples, and a trace of each sample's slice.
 *
 * Each followed sample s (0 .. batch_samples-1) is put at each position of
 * a batch of B rows: first (row 0), middle (row B/2) and last (row B-1),
 * every other row holding another sample (the batch is padded with other
 * samples, different at each position). Every probe of that pass that is
 * per sample (a row per sample) is cut to the sample's row and recorded as
 * <position>.s<s>.<probe>, its inputs renamed alike; what the whole batch
 * shares (a model's parameters init.<param>, a kernel's weights) is
 * recorded once, whole, under its own name. So every batch size gives a
 * trace of the same records, and a trace at size B compares record by
 * record with the trace at the reference size: a record that differs is
 * a sample whose bits followed the batch it was computed in.
 *
 * A kernel case runs its op; the inputs of a sample are drawn from the
 * counter-based RNG by sample (row j of the case's own input tensor is
 * sample j), so a sample has the same inputs in every batch. A training
 * case runs its model's forward pass in evaluation mode from the initial
 * weights (sb_model_kind.samples_forward) on samples of its training range:
 * the CNN's images, char_gpt's windows. */
#include <stdlib.h>
#include <string.h>

#include "run/batch_run.h"
#include "sb_rng.h"
#include "support/support.h"

enum { POS_FIRST, POS_MIDDLE, POS_LAST, POS_COUNT };
static const char *const position_names[POS_COUNT] = {"first", "middle", "last"};

static int position_row(int pos, int batch)
{
    return pos == POS_FIRST ? 0 : pos == POS_MIDDLE ? batch / 2 : batch - 1;
}

/* The sample in row `row` of the batch that puts followed sample s at
 * position pos: s itself at its row; elsewhere samples after the followed
 * ones, a different run of them at each position, wrapping round a pool of
 * `pool` samples. */
static int64_t row_sample(const sb_case *c, int pos, int s, int row, int64_t pool)
{
    int batch = c->run_batch;
    if (row == position_row(pos, batch))
        return s;
    int64_t other = c->batch_samples + ((int64_t)(pos * c->batch_samples + s) * batch + row) %
                                           (pool - c->batch_samples);
    return other;
}

/* ---- slicing probes ------------------------------------------------------------ */

#define WHOLE_MAX 64
/* Room for a probe name: the divergence that names it keeps 128 bytes. */
enum { NAME_SIZE = 128 };

/* The probe hook of one pass: cuts each per-sample probe to the followed
 * sample's row and hands it to the run's sink. */
typedef struct slicer {
    sb_run_sink *sink;
    int batch, row;
    char prefix[32];                    /* "first.s0." */
    bool record_whole;                  /* the first pass records what is shared */
    char whole[WHOLE_MAX][128];         /* names of the probes recorded whole */
    int n_whole;
} slicer;

/* The slice's bound: the op's bound over the whole batch, cut alike. */
typedef struct slice_bound {
    const sb_probe_point *p;
    size_t count;                       /* elements of the whole tensor */
    size_t offset, per;                 /* the slice's first element and its length */
} slice_bound;

static void slice_bound_fn(float *bound, const void *ctx, int out_index)
{
    const slice_bound *sb = ctx;
    float *all = sb_floats_new(sb->count);
    sb->p->bound(all, sb->p->bound_ctx, out_index);
    memcpy(bound, all + sb->offset, sb->per * sizeof *bound);
    free(all);
}

static bool is_whole(const slicer *s, const char *name)
{
    for (int i = 0; i < s->n_whole; i++)
        if (strcmp(s->whole[i], name) == 0)
            return true;
    return false;
}

/* A model's parameters are batch-level: samples_forward probes them as
 * sources init.<param>; and so are its constants, sources const.<name>. */
static bool shared_source(const sb_probe_point *p)
{
    return strcmp(p->op, "source") == 0 &&
           (strncmp(p->name, "init.", 5) == 0 || strncmp(p->name, "const.", 6) == 0);
}

static void whole_probe(slicer *s, const sb_probe_point *p)
{
    if (!s->record_whole)
        return;
    SB_ASSERT(s->n_whole < WHOLE_MAX && strlen(p->name) < sizeof s->whole[0]);
    snprintf(s->whole[s->n_whole++], sizeof s->whole[0], "%s", p->name);
    sb_probe_point q = *p;
    q.leaves = NULL;
    sb_run_sink_probe(s->sink, &q);
}

static void slicer_probe(void *ctx, const sb_probe_point *p)
{
    slicer *s = ctx;
    if (shared_source(p)) {
        whole_probe(s, p);
        return;
    }
    const sb_tensor *t = p->tensor;
    size_t count = sb_tensor_count(t);
    SB_ASSERT(count % (size_t)s->batch == 0);   /* a row per sample */
    size_t per = count / (size_t)s->batch;
    sb_tensor slice = *t;
    slice.data = (char *)t->data + (size_t)s->row * per * sb_dtype_size(t->dtype);
    if (t->ndim > 1 && t->dim[0] == s->batch) {
        slice.dim[0] = 1;                       /* [n][...]: one row of it */
    } else {
        slice.ndim = 1;                         /* a flat vector of n rows */
        slice.dim[0] = (int64_t)per;
    }

    char name[NAME_SIZE], inames[SB_OP_MAX_IN + SB_OP_MAX_OUT][NAME_SIZE];
    const char *inputs[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    SB_ASSERT(p->n_inputs <= SB_OP_MAX_IN + SB_OP_MAX_OUT);
    snprintf(name, sizeof name, "%s%s", s->prefix, p->name);
    for (int i = 0; i < p->n_inputs; i++) {
        if (is_whole(s, p->inputs[i]))
            inputs[i] = p->inputs[i];
        else {
            snprintf(inames[i], sizeof inames[i], "%s%s", s->prefix, p->inputs[i]);
            inputs[i] = inames[i];
        }
    }
    slice_bound sb = {.p = p, .count = count, .offset = (size_t)s->row * per, .per = per};
    sb_probe_point q = {.step = p->step, .name = name, .op = p->op, .tensor = &slice,
                        .inputs = inputs, .n_inputs = p->n_inputs,
                        .bound = p->bound ? slice_bound_fn : NULL, .bound_ctx = &sb,
                        .out_index = p->out_index};
    sb_run_sink_probe(s->sink, &q);
}

/* A run that dumps for the locator (one probe, or a list) is done once it
 * has: the passes after it would only add records no one reads. */
static bool dump_done(const sb_run_sink *sink)
{
    return sink->o && (sink->o->dump_probe || sink->o->dump_list) && sink->dumped;
}

/* Sets up the slicer for the pass that puts followed sample s at pos. */
static void slicer_pass(slicer *sl, const sb_case *c, int pos, int s)
{
    sl->batch = c->run_batch;
    sl->row = position_row(pos, c->run_batch);
    sl->record_whole = pos == 0 && s == 0;
    snprintf(sl->prefix, sizeof sl->prefix, "%s.s%d.", position_names[pos], s);
}

/* ---- kernel cases ----------------------------------------------------------------- */

/* Row by row, the sample in each row: sample j's row of a per-sample input
 * is row j of that input as the case draws it whole (run.c): uniform in
 * [-1, 1) from stream SB_STREAM_CASE_INPUT + i at its elements' indices,
 * labels in 0..k-1. */
static void kernel_rows_fill(const sb_case *c, sb_tensor *t, int i, int pos, int s)
{
    size_t per = sb_tensor_count(t) / (size_t)c->run_batch;
    uint32_t stream = SB_STREAM_CASE_INPUT + (uint32_t)i;
    /* the RNG's index space is wide: any sample number works */
    const int64_t pool = INT32_MAX;
    for (int r = 0; r < c->run_batch; r++) {
        uint64_t first = (uint64_t)row_sample(c, pos, s, r, pool) * per;
        if (t->dtype == SB_DTYPE_I32) {
            int32_t *row = (int32_t *)t->data + (size_t)r * per;
            for (size_t j = 0; j < per; j++)
                row[j] = (int32_t)(sb_rng_u32(c->seed, stream, 0, first + j) %
                                   (uint32_t)sb_op_call_label_range(&c->call));
        } else {
            sb_rng_fill_uniform_from((float *)t->data + (size_t)r * per, per, -1.0f, 1.0f,
                                     c->seed, stream, 0, first);
        }
    }
}

static sb_status kernel_batch_run(const sb_case *c, sb_run_sink *sink, char *err, size_t errlen)
{
    sb_op_call call = c->call;
    sb_op_call_set_batch(&call, c->run_batch);
    if (sb_op_call_describe(&call) != SB_OK) {
        sb_err_set(err, errlen, "%s: the shape of op %s at batch %d is absurd", c->path,
                   sb_op_name(call.op), c->run_batch);
        return SB_ERR_INPUT;
    }
    const sb_op_roles roles = sb_op_roles_of(call.op);
    sb_status st = SB_OK;
    for (int i = 0; i < call.n_in; i++)
        if (!(call.in[i].data = calloc(1, sb_tensor_bytes(&call.in[i]))))
            st = SB_ERR_NOMEM;
    for (int j = 0; j < call.n_out; j++)
        if (!(call.out[j].data = calloc(1, sb_tensor_bytes(&call.out[j]))))
            st = SB_ERR_NOMEM;
    const sb_kernel_table *k = sb_case_kernels(c);
    const char *op = sb_op_name(call.op);
    char in_names[SB_OP_MAX_IN][24];
    const char *inputs[SB_OP_MAX_IN];
    for (int i = 0; i < call.n_in; i++) {
        snprintf(in_names[i], sizeof in_names[i], "input.%d", i);
        inputs[i] = in_names[i];
    }
    /* what the batch shares is drawn whole, as the case draws it */
    for (int i = 0; st == SB_OK && i < call.n_in; i++)
        if (!sb_role_per_sample(call.op, roles.in[i]))
            sb_rng_fill_uniform(call.in[i].data, sb_tensor_count(&call.in[i]), -1.0f, 1.0f,
                                c->seed, SB_STREAM_CASE_INPUT + (uint32_t)i, 0);
    slicer sl = {.sink = sink};
    for (int pos = 0; st == SB_OK && pos < POS_COUNT; pos++)
        for (int s = 0; s < c->batch_samples && !dump_done(sink); s++) {
            slicer_pass(&sl, c, pos, s);
            for (int i = 0; i < call.n_in; i++) {
                sb_probe_point p = {.name = inputs[i], .op = "source", .tensor = &call.in[i]};
                if (sb_role_per_sample(call.op, roles.in[i])) {
                    kernel_rows_fill(c, &call.in[i], i, pos, s);
                    slicer_probe(&sl, &p);
                } else {
                    whole_probe(&sl, &p);
                }
            }
            char out0[96];
            snprintf(out0, sizeof out0, "%s.out0", op);
            sb_run_sink_op_start(sink, 0, out0, op);
            sb_op_call_run(k, &call);
            sb_probe_point p = {.name = out0, .op = op, .tensor = &call.out[0],
                                .inputs = inputs, .n_inputs = call.n_in,
                                .bound = sb_op_has_reduction(call.op) ? sb_op_call_bound : NULL,
                                .bound_ctx = &call, .out_index = 0};
            slicer_probe(&sl, &p);
        }
    for (int i = 0; i < call.n_in; i++)
        free(call.in[i].data);
    for (int j = 0; j < call.n_out; j++)
        free(call.out[j].data);
    if (st != SB_OK)
        sb_err_set(err, errlen, "%s: %s for the op's tensors", c->path, sb_status_name(st));
    return st;
}

/* ---- training cases ------------------------------------------------------------------ */

static sb_status train_batch_run(const sb_case *c, const sb_run_options *o, sb_run_sink *sink,
                                 char *err, size_t errlen)
{
    const sb_model_kind *kind = sb_model_find(c->model);
    if (!kind->samples_open) {
        sb_err_set(err, errlen, "%s: model %s has no batch-axis forward pass yet", c->path,
                   c->model);
        return SB_ERR_INPUT;
    }
    slicer sl = {.sink = sink};
    sb_model_samples samples = {
        .run = {.k = sb_case_kernels(c), .cfg = &c->train, .dataset = c->dataset,
                .data_dir = o->data_dir, .train_begin = c->train_begin,
                .train_end = c->train_end, .hook = slicer_probe, .hook_ctx = &sl,
                .what = c->path},
    };
    sb_status st = kind->samples_open(&samples, err, errlen);
    if (st != SB_OK)
        return st;
    int64_t need = (int64_t)c->batch_samples + c->run_batch;
    if (samples.count < need) {
        sb_err_set(err, errlen, "%s: the batch axis needs %lld samples of the train range (%d "
                   "followed, %d to pad a batch of %d), the range has %lld",
                   c->path, (long long)need, c->batch_samples, c->run_batch - 1, c->run_batch,
                   (long long)samples.count);
        kind->samples_close(&samples);
        return SB_ERR_INPUT;
    }
    int64_t *rows = malloc((size_t)c->run_batch * sizeof *rows);
    st = rows ? SB_OK : SB_ERR_NOMEM;
    for (int pos = 0; st == SB_OK && pos < POS_COUNT; pos++)
        for (int s = 0; st == SB_OK && s < c->batch_samples && !dump_done(sink); s++) {
            slicer_pass(&sl, c, pos, s);
            for (int r = 0; r < c->run_batch; r++)
                rows[r] = row_sample(c, pos, s, r, samples.count);
            st = kind->samples_forward(&samples, rows, c->run_batch, err, errlen);
        }
    if (st == SB_ERR_NOMEM && !rows)
        sb_err_set(err, errlen, "%s: out of memory", c->path);
    free(rows);
    kind->samples_close(&samples);
    return st;
}

sb_status sb_run_batch(const sb_case *c, const sb_run_options *o, sb_run_sink *sink, char *err,
                       size_t errlen)
{
    SB_ASSERT(c->run_batch >= 1 && c->batch_samples >= 1);
    return c->kind == SB_CASE_KERNEL ? kernel_batch_run(c, sink, err, errlen)
                                     : train_batch_run(c, o, sink, err, errlen);
}
