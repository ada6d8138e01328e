/* The generic op call: describe, run and bound any op from its parameters.
 * The tensors come from the roles the kernel list gives them (op_info.c);
 * dispatch is generated from the list. */
#include <string.h>

#include "attn/attn.h"
#include "op_kernels.h"

/* Largest tensor an op call may describe: 2^28 elements (1 GiB of float),
 * far above the model's shapes, far below what would exhaust memory. */
#define SB_MAX_ELEMENTS ((int64_t)1 << 28)

/* ---- describing ------------------------------------------------------------ */

static void set(sb_tensor *t, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    *t = (sb_tensor){.dtype = SB_DTYPE_F32, .ndim = ndim, .dim = {d0, d1, d2, d3}};
}

static bool dims_positive(int a, int b, int c, int d)
{
    return a > 0 && b > 0 && c > 0 && d > 0;
}

/* The shape of every role a params group's tensors have (ndim 0: a role
 * these params have no tensor for), a function per value of the shapes
 * column of params.def; false for absurd parameters. Conv's completes the
 * output size of c. */
typedef bool shapes_fn(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT]);

static bool shapes_conv(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    sb_conv_shape *cv = &c->conv;
    /* a scratch buffer no family could allocate: refused here rather
     * than failing an allocation inside a run */
    if (sb_conv_shape_complete(cv) != SB_OK || sb_conv_scratch_floats(cv) > SB_MAX_ELEMENTS)
        return false;
    set(&shape[SB_ROLE_x], 4, cv->n, cv->c, cv->h, cv->w);
    set(&shape[SB_ROLE_w], 4, cv->k, cv->c, cv->r, cv->s);
    set(&shape[SB_ROLE_b], 1, cv->k, 1, 1, 1);
    set(&shape[SB_ROLE_y], 4, cv->n, cv->k, cv->p, cv->q);
    return true;
}

static bool shapes_dense(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_dense_shape *dn = &c->dense;
    if (!dims_positive(dn->n, dn->in, dn->out, 1))
        return false;
    set(&shape[SB_ROLE_x], 2, dn->n, dn->in, 1, 1);
    set(&shape[SB_ROLE_w], 2, dn->in, dn->out, 1, 1);
    set(&shape[SB_ROLE_b], 1, dn->out, 1, 1, 1);
    set(&shape[SB_ROLE_y], 2, dn->n, dn->out, 1, 1);
    return true;
}

static bool shapes_pool(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_pool_shape *pl = &c->pool;
    if (!dims_positive(pl->n, pl->c, pl->h / 2, pl->w / 2))
        return false;
    set(&shape[SB_ROLE_x], 4, pl->n, pl->c, pl->h, pl->w);
    set(&shape[SB_ROLE_y], 4, pl->n, pl->c, pl->h / 2, pl->w / 2);
    return true;
}

static bool shapes_cls(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_class_shape *cl = &c->cls;
    /* positions d only in clsd's layout (N, C, d1..dk) */
    if (!dims_positive(cl->n, cl->k, 1, 1) || cl->d < 0 ||
        (cl->d > 1 && sb_op_params_of(c->op) != SB_PARAMS_clsd))
        return false;
    if (cl->d > 1)
        set(&shape[SB_ROLE_z], 3, cl->n, cl->k, cl->d, 1);
    else
        set(&shape[SB_ROLE_z], 2, cl->n, cl->k, 1, 1);
    set(&shape[SB_ROLE_labels], 1, cl->n, 1, 1, 1);
    shape[SB_ROLE_labels].dtype = SB_DTYPE_I32;
    set(&shape[SB_ROLE_scalar], 1, 1, 1, 1, 1);
    return true;
}

static bool shapes_attn(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_attn_shape *at = &c->attn;
    /* the per-thread scratch as for conv: refused here, not failing inside a run */
    if (!dims_positive(at->b, at->t, at->h, at->d) || at->kv_heads < 0 ||
        at->h % sb_attn_kv(at) != 0 || sb_attn_scratch_floats(at) > SB_MAX_ELEMENTS)
        return false;
    /* C = h*d and (h + 2 kv) d in int64: each factor is an int, so no overflow */
    set(&shape[SB_ROLE_x], 3, at->b, at->t, sb_attn_ld(at), 1);
    set(&shape[SB_ROLE_y], 3, at->b, at->t, sb_attn_width(at), 1);
    return true;
}

static bool shapes_vector(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    if (c->n == 0)
        return false;
    for (sb_role r = SB_ROLE_v; r <= SB_ROLE_square; r++)
        set(&shape[r], 1, (int64_t)c->n, 1, 1, 1);
    set(&shape[SB_ROLE_scalar], 1, 1, 1, 1, 1); /* a reduction of the vector */
    return true;
}

static bool shapes_embed(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_embed_shape *em = &c->embed;
    if (!dims_positive(em->n, em->t, em->vocab, em->c))
        return false;
    set(&shape[SB_ROLE_labels], 1, em->n, 1, 1, 1);
    shape[SB_ROLE_labels].dtype = SB_DTYPE_I32;
    set(&shape[SB_ROLE_w], 2, em->vocab, em->c, 1, 1);
    set(&shape[SB_ROLE_b], 2, em->t, em->c, 1, 1);
    set(&shape[SB_ROLE_y], 2, em->n, em->c, 1, 1);
    return true;
}

static bool shapes_norm(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_norm_shape *nm = &c->norm;
    /* eps > 0 keeps 1/sqrt(var + eps) finite on a constant row */
    if (!dims_positive(nm->n, nm->c, 1, 1) || !(nm->eps > 0.0f && nm->eps <= 1.0f))
        return false;
    set(&shape[SB_ROLE_x], 2, nm->n, nm->c, 1, 1);
    set(&shape[SB_ROLE_y], 2, nm->n, nm->c, 1, 1);
    set(&shape[SB_ROLE_w], 1, nm->c, 1, 1, 1);
    set(&shape[SB_ROLE_b], 1, nm->c, 1, 1, 1);
    set(&shape[SB_ROLE_row], 1, nm->n, 1, 1, 1);
    return true;
}

static bool shapes_nll(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_nll_shape *nl = &c->nll;
    if (!dims_positive(nl->n, nl->k, nl->d, 1))
        return false;
    /* ONNX's (N, C) without positions, (N, C, d) with */
    if (nl->d == 1) {
        set(&shape[SB_ROLE_z], 2, nl->n, nl->k, 1, 1);
        set(&shape[SB_ROLE_labels], 1, nl->n, 1, 1, 1);
        set(&shape[SB_ROLE_row], 1, nl->n, 1, 1, 1);
    } else {
        set(&shape[SB_ROLE_z], 3, nl->n, nl->k, nl->d, 1);
        set(&shape[SB_ROLE_labels], 2, nl->n, nl->d, 1, 1);
        set(&shape[SB_ROLE_row], 2, nl->n, nl->d, 1, 1);
    }
    shape[SB_ROLE_labels].dtype = SB_DTYPE_I32;
    set(&shape[SB_ROLE_w], 1, nl->k, 1, 1, 1);
    set(&shape[SB_ROLE_scalar], 1, 1, 1, 1, 1);
    return true;
}

static bool shapes_reduce(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_reduce_shape *rd = &c->reduce;
    if (!dims_positive(rd->outer, rd->r, rd->inner, 1))
        return false;
    set(&shape[SB_ROLE_x], 3, rd->outer, rd->r, rd->inner, 1);
    set(&shape[SB_ROLE_y], 2, rd->outer, rd->inner, 1, 1);
    return true;
}

static bool shapes_window(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_window_shape *wn = &c->window;
    if (!dims_positive(wn->n, wn->c, wn->h, wn->w) ||
        !dims_positive(wn->kh, wn->kw, wn->sh, wn->sw) || wn->kh > wn->h || wn->kw > wn->w)
        return false;
    set(&shape[SB_ROLE_x], 4, wn->n, wn->c, wn->h, wn->w);
    set(&shape[SB_ROLE_y], 4, wn->n, wn->c, (wn->h - wn->kh) / wn->sh + 1,
        (wn->w - wn->kw) / wn->sw + 1);
    shape[SB_ROLE_index] = shape[SB_ROLE_y];
    shape[SB_ROLE_index].dtype = SB_DTYPE_I32;
    return true;
}

static bool shapes_rope(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    const sb_rope_shape *r = &c->rope;
    if (!dims_positive(r->n, r->t, r->h, r->d) || r->d % 2 != 0 ||
        !(r->base > 1.0f && r->base <= 1e9f) || (int64_t)r->h * r->d > INT32_MAX)
        return false;
    set(&shape[SB_ROLE_x], 2, r->n, (int64_t)r->h * r->d, 1, 1);
    set(&shape[SB_ROLE_y], 2, r->n, (int64_t)r->h * r->d, 1, 1);
    return true;
}

static shapes_fn *const shapes_of_params[SB_PARAMS_COUNT] = {
#define SB_PARAMS(name, shapes, ...) [SB_PARAMS_##name] = shapes_##shapes,
#include "params.def"
#undef SB_PARAMS
};

static bool role_shapes(sb_op_call *c, sb_tensor shape[SB_ROLE_COUNT])
{
    memset(shape, 0, SB_ROLE_COUNT * sizeof *shape);
    return shapes_of_params[sb_op_params_of(c->op)](c, shape);
}

/* The tensor of role r; the list names only roles its params have. */
static sb_tensor tensor_of(const sb_tensor shape[SB_ROLE_COUNT], sb_role r)
{
    SB_ASSERT((unsigned)r < SB_ROLE_COUNT && shape[r].ndim > 0);
    SB_ASSERT(shape[r].dtype == sb_role_dtype(r));
    return shape[r];
}

static bool shape_is_sane(const sb_op_call *c)
{
    for (int i = 0; i < c->n_in + c->n_out; i++) {
        const sb_tensor *t = i < c->n_in ? &c->in[i] : &c->out[i - c->n_in];
        int64_t n = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->dim[d] <= 0 || t->dim[d] > SB_MAX_ELEMENTS)
                return false;
            n *= t->dim[d];
            if (n > SB_MAX_ELEMENTS)
                return false;
        }
    }
    return true;
}

sb_status sb_op_call_describe(sb_op_call *c)
{
    if ((unsigned)c->op >= SB_OP_COUNT)
        return SB_ERR_USAGE;
    sb_tensor shape[SB_ROLE_COUNT];
    if (!role_shapes(c, shape))
        return SB_ERR_SHAPE;
    const sb_op_roles r = sb_op_roles_of(c->op);
    c->n_in = r.n_in;
    c->n_out = r.n_out;
    for (int k = 0; k < r.n_in; k++)
        c->in[k] = tensor_of(shape, r.in[k]);
    for (int k = 0; k < r.n_out; k++)
        c->out[k] = tensor_of(shape, r.out[k]);
    return shape_is_sane(c) ? SB_OK : SB_ERR_SHAPE;
}

int sb_op_call_label_range(const sb_op_call *c)
{
    switch (sb_op_params_of(c->op)) {
#define SB_PARAMS(name, shapes, batch, optimizer, labels, ...)                             \
    case SB_PARAMS_##name: return SB_LABEL_RANGE_##labels;
#include "params.def"
#undef SB_PARAMS
    case SB_PARAMS_COUNT:
        break;
    }
    return 0;
}

/* ---- running and bounding ------------------------------------------------- */

void sb_op_call_run(const sb_kernel_table *k, const sb_op_call *c)
{
    switch (c->op) {
#define SB_OP(name, area, params, outputs, inputs, ...)                                    \
    case SB_OP_##name:                                                                     \
        SB_OP_CALL(k->name, params, outputs, inputs);                                      \
        return;
#include "kernels.def"
#undef SB_OP
    case SB_OP_COUNT:
        break;
    }
    SB_ASSERT(!"SB_OP_COUNT is not an op");
}

/* Each reducing op's bound over an op call: the op's arguments with the
 * bound in place of its one output (BOUND ops have one: kernels.def). */
#define SB_OP(name, area, params, outputs, inputs, bound, ...)                             \
    SB_IF_##bound(_Static_assert(SB_COUNT_##outputs == 1, #name ": a BOUND op has one output");)
#include "kernels.def"
#undef SB_OP

typedef void call_bound_fn(float *bound_out, const sb_op_call *c);
#define SB_OP(name, area, params, outputs, inputs, bound, ...)                             \
    SB_IF_##bound(static void bound_##name(float *bound_out, const sb_op_call *c)          \
                  {                                                                        \
                      SB_OP_CALL_BOUND(sb_##name##_bound, bound_out, params, inputs);      \
                  })
#include "kernels.def"
#undef SB_OP

static call_bound_fn *const bounds[SB_OP_COUNT] = {
#define SB_OP(name, area, params, outputs, inputs, bound, ...)                             \
    [SB_OP_##name] = SB_CHOOSE_##bound(bound_##name, NULL),
#include "kernels.def"
#undef SB_OP
};

void sb_op_call_bound(float *bound_out, const void *ctx, int out_index)
{
    const sb_op_call *c = ctx;
    SB_ASSERT((unsigned)c->op < SB_OP_COUNT && out_index >= 0 && out_index < c->n_out);
    call_bound_fn *fn = bounds[c->op];
    if (fn)
        fn(bound_out, c);
    else
        memset(bound_out, 0, sb_tensor_bytes(&c->out[out_index]));
}
