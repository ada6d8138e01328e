/* oneDNN's convolutions under the harness, through the public C API
 * (sb_user_main_kernels): forward, backward data and backward weights with
 * bias, at the seed model's conv2 shape and at an odd one, each in two
 * layouts, one kernel per shape and layout (onednn_<shape>_<layout>):
 *   plain   NCHW / OIHW buffers handed to oneDNN as they are, and
 *   chosen  the formats oneDNN picks (format_tag_any), the plain inputs
 *           reordered into them and the outputs reordered back to plain
 *           before they are probed.
 *
 *   samebits-onednn golden --golden-dir DIR
 *   samebits-onednn sweep --threads 1-8 --repeat 2 --golden-dir DIR --census
 *   samebits-onednn impls        oneDNN's version and the implementation it
 *                                chose for each primitive (its verbose name)
 *
 * oneDNN (Debian's build) runs on OpenMP, so each configuration's thread
 * count reaches it through omp_set_num_threads, which sb_user_main_kernels
 * calls. How a primitive divides its work among threads may change the order
 * in which an output's products are summed; the bounds of the library's own
 * convolutions (sb_conv2d_*_bound, kernels/sb_kernels.h) say how far that
 * can move them, since oneDNN computes the same sums. */
#include <oneapi/dnnl/dnnl.h>
#include <stdlib.h>
#include <string.h>

#include "samebits.h"
#include "sb_rng.h"

/* The seed model's conv2 (32 channels of 26x26 in, 64 filters of 3x3, no
 * padding) on a batch of 8, and a shape no vector width divides, padded. */
typedef struct conv_shape_case {
    const char *name;
    sb_conv_shape s;
    float *x, *w, *b, *dy;      /* inputs: [n][c][h][w], [k][c][r][s], [k], [n][k][p][q] */
} conv_shape_case;

static conv_shape_case shapes[] = {
    {.name = "conv2", .s = {.n = 8, .c = 32, .h = 26, .w = 26, .k = 64, .r = 3, .s = 3,
                            .stride = 1}},
    {.name = "odd", .s = {.n = 3, .c = 5, .h = 13, .w = 11, .k = 7, .r = 3, .s = 3, .stride = 1,
                          .pad = 1}},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

typedef enum conv_layout {
    CONV_LAYOUT_PLAIN,
    CONV_LAYOUT_CHOSEN,
    CONV_LAYOUT_COUNT
} conv_layout;

static const char *const layout_names[CONV_LAYOUT_COUNT] = {"plain", "chosen"};

/* The four outputs of one shape in one layout, plain. */
typedef struct conv_outputs {
    float *y, *dx, *dw, *db;
} conv_outputs;

typedef struct onednn {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    bool print_impls;           /* `impls`: print each primitive's implementation */
} onednn;

#define DNNL_TRY(call)                                                                  \
    do {                                                                                \
        dnnl_status_t dnnl_st_ = (call);                                                \
        if (dnnl_st_ != dnnl_success) {                                                 \
            fprintf(stderr, "samebits-onednn: %s failed (oneDNN status %d)\n", #call,   \
                    (int)dnnl_st_);                                                     \
            return SB_ERR_INPUT;                                                        \
        }                                                                               \
    } while (0)

/* ---- memories ------------------------------------------------------------ */

/* A tensor in plain layout over the caller's buffer, and the memory a
 * primitive takes it in: the same one when the primitive's format is plain,
 * else one of its own format, reordered from or to the plain one. */
typedef struct conv_arg {
    dnnl_memory_desc_t plain_md;
    dnnl_memory_t plain, used;
} conv_arg;

static sb_status reorder(onednn *e, dnnl_memory_t from, dnnl_memory_t to)
{
    const dnnl_memory_desc_t *from_md, *to_md;
    DNNL_TRY(dnnl_memory_get_memory_desc(from, &from_md));
    DNNL_TRY(dnnl_memory_get_memory_desc(to, &to_md));
    dnnl_primitive_desc_t pd;
    DNNL_TRY(dnnl_reorder_primitive_desc_create(&pd, from_md, e->engine, to_md, e->engine,
                                                NULL));
    dnnl_primitive_t p;
    dnnl_status_t st = dnnl_primitive_create(&p, pd);
    dnnl_primitive_desc_destroy(pd);
    DNNL_TRY(st);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    st = dnnl_primitive_execute(p, e->stream, 2, args);
    if (st == dnnl_success)
        st = dnnl_stream_wait(e->stream);
    dnnl_primitive_destroy(p);
    DNNL_TRY(st);
    return SB_OK;
}

static sb_status arg_plain(conv_arg *a, onednn *e, int ndims, const dnnl_dims_t dims,
                           dnnl_format_tag_t tag, float *data)
{
    memset(a, 0, sizeof *a);
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&a->plain_md, ndims, dims, dnnl_f32, tag));
    DNNL_TRY(dnnl_memory_create(&a->plain, &a->plain_md, e->engine, data));
    a->used = a->plain;
    return SB_OK;
}

/* The memory primitive pd takes for query q; an input is reordered into it.
 * dnnl_query_undef: the bias, whose format is fixed (x), taken as it is. */
static sb_status arg_bind(conv_arg *a, onednn *e, const_dnnl_primitive_desc_t pd,
                          dnnl_query_t q, bool input)
{
    if (q == dnnl_query_undef)
        return SB_OK;
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, q, 0);
    if (!md)
        return SB_ERR_INPUT;
    if (dnnl_memory_desc_equal(md, &a->plain_md))
        return SB_OK;
    DNNL_TRY(dnnl_memory_create(&a->used, md, e->engine, DNNL_MEMORY_ALLOCATE));
    return input ? reorder(e, a->plain, a->used) : SB_OK;
}

/* An output back to plain, then the primitive's own memory released. */
static sb_status arg_unbind(conv_arg *a, onednn *e, bool output)
{
    sb_status st = SB_OK;
    if (a->used != a->plain) {
        if (output)
            st = reorder(e, a->used, a->plain);
        dnnl_memory_destroy(a->used);
        a->used = a->plain;
    }
    return st;
}

static void arg_free(conv_arg *a)
{
    if (a->plain)
        dnnl_memory_destroy(a->plain);
    a->plain = a->used = NULL;
}

/* ---- the three primitives ------------------------------------------------ */

typedef enum conv_arg_id { ARG_X, ARG_W, ARG_B, ARG_Y, ARG_COUNT } conv_arg_id;

/* The descriptors a convolution primitive is made from: plain tags, or
 * format_tag_any for the tensors oneDNN may lay out itself (not the bias). */
typedef struct conv_descs {
    dnnl_memory_desc_t md[ARG_COUNT];
    dnnl_dims_t strides, pad_l, pad_r;
} conv_descs;

static sb_status descs_make(conv_descs *d, const sb_conv_shape *s, conv_layout layout)
{
    dnnl_dims_t x = {s->n, s->c, s->h, s->w}, w = {s->k, s->c, s->r, s->s}, b = {s->k},
                y = {s->n, s->k, s->p, s->q};
    bool any = layout == CONV_LAYOUT_CHOSEN;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->md[ARG_X], 4, x, dnnl_f32,
                                          any ? dnnl_format_tag_any : dnnl_nchw));
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->md[ARG_W], 4, w, dnnl_f32,
                                          any ? dnnl_format_tag_any : dnnl_oihw));
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->md[ARG_B], 1, b, dnnl_f32, dnnl_x));
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->md[ARG_Y], 4, y, dnnl_f32,
                                          any ? dnnl_format_tag_any : dnnl_nchw));
    d->strides[0] = d->strides[1] = s->stride;
    d->pad_l[0] = d->pad_l[1] = d->pad_r[0] = d->pad_r[1] = s->pad;
    return SB_OK;
}

static sb_status impl_print(onednn *e, const_dnnl_primitive_desc_t pd, const char *what)
{
    if (!e->print_impls)
        return SB_OK;
    const char *impl = NULL;
    DNNL_TRY(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    printf("%-28s %s\n", what, impl ? impl : "?");
    return SB_OK;
}

/* One primitive run: its tensors bound (inputs reordered in), executed,
 * outputs reordered back to plain. args[i] goes to oneDNN as exec_args[i]. */
typedef struct conv_exec {
    conv_arg *arg[5];
    int dnnl_arg[5];
    dnnl_query_t query[5];
    bool output[5];
    int n;
} conv_exec;

static sb_status exec_run(onednn *e, dnnl_primitive_desc_t pd, const conv_exec *x)
{
    dnnl_exec_arg_t args[5];
    sb_status st = SB_OK;
    int bound = 0;
    for (; bound < x->n && st == SB_OK; bound++) {
        st = arg_bind(x->arg[bound], e, pd, x->query[bound], !x->output[bound]);
        args[bound] = (dnnl_exec_arg_t){x->dnnl_arg[bound], x->arg[bound]->used};
    }
    dnnl_primitive_t p = NULL;
    if (st == SB_OK && dnnl_primitive_create(&p, pd) != dnnl_success)
        st = SB_ERR_INPUT;
    if (st == SB_OK && (dnnl_primitive_execute(p, e->stream, x->n, args) != dnnl_success ||
                        dnnl_stream_wait(e->stream) != dnnl_success))
        st = SB_ERR_INPUT;
    if (p)
        dnnl_primitive_destroy(p);
    for (int i = 0; i < bound; i++) {
        sb_status u = arg_unbind(x->arg[i], e, st == SB_OK && x->output[i]);
        st = st == SB_OK ? u : st;
    }
    return st;
}

/* Forward (training: it is the backward passes' hint), backward data and
 * backward weights with bias of one shape in one layout. */
static sb_status convs_run(onednn *e, const conv_shape_case *sc, conv_layout layout,
                           conv_outputs *out)
{
    const sb_conv_shape *s = &sc->s;
    conv_descs d;
    sb_status st = descs_make(&d, s, layout);
    if (st != SB_OK)
        return st;
    dnnl_dims_t x_dims = {s->n, s->c, s->h, s->w}, w_dims = {s->k, s->c, s->r, s->s},
                b_dims = {s->k}, y_dims = {s->n, s->k, s->p, s->q};
    /* the plain tensors: inputs and outputs of every pass */
    conv_arg x, w, b, y, dy, dx, dw, db;
    conv_arg *all[] = {&x, &w, &b, &y, &dy, &dx, &dw, &db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        memset(all[i], 0, sizeof *all[i]);
    if ((st = arg_plain(&x, e, 4, x_dims, dnnl_nchw, sc->x)) != SB_OK ||
        (st = arg_plain(&w, e, 4, w_dims, dnnl_oihw, sc->w)) != SB_OK ||
        (st = arg_plain(&b, e, 1, b_dims, dnnl_x, sc->b)) != SB_OK ||
        (st = arg_plain(&y, e, 4, y_dims, dnnl_nchw, out->y)) != SB_OK ||
        (st = arg_plain(&dy, e, 4, y_dims, dnnl_nchw, sc->dy)) != SB_OK ||
        (st = arg_plain(&dx, e, 4, x_dims, dnnl_nchw, out->dx)) != SB_OK ||
        (st = arg_plain(&dw, e, 4, w_dims, dnnl_oihw, out->dw)) != SB_OK ||
        (st = arg_plain(&db, e, 1, b_dims, dnnl_x, out->db)) != SB_OK)
        goto done;

    char what[3][64];
    snprintf(what[0], sizeof what[0], "%s.%s.fwd", sc->name, layout_names[layout]);
    snprintf(what[1], sizeof what[1], "%s.%s.bwd_data", sc->name, layout_names[layout]);
    snprintf(what[2], sizeof what[2], "%s.%s.bwd_weights", sc->name, layout_names[layout]);
    dnnl_convolution_desc_t fd, bd, wd;
    dnnl_primitive_desc_t fwd = NULL, bwd_data = NULL, bwd_weights = NULL;
    if (dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct,
                                           &d.md[ARG_X], &d.md[ARG_W], &d.md[ARG_B],
                                           &d.md[ARG_Y], d.strides, d.pad_l,
                                           d.pad_r) != dnnl_success ||
        dnnl_primitive_desc_create(&fwd, &fd, NULL, e->engine, NULL) != dnnl_success ||
        dnnl_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &d.md[ARG_X],
                                                 &d.md[ARG_W], &d.md[ARG_Y], d.strides,
                                                 d.pad_l, d.pad_r) != dnnl_success ||
        dnnl_primitive_desc_create(&bwd_data, &bd, NULL, e->engine, fwd) != dnnl_success ||
        dnnl_convolution_backward_weights_desc_init(&wd, dnnl_convolution_direct, &d.md[ARG_X],
                                                    &d.md[ARG_W], &d.md[ARG_B], &d.md[ARG_Y],
                                                    d.strides, d.pad_l,
                                                    d.pad_r) != dnnl_success ||
        dnnl_primitive_desc_create(&bwd_weights, &wd, NULL, e->engine, fwd) != dnnl_success) {
        fprintf(stderr, "samebits-onednn: no convolution for %s\n", what[0]);
        st = SB_ERR_INPUT;
    }
    if (st == SB_OK)
        st = impl_print(e, fwd, what[0]);
    if (st == SB_OK)
        st = impl_print(e, bwd_data, what[1]);
    if (st == SB_OK)
        st = impl_print(e, bwd_weights, what[2]);
    const conv_exec f = {{&x, &w, &b, &y},
                         {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST},
                         {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_undef,
                          dnnl_query_dst_md},
                         {false, false, false, true}, 4};
    const conv_exec bdx = {{&dy, &w, &dx},
                           {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
                           {dnnl_query_diff_dst_md, dnnl_query_weights_md,
                            dnnl_query_diff_src_md},
                           {false, false, true}, 3};
    const conv_exec bdw = {{&x, &dy, &dw, &db},
                           {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS,
                            DNNL_ARG_DIFF_BIAS},
                           {dnnl_query_src_md, dnnl_query_diff_dst_md,
                            dnnl_query_diff_weights_md, dnnl_query_undef},
                           {false, false, true, true}, 4};
    if (st == SB_OK)
        st = exec_run(e, fwd, &f);
    if (st == SB_OK)
        st = exec_run(e, bwd_data, &bdx);
    if (st == SB_OK)
        st = exec_run(e, bwd_weights, &bdw);
    if (fwd)
        dnnl_primitive_desc_destroy(fwd);
    if (bwd_data)
        dnnl_primitive_desc_destroy(bwd_data);
    if (bwd_weights)
        dnnl_primitive_desc_destroy(bwd_weights);
done:
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        arg_free(all[i]);
    return st;
}

/* ---- probes and bounds ----------------------------------------------------- */

typedef enum conv_pass { PASS_FWD, PASS_BWD_DATA, PASS_BWD_FILTER, PASS_BWD_BIAS } conv_pass;

/* What a bound is computed from: the shape's inputs and which output. */
typedef struct conv_bound_ctx {
    const conv_shape_case *sc;
    conv_pass pass;
} conv_bound_ctx;

static void conv_bound(float *bound, const void *ctx, int out_index)
{
    const conv_bound_ctx *b = ctx;
    const conv_shape_case *sc = b->sc;
    (void)out_index;
    switch (b->pass) {
    case PASS_FWD:
        sb_conv2d_fwd_bound(bound, sc->x, sc->w, sc->b, &sc->s);
        return;
    case PASS_BWD_DATA:
        sb_conv2d_bwd_data_bound(bound, sc->dy, sc->w, &sc->s);
        return;
    case PASS_BWD_FILTER:
        sb_conv2d_bwd_filter_bound(bound, sc->dy, sc->x, &sc->s);
        return;
    case PASS_BWD_BIAS:
        sb_conv2d_bwd_bias_bound(bound, sc->dy, &sc->s);
        return;
    }
}

typedef struct probe_to {
    sb_probe_fn *probe;
    void *ctx;
} probe_to;

static sb_tensor tensor4(float *data, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return (sb_tensor){.dtype = SB_DTYPE_F32, .ndim = 4, .dim = {a, b, c, d}, .data = data};
}

static sb_tensor tensor1(float *data, int64_t n)
{
    return (sb_tensor){.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {n}, .data = data};
}

static void probe_source(const probe_to *to, const conv_shape_case *sc, const char *what,
                         const sb_tensor *t)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", sc->name, what);
    sb_probe_point p = {.name = name, .op = "source", .tensor = t};
    to->probe(to->ctx, &p);
}

/* "<shape>.<layout>.<pass>" made by op "onednn_<pass>" from the named
 * sources of its shape. */
static void probe_output(const probe_to *to, const conv_shape_case *sc, conv_layout layout,
                         const char *what, const sb_tensor *t, const char *const *inputs,
                         const sb_tensor *input_tensors, int n_inputs, conv_bound_ctx *bound)
{
    char name[64], op[64], in_names[3][64];
    const char *in[3];
    snprintf(name, sizeof name, "%s.%s.%s", sc->name, layout_names[layout], what);
    snprintf(op, sizeof op, "onednn_%.*s", (int)strcspn(what, "."), what);
    for (int i = 0; i < n_inputs; i++) {
        snprintf(in_names[i], sizeof in_names[i], "%s.%s", sc->name, inputs[i]);
        in[i] = in_names[i];
    }
    sb_probe_point p = {.name = name, .op = op, .tensor = t, .inputs = in,
                        .n_inputs = n_inputs, .input_tensors = input_tensors,
                        .n_input_tensors = n_inputs, .bound = conv_bound, .bound_ctx = bound};
    to->probe(to->ctx, &p);
}

/* The inputs of a shape, the same in every process (counter-based RNG). */
static sb_status inputs_make(conv_shape_case *sc, uint32_t stream)
{
    sb_conv_shape *s = &sc->s;
    sb_status st = sb_conv_shape_complete(s);
    if (st != SB_OK)
        return st;
    size_t nx = (size_t)s->n * s->c * s->h * s->w, nw = (size_t)s->k * s->c * s->r * s->s,
           ny = (size_t)s->n * s->k * s->p * s->q;
    sc->x = malloc(sizeof(float) * nx);
    sc->w = malloc(sizeof(float) * nw);
    sc->b = malloc(sizeof(float) * (size_t)s->k);
    sc->dy = malloc(sizeof(float) * ny);
    if (!sc->x || !sc->w || !sc->b || !sc->dy)
        return SB_ERR_NOMEM;
    sb_rng_fill_uniform(sc->x, nx, -1.0f, 1.0f, 11, stream, 0);
    sb_rng_fill_uniform(sc->w, nw, -1.0f, 1.0f, 11, stream + 1, 0);
    sb_rng_fill_uniform(sc->b, (size_t)s->k, -1.0f, 1.0f, 11, stream + 2, 0);
    sb_rng_fill_uniform(sc->dy, ny, -1.0f, 1.0f, 11, stream + 3, 0);
    return SB_OK;
}

static sb_status outputs_make(conv_outputs *o, const sb_conv_shape *s)
{
    o->y = calloc((size_t)s->n * s->k * s->p * s->q, sizeof(float));
    o->dx = calloc((size_t)s->n * s->c * s->h * s->w, sizeof(float));
    o->dw = calloc((size_t)s->k * s->c * s->r * s->s, sizeof(float));
    o->db = calloc((size_t)s->k, sizeof(float));
    return o->y && o->dx && o->dw && o->db ? SB_OK : SB_ERR_NOMEM;
}

static void outputs_free(conv_outputs *o)
{
    free(o->y);
    free(o->dx);
    free(o->dw);
    free(o->db);
}

/* One shape in one layout: its three primitives run, its four outputs probed. */
static sb_status layout_run(onednn *e, const probe_to *to, conv_shape_case *sc,
                            conv_layout layout)
{
    const sb_conv_shape *s = &sc->s;
    conv_outputs out = {0};
    sb_status st = outputs_make(&out, s);
    if (st == SB_OK)
        st = convs_run(e, sc, layout, &out);
    if (st == SB_OK && to) {
        sb_tensor x = tensor4(sc->x, s->n, s->c, s->h, s->w);
        sb_tensor w = tensor4(sc->w, s->k, s->c, s->r, s->s);
        sb_tensor b = tensor1(sc->b, s->k);
        sb_tensor dy = tensor4(sc->dy, s->n, s->k, s->p, s->q);
        sb_tensor y = tensor4(out.y, s->n, s->k, s->p, s->q);
        sb_tensor dx = tensor4(out.dx, s->n, s->c, s->h, s->w);
        sb_tensor dw = tensor4(out.dw, s->k, s->c, s->r, s->s);
        sb_tensor db = tensor1(out.db, s->k);
        conv_bound_ctx bounds[] = {{sc, PASS_FWD}, {sc, PASS_BWD_DATA}, {sc, PASS_BWD_FILTER},
                                   {sc, PASS_BWD_BIAS}};
        probe_output(to, sc, layout, "fwd.y", &y, (const char *const[]){"x", "w", "b"},
                     (const sb_tensor[]){x, w, b}, 3, &bounds[0]);
        probe_output(to, sc, layout, "bwd_data.dx", &dx, (const char *const[]){"dy", "w"},
                     (const sb_tensor[]){dy, w}, 2, &bounds[1]);
        probe_output(to, sc, layout, "bwd_weights.dW", &dw, (const char *const[]){"dy", "x"},
                     (const sb_tensor[]){dy, x}, 2, &bounds[2]);
        probe_output(to, sc, layout, "bwd_weights.db", &db, (const char *const[]){"dy"},
                     (const sb_tensor[]){dy}, 1, &bounds[3]);
    }
    outputs_free(&out);
    return st;
}

static sb_status engine_open(onednn *e)
{
    DNNL_TRY(dnnl_engine_create(&e->engine, dnnl_cpu, 0));
    dnnl_status_t made = dnnl_stream_create(&e->stream, e->engine, dnnl_stream_default_flags);
    if (made != dnnl_success) {
        dnnl_engine_destroy(e->engine);
        DNNL_TRY(made);
    }
    return SB_OK;
}

static void engine_close(onednn *e)
{
    dnnl_stream_destroy(e->stream);
    dnnl_engine_destroy(e->engine);
}

/* One kernel of the program: a shape in a layout. */
typedef struct conv_kernel {
    conv_shape_case *sc;
    uint32_t stream;            /* of its inputs in the counter-based RNG */
    conv_layout layout;
} conv_kernel;

/* The shape's sources, then its outputs in the kernel's layout; to NULL:
 * run only. */
static sb_status kernel_run(onednn *e, const probe_to *to, const conv_kernel *k)
{
    conv_shape_case *sc = k->sc;
    sb_status st = sc->x ? SB_OK : inputs_make(sc, k->stream);
    if (st == SB_OK && to) {
        const sb_conv_shape *s = &sc->s;
        sb_tensor x = tensor4(sc->x, s->n, s->c, s->h, s->w);
        sb_tensor w = tensor4(sc->w, s->k, s->c, s->r, s->s);
        sb_tensor b = tensor1(sc->b, s->k);
        sb_tensor dy = tensor4(sc->dy, s->n, s->k, s->p, s->q);
        probe_source(to, sc, "x", &x);
        probe_source(to, sc, "w", &w);
        probe_source(to, sc, "b", &b);
        probe_source(to, sc, "dy", &dy);
    }
    return st == SB_OK ? layout_run(e, to, sc, k->layout) : st;
}

/* sb_user_main_kernels has set OpenMP's thread count, which oneDNN's OpenMP
 * runtime follows. */
static sb_status onednn_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    onednn e = {0};
    probe_to to = {probe, probe_ctx};
    sb_status st = engine_open(&e);
    if (st == SB_OK) {
        st = kernel_run(&e, &to, ctx);
        engine_close(&e);
    }
    return st;
}

static conv_kernel kernels[N_SHAPES * CONV_LAYOUT_COUNT];

/* `impls`: oneDNN's version and the implementation it picks for every
 * primitive at this process's thread count. */
static int impls_print(void)
{
    const dnnl_version_t *v = dnnl_version();
    printf("oneDNN %d.%d.%d (%s)\n", v->major, v->minor, v->patch, v->hash);
    onednn e = {.print_impls = true};
    sb_status st = engine_open(&e);
    for (size_t i = 0; st == SB_OK && i < sizeof kernels / sizeof kernels[0]; i++)
        st = kernel_run(&e, NULL, &kernels[i]);
    if (e.engine)
        engine_close(&e);
    return st == SB_OK ? SB_EXIT_OK : SB_EXIT_INPUT;
}

int main(int argc, char **argv)
{
    /* which counts keep their bits depends on the implementation oneDNN
     * picks for the CPU: either is fine, a difference beyond the bound or
     * between repeats is not */
    sb_user_kernel k[N_SHAPES * CONV_LAYOUT_COUNT];
    char names[N_SHAPES * CONV_LAYOUT_COUNT][64];
    for (int i = 0; i < N_SHAPES; i++)
        for (int l = 0; l < CONV_LAYOUT_COUNT; l++) {
            int at = i * CONV_LAYOUT_COUNT + l;
            kernels[at] = (conv_kernel){&shapes[i], SB_STREAM_CASE_INPUT + 4 * (uint32_t)i,
                                        (conv_layout)l};
            snprintf(names[at], sizeof names[at], "onednn_%s_%s", shapes[i].name,
                     layout_names[l]);
            k[at] = (sb_user_kernel){.name = names[at], .version = "1", .run = onednn_run,
                                     .ctx = &kernels[at],
                                     .expect_set = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) |
                                                   SB_VERDICT_BIT(SB_VERDICT_REORDERING)};
        }
    int rc = argc == 2 && strcmp(argv[1], "impls") == 0
                 ? impls_print()
                 : sb_user_main_kernels(argc, argv, k, sizeof k / sizeof k[0]);
    for (int i = 0; i < N_SHAPES; i++) {
        free(shapes[i].x);
        free(shapes[i].w);
        free(shapes[i].b);
        free(shapes[i].dy);
    }
    return rc;
}
