/* oneDNN's convolution primitives for the benchmark (bench_onednn.h),
 * through its C API (oneDNN 2.x, Debian's libdnnl-dev), on its OpenMP
 * runtime. Tensors are filled with values in [-1, 1): the speed of a
 * convolution does not depend on them. */
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_onednn.h"

enum { MAX_ARGS = 4 };

struct bench_onednn {
    dnnl_primitive_t prim;
    dnnl_memory_t mem[MAX_ARGS];
    dnnl_exec_arg_t args[MAX_ARGS];
    int n_args;
};

static dnnl_engine_t engine;
static dnnl_stream_t stream;

const char *bench_onednn_version(void)
{
    static char text[32];
    const dnnl_version_t *v = dnnl_version();
    snprintf(text, sizeof text, "%d.%d.%d", v->major, v->minor, v->patch);
    return text;
}

static bool engine_ready(void)
{
    if (!engine && dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return false;
    return stream || dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) ==
                         dnnl_success;
}

/* A memory of md, filled. */
static dnnl_memory_t memory_new(const dnnl_memory_desc_t *md, unsigned seed)
{
    dnnl_memory_t m;
    if (dnnl_memory_create(&m, md, engine, DNNL_MEMORY_ALLOCATE) != dnnl_success)
        return NULL;
    void *data = NULL;
    dnnl_memory_get_data_handle(m, &data);
    float *f = data;
    const size_t n = dnnl_memory_desc_get_size(md) / sizeof(float);
    uint64_t st = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        f[i] = (float)(st >> 40) * 0x1p-23f - 1.0f;
    }
    return m;
}

bench_onednn *bench_onednn_new(const sb_conv_shape *s, bench_conv_pass pass, bool chosen,
                               char *impl, size_t impl_len)
{
    snprintf(impl, impl_len, "no primitive");
    if (!engine_ready())
        return NULL;
    dnnl_dims_t x = {s->n, s->c, s->h, s->w}, w = {s->k, s->c, s->r, s->s}, b = {s->k},
                y = {s->n, s->k, s->p, s->q}, strides = {s->stride, s->stride},
                pad = {s->pad, s->pad};
    dnnl_memory_desc_t xd, wd, bd, yd;
    dnnl_memory_desc_init_by_tag(&xd, 4, x, dnnl_f32, chosen ? dnnl_format_tag_any : dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&wd, 4, w, dnnl_f32, chosen ? dnnl_format_tag_any : dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&bd, 1, b, dnnl_f32, dnnl_x);
    dnnl_memory_desc_init_by_tag(&yd, 4, y, dnnl_f32, chosen ? dnnl_format_tag_any : dnnl_nchw);
    /* the forward primitive is the backward ones' hint */
    dnnl_convolution_desc_t fd, d;
    dnnl_primitive_desc_t fwd = NULL, pd = NULL;
    if (dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct,
                                           &xd, &wd, &bd, &yd, strides, pad,
                                           pad) != dnnl_success ||
        dnnl_primitive_desc_create(&fwd, &fd, NULL, engine, NULL) != dnnl_success)
        return NULL;
    /* each pass's arguments and the queries of their formats */
    int arg[MAX_ARGS], n = 0;
    dnnl_query_t q[MAX_ARGS];
    dnnl_status_t st = dnnl_success;
    switch (pass) {
    case BENCH_CONV_FWD:
        pd = fwd, fwd = NULL;
        arg[0] = DNNL_ARG_SRC, arg[1] = DNNL_ARG_WEIGHTS, arg[2] = DNNL_ARG_BIAS;
        arg[3] = DNNL_ARG_DST;
        q[0] = dnnl_query_src_md, q[1] = dnnl_query_weights_md, q[2] = dnnl_query_weights_md;
        q[3] = dnnl_query_dst_md, n = 4;
        break;
    case BENCH_CONV_BWD_DATA:
        st = dnnl_convolution_backward_data_desc_init(&d, dnnl_convolution_direct, &xd, &wd,
                                                      &yd, strides, pad, pad);
        if (st == dnnl_success)
            st = dnnl_primitive_desc_create(&pd, &d, NULL, engine, fwd);
        arg[0] = DNNL_ARG_DIFF_DST, arg[1] = DNNL_ARG_WEIGHTS, arg[2] = DNNL_ARG_DIFF_SRC;
        q[0] = dnnl_query_diff_dst_md, q[1] = dnnl_query_weights_md;
        q[2] = dnnl_query_diff_src_md, n = 3;
        break;
    case BENCH_CONV_BWD_WEIGHTS:
        st = dnnl_convolution_backward_weights_desc_init(&d, dnnl_convolution_direct, &xd, &wd,
                                                         &bd, &yd, strides, pad, pad);
        if (st == dnnl_success)
            st = dnnl_primitive_desc_create(&pd, &d, NULL, engine, fwd);
        arg[0] = DNNL_ARG_SRC, arg[1] = DNNL_ARG_DIFF_DST, arg[2] = DNNL_ARG_DIFF_WEIGHTS;
        arg[3] = DNNL_ARG_DIFF_BIAS;
        q[0] = dnnl_query_src_md, q[1] = dnnl_query_diff_dst_md;
        q[2] = dnnl_query_diff_weights_md, q[3] = dnnl_query_diff_weights_md, n = 4;
        break;
    }
    if (fwd)
        dnnl_primitive_desc_destroy(fwd);
    if (st != dnnl_success || !pd)
        return NULL;
    const char *name = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
    snprintf(impl, impl_len, "%s", name ? name : "?");
    bench_onednn *c = calloc(1, sizeof *c);
    bool ok = c != NULL;
    for (int i = 0; ok && i < n; i++) {
        /* the bias is the second tensor of its query (index 1) */
        bool bias = arg[i] == DNNL_ARG_BIAS || arg[i] == DNNL_ARG_DIFF_BIAS;
        const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, q[i], bias ? 1 : 0);
        c->mem[i] = md ? memory_new(md, (unsigned)i + 1) : NULL;
        c->args[i] = (dnnl_exec_arg_t){arg[i], c->mem[i]};
        c->n_args = i + 1;
        ok = c->mem[i] != NULL;
    }
    ok = ok && dnnl_primitive_create(&c->prim, pd) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    if (!ok) {
        bench_onednn_free(c);
        return NULL;
    }
    return c;
}

void bench_onednn_run(bench_onednn *c)
{
    if (dnnl_primitive_execute(c->prim, stream, c->n_args, c->args) != dnnl_success ||
        dnnl_stream_wait(stream) != dnnl_success) {
        fprintf(stderr, "bench: a oneDNN primitive failed\n");
        exit(EXIT_FAILURE);
    }
}

void bench_onednn_free(bench_onednn *c)
{
    if (!c)
        return;
    if (c->prim)
        dnnl_primitive_destroy(c->prim);
    for (int i = 0; i < c->n_args; i++)
        if (c->mem[i])
            dnnl_memory_destroy(c->mem[i]);
    free(c);
}
