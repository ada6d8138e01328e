/* One case under the numerics hook, in this process.
 *
 * In-process rather than in a child as sweep does: the mode needs the live
 * tensors at each probe, which exist only in the process that computes them,
 * and it runs one configuration, so there is no next configuration for a
 * crash or an OpenMP pool to spill into. A crash ends the command (meson and
 * CI see the signal); the thread count is set per case.
 *
 * Every probe also goes to a trace, which is compared with the case's golden
 * when the run is the case's own configuration (its family, no mutant, the
 * default inputs): the report then says whether the bits were the golden's. */
#include <omp.h>
#include <string.h>
#include <sys/stat.h>

#include "numerics.h"
#include "sb_dataset.h"
#include "sb_rng.h"
#include "support/support.h"

/* The numerics hook and the trace sink, both fed every probe. */
typedef struct both {
    sb_numerics_result *r;
    sb_run_sink *sink;
} both;

static void both_probe(void *ctx, const sb_probe_point *p)
{
    both *b = ctx;
    sb_numerics_probe_fn(b->r, p);
    sb_run_sink_probe(b->sink, p);
}

/* ---- kernel cases ---------------------------------------------------------- */

/* Tensor i of the op's reads (inputs, then the state an update changes in
 * place) as `samebits run` draws it: uniform [-1, 1) from stream
 * SB_STREAM_CASE_INPUT + i (squared-gradient state [0, 1)), labels (classes,
 * tokens) in [0, sb_op_call_label_range);
 * a [numerics] range replaces the interval. */
static void fill(sb_tensor *t, int i, const sb_op_call *call, const sb_numerics_case *nc,
                 uint64_t seed)
{
    const uint32_t stream = SB_STREAM_CASE_INPUT + (uint32_t)i;
    const size_t n = sb_tensor_count(t);
    if (t->dtype == SB_DTYPE_I32) {
        int32_t *labels = t->data;
        for (size_t j = 0; j < n; j++)
            labels[j] = (int32_t)(sb_rng_u32(seed, stream, 0, j) %
                                 (uint32_t)sb_op_call_label_range(call));
        return;
    }
    const int state = i - call->n_in;
    float lo = -1.0f, hi = 1.0f;
    if (state >= 0 && sb_role_nonnegative(sb_op_roles_of(call->op).out[state]))
        lo = 0.0f;
    if (nc->have_range[i])
        lo = nc->lo[i], hi = nc->hi[i];
    sb_rng_fill_uniform(t->data, n, lo, hi, seed, stream, 0);
}

static sb_status run_kernel(const sb_case *c, const sb_numerics_case *nc,
                            const sb_kernel_table *k, sb_probe_fn *hook, void *ctx,
                            char *err, size_t errlen)
{
    sb_op_call call = c->call;
    if (sb_op_call_describe(&call) != SB_OK) {
        sb_err_set(err, errlen, "%s: the shape of op %s is absurd", c->path, sb_op_name(call.op));
        return SB_ERR_INPUT;
    }
    const int n_state = sb_op_updates_in_place(call.op) ? call.n_out : 0;
    const int n_reads = call.n_in + n_state;
    sb_tensor reads[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    char names[SB_OP_MAX_IN + SB_OP_MAX_OUT][24];
    const char *input_names[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    sb_status st = SB_OK;
    for (int j = 0; j < call.n_out; j++)
        if (!(call.out[j].data = calloc(1, sb_tensor_bytes(&call.out[j]))))
            st = SB_ERR_NOMEM;
    for (int i = 0; i < n_reads; i++) {
        reads[i] = i < call.n_in ? call.in[i] : call.out[i - call.n_in];
        if (!(reads[i].data = malloc(sb_tensor_bytes(&reads[i])))) {
            st = SB_ERR_NOMEM;
            continue;
        }
        fill(&reads[i], i, &call, nc, c->seed);
        if (i < call.n_in)
            call.in[i].data = reads[i].data;
        else if (call.out[i - call.n_in].data)
            memcpy(call.out[i - call.n_in].data, reads[i].data, sb_tensor_bytes(&reads[i]));
        snprintf(names[i], sizeof names[i], "input.%d", i);
        input_names[i] = names[i];
        sb_probe_point p = {.step = 0, .name = names[i], .op = "source", .tensor = &reads[i]};
        hook(ctx, &p);
    }
    if (st == SB_OK) {
        sb_op_call_run(k, &call);
        const char *op = sb_op_name(call.op);
        for (int j = 0; j < call.n_out; j++) {
            char name[96];
            snprintf(name, sizeof name, "%s.out%d", op, j);
            sb_probe_point p = {
                .step = 0, .name = name, .op = op, .tensor = &call.out[j],
                .inputs = input_names, .n_inputs = n_reads,
                .input_tensors = reads, .n_input_tensors = n_reads,
                .bound = sb_op_call_bound, .bound_ctx = &call, .out_index = j,
            };
            hook(ctx, &p);
        }
    } else {
        sb_err_set(err, errlen, "%s: %s for the op's tensors", c->path, sb_status_name(st));
    }
    for (int i = 0; i < n_reads; i++)
        free(reads[i].data);
    for (int j = 0; j < call.n_out; j++)
        free(call.out[j].data);
    return st;
}

/* ---- training cases -------------------------------------------------------- */

static sb_status run_train(const sb_case *c, const sb_kernel_table *k, const char *data_dir,
                           sb_probe_fn *hook, void *ctx, sb_trace *trace, char *err,
                           size_t errlen)
{
    const sb_model_kind *model = sb_model_find(c->model);
    SB_ASSERT(model != NULL);   /* the case loader checked the name */
    sb_epoch_metrics *metrics = calloc((size_t)model->evaluations(&c->train), sizeof *metrics);
    if (!metrics)
        return SB_ERR_NOMEM;
    sb_model_run r = sb_case_model_run(c, k, &c->train, data_dir);
    r.hook = hook, r.hook_ctx = ctx;
    int n_metrics = 0;
    sb_status st = model->run(&r, metrics, &n_metrics, err, errlen);
    for (int e = 0; st == SB_OK && e < n_metrics; e++)
        st = sb_trace_add_metrics(trace, &metrics[e]);
    free(metrics);
    return st;
}

/* ---- the golden --------------------------------------------------------------- */

static void compare_golden(const sb_case *c, const sb_numerics_case *nc, sb_family f,
                           const sb_trace *run, sb_numerics_golden *g)
{
    bool ranges = false;
    for (int i = 0; i < SB_OP_MAX_IN + SB_OP_MAX_OUT; i++)
        ranges |= nc->have_range[i];
    struct stat sbuf;
    if (f != c->family || nc->mutant[0] || ranges) {
        snprintf(g->why, sizeof g->why, "not the case's own configuration (%s)",
                 nc->mutant[0] ? "a mutant" : ranges ? "input ranges" : "another family");
        return;
    }
    if (stat(c->golden_path, &sbuf) != 0) {
        snprintf(g->why, sizeof g->why, "no golden file");
        return;
    }
    sb_trace golden;
    char err[256];
    if (sb_case_golden_read(&golden, c, err, sizeof err) != SB_OK) {
        snprintf(g->why, sizeof g->why, "golden unreadable or stale");
        return;
    }
    sb_trace_compare(&golden, run, &g->div);
    g->compared = true;
    sb_trace_free(&golden);
}

sb_status sb_numerics_run_case(const sb_case *c, const sb_numerics_case *nc, sb_family f,
                               int threads, const char *data_dir, sb_numerics_result *r,
                               sb_numerics_golden *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    sb_numerics_result_init(r, f);
    if (c->kind == SB_CASE_COMMAND) {
        sb_err_set(err, errlen, "%s: no numerics mode for a kind = command case", c->path);
        return SB_ERR_USAGE;
    }
    /* a determinism mutant case ([case] mutant) runs the registry's table */
    sb_kernel_table k = c->mutant[0] && f == c->family ? *sb_kernels_mutant(c->mutant)
                                                       : *sb_kernels(f);
    if (nc->mutant[0]) {
        const int m = sb_mutant_find(nc->mutant);
        SB_ASSERT(m >= 0);      /* sb_numerics_case_load checked the name */
        sb_mutant_install(m, &k);
    }
    if (threads > 0)
        omp_set_num_threads(threads);

    sb_trace trace;
    sb_trace_init(&trace);
    sb_trace_header_from_case(&trace.header, c, c->reference_threads);
    sb_run_options o = {.threads = threads, .data_dir = data_dir};
    sb_run_sink sink;
    sb_run_sink_init(&sink, &trace, &o);
    both b = {r, &sink};

    sb_status st = c->kind == SB_CASE_KERNEL
                       ? run_kernel(c, nc, &k, both_probe, &b, err, errlen)
                       : run_train(c, &k, data_dir, both_probe, &b, &trace, err, errlen);
    if (st == SB_OK && r->status != SB_OK) {
        st = r->status;
        sb_err_set(err, errlen, "%s: numerics check failed: %s", c->path, sb_status_name(st));
    }
    if (st == SB_OK)
        st = sb_run_sink_finish(&sink, err, errlen);
    if (st == SB_OK)
        compare_golden(c, nc, f, &trace, g);
    sb_trace_free(&trace);
    return st;
}
