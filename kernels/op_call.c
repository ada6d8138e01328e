/* The generic op call: describe, run and bound any op from its parameters.
 * Dispatch is a switch with no default, so -Wswitch names a new op that was
 * not handled here. */
#include <string.h>

#include "sb_kernels.h"

/* Largest tensor an op call may describe: 2^28 elements (1 GiB of float),
 * far above the model's shapes, far below what would exhaust memory. */
#define SB_MAX_ELEMENTS ((int64_t)1 << 28)

sb_status sb_conv_shape_complete(sb_conv_shape *s)
{
    if (s->n <= 0 || s->c <= 0 || s->h <= 0 || s->w <= 0 || s->k <= 0 ||
        s->r <= 0 || s->s <= 0 || s->stride <= 0 || s->pad < 0 ||
        s->pad >= s->r || s->pad >= s->s)
        return SB_ERR_SHAPE;
    int64_t hp = (int64_t)s->h + 2 * s->pad - s->r;
    int64_t wp = (int64_t)s->w + 2 * s->pad - s->s;
    if (hp < 0 || wp < 0)
        return SB_ERR_SHAPE;
    s->p = (int)(hp / s->stride + 1);
    s->q = (int)(wp / s->stride + 1);
    return SB_OK;
}

double sb_gamma(double n)
{
    const double u = 0x1p-24;
    SB_ASSERT(n * u < 1.0);
    return n * u / (1.0 - n * u);
}

static void set(sb_tensor *t, sb_dtype dtype, int ndim, int64_t d0, int64_t d1,
                int64_t d2, int64_t d3)
{
    t->dtype = dtype;
    t->ndim = ndim;
    t->dim[0] = d0;
    t->dim[1] = d1;
    t->dim[2] = d2;
    t->dim[3] = d3;
}

#define F32 SB_DTYPE_F32

static void set_vector(sb_tensor *t, int64_t n) { set(t, F32, 1, n, 1, 1, 1); }

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

static bool dims_positive(int a, int b, int c, int d)
{
    return a > 0 && b > 0 && c > 0 && d > 0;
}

sb_status sb_op_call_describe(sb_op_call *c)
{
    const sb_conv_shape *cv = &c->conv;
    const sb_dense_shape *dn = &c->dense;
    const sb_pool_shape *pl = &c->pool;
    const sb_class_shape *cl = &c->cls;
    int64_t n = (int64_t)c->n;

    switch (c->op) {
    case SB_OP_conv2d_fwd:
    case SB_OP_conv2d_bwd_data:
    case SB_OP_conv2d_bwd_filter:
    case SB_OP_conv2d_bwd_bias: {
        if (sb_conv_shape_complete(&c->conv) != SB_OK)
            return SB_ERR_SHAPE;
        sb_tensor x, w, b, y;
        set(&x, F32, 4, cv->n, cv->c, cv->h, cv->w);
        set(&w, F32, 4, cv->k, cv->c, cv->r, cv->s);
        set_vector(&b, cv->k);
        set(&y, F32, 4, cv->n, cv->k, cv->p, cv->q);
        if (c->op == SB_OP_conv2d_fwd) {
            c->n_in = 3, c->in[0] = x, c->in[1] = w, c->in[2] = b;
            c->n_out = 1, c->out[0] = y;
        } else if (c->op == SB_OP_conv2d_bwd_data) {
            c->n_in = 2, c->in[0] = y, c->in[1] = w;
            c->n_out = 1, c->out[0] = x;
        } else if (c->op == SB_OP_conv2d_bwd_filter) {
            c->n_in = 2, c->in[0] = y, c->in[1] = x;
            c->n_out = 1, c->out[0] = w;
        } else {
            c->n_in = 1, c->in[0] = y;
            c->n_out = 1, c->out[0] = b;
        }
        break;
    }
    case SB_OP_dense_fwd:
    case SB_OP_dense_bwd_data:
    case SB_OP_dense_bwd_weights:
    case SB_OP_dense_bwd_bias: {
        if (!dims_positive(dn->n, dn->in, dn->out, 1))
            return SB_ERR_SHAPE;
        sb_tensor x, w, b, y;
        set(&x, F32, 2, dn->n, dn->in, 1, 1);
        set(&w, F32, 2, dn->in, dn->out, 1, 1);
        set_vector(&b, dn->out);
        set(&y, F32, 2, dn->n, dn->out, 1, 1);
        if (c->op == SB_OP_dense_fwd) {
            c->n_in = 3, c->in[0] = x, c->in[1] = w, c->in[2] = b;
            c->n_out = 1, c->out[0] = y;
        } else if (c->op == SB_OP_dense_bwd_data) {
            c->n_in = 2, c->in[0] = y, c->in[1] = w;
            c->n_out = 1, c->out[0] = x;
        } else if (c->op == SB_OP_dense_bwd_weights) {
            c->n_in = 2, c->in[0] = y, c->in[1] = x;
            c->n_out = 1, c->out[0] = w;
        } else {
            c->n_in = 1, c->in[0] = y;
            c->n_out = 1, c->out[0] = b;
        }
        break;
    }
    case SB_OP_relu_fwd:
    case SB_OP_dropout_mask:
        if (n <= 0)
            return SB_ERR_SHAPE;
        c->n_in = c->op == SB_OP_relu_fwd ? 1 : 0;
        set_vector(&c->in[0], n);
        c->n_out = 1, set_vector(&c->out[0], n);
        break;
    case SB_OP_relu_bwd:
    case SB_OP_dropout_fwd:
    case SB_OP_dropout_bwd:
        if (n <= 0)
            return SB_ERR_SHAPE;
        c->n_in = 2, set_vector(&c->in[0], n), set_vector(&c->in[1], n);
        c->n_out = 1, set_vector(&c->out[0], n);
        break;
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd: {
        if (!dims_positive(pl->n, pl->c, pl->h / 2, pl->w / 2))
            return SB_ERR_SHAPE;
        sb_tensor x, y;
        set(&x, F32, 4, pl->n, pl->c, pl->h, pl->w);
        set(&y, F32, 4, pl->n, pl->c, pl->h / 2, pl->w / 2);
        if (c->op == SB_OP_maxpool_fwd) {
            c->n_in = 1, c->in[0] = x;
            c->n_out = 1, c->out[0] = y;
        } else {
            c->n_in = 2, c->in[0] = y, c->in[1] = x;
            c->n_out = 1, c->out[0] = x;
        }
        break;
    }
    case SB_OP_softmax_fwd:
    case SB_OP_xent_loss:
    case SB_OP_softmax_xent_bwd:
    case SB_OP_accuracy: {
        if (!dims_positive(cl->n, cl->k, 1, 1))
            return SB_ERR_SHAPE;
        sb_tensor z, labels, scalar;
        set(&z, F32, 2, cl->n, cl->k, 1, 1);
        set(&labels, SB_DTYPE_I32, 1, cl->n, 1, 1, 1);
        set_vector(&scalar, 1);
        c->n_out = 1;
        if (c->op == SB_OP_softmax_fwd) {
            c->n_in = 1, c->in[0] = z;
            c->out[0] = z;
        } else if (c->op == SB_OP_softmax_xent_bwd) {
            c->n_in = 2, c->in[0] = z, c->in[1] = labels;
            c->out[0] = z;
        } else {
            c->n_in = 2, c->in[0] = z, c->in[1] = labels;
            c->out[0] = scalar;
        }
        break;
    }
    case SB_OP_sgd_update:
    case SB_OP_rmsprop_update:
    case SB_OP_adam_update:
    case SB_OP_adadelta_update:
        if (n <= 0)
            return SB_ERR_SHAPE;
        c->n_in = 1, set_vector(&c->in[0], n);
        c->n_out = c->op == SB_OP_sgd_update || c->op == SB_OP_rmsprop_update ? 2 : 3;
        for (int i = 0; i < c->n_out; i++)
            set_vector(&c->out[i], n);
        break;
    case SB_OP_COUNT:
        return SB_ERR_USAGE;
    }
    return shape_is_sane(c) ? SB_OK : SB_ERR_SHAPE;
}

#define IN(i) ((const float *)c->in[i].data)
#define OUT(i) ((float *)c->out[i].data)
#define LABELS(i) ((const int32_t *)c->in[i].data)

void sb_op_call_run(const sb_kernel_table *k, const sb_op_call *c)
{
    switch (c->op) {
    case SB_OP_conv2d_fwd: k->conv2d_fwd(OUT(0), IN(0), IN(1), IN(2), &c->conv); break;
    case SB_OP_conv2d_bwd_data: k->conv2d_bwd_data(OUT(0), IN(0), IN(1), &c->conv); break;
    case SB_OP_conv2d_bwd_filter: k->conv2d_bwd_filter(OUT(0), IN(0), IN(1), &c->conv); break;
    case SB_OP_conv2d_bwd_bias: k->conv2d_bwd_bias(OUT(0), IN(0), &c->conv); break;
    case SB_OP_dense_fwd: k->dense_fwd(OUT(0), IN(0), IN(1), IN(2), &c->dense); break;
    case SB_OP_dense_bwd_data: k->dense_bwd_data(OUT(0), IN(0), IN(1), &c->dense); break;
    case SB_OP_dense_bwd_weights: k->dense_bwd_weights(OUT(0), IN(0), IN(1), &c->dense); break;
    case SB_OP_dense_bwd_bias: k->dense_bwd_bias(OUT(0), IN(0), &c->dense); break;
    case SB_OP_relu_fwd: k->relu_fwd(OUT(0), IN(0), c->n); break;
    case SB_OP_relu_bwd: k->relu_bwd(OUT(0), IN(0), IN(1), c->n); break;
    case SB_OP_maxpool_fwd: k->maxpool_fwd(OUT(0), IN(0), &c->pool); break;
    case SB_OP_maxpool_bwd: k->maxpool_bwd(OUT(0), IN(0), IN(1), &c->pool); break;
    case SB_OP_dropout_mask: k->dropout_mask(OUT(0), &c->dropout, c->n); break;
    case SB_OP_dropout_fwd: k->dropout_fwd(OUT(0), IN(0), IN(1), c->n); break;
    case SB_OP_dropout_bwd: k->dropout_bwd(OUT(0), IN(0), IN(1), c->n); break;
    case SB_OP_softmax_fwd: k->softmax_fwd(OUT(0), IN(0), &c->cls); break;
    case SB_OP_xent_loss: k->xent_loss(OUT(0), IN(0), LABELS(1), &c->cls); break;
    case SB_OP_softmax_xent_bwd: k->softmax_xent_bwd(OUT(0), IN(0), LABELS(1), &c->cls); break;
    case SB_OP_accuracy: k->accuracy(OUT(0), IN(0), LABELS(1), &c->cls); break;
    case SB_OP_sgd_update: k->sgd_update(OUT(0), OUT(1), IN(0), &c->optim, c->n); break;
    case SB_OP_rmsprop_update: k->rmsprop_update(OUT(0), OUT(1), IN(0), &c->optim, c->n); break;
    case SB_OP_adam_update: k->adam_update(OUT(0), OUT(1), OUT(2), IN(0), &c->optim, c->t, c->n); break;
    case SB_OP_adadelta_update:
        k->adadelta_update(OUT(0), OUT(1), OUT(2), IN(0), &c->optim, c->n);
        break;
    case SB_OP_COUNT: SB_ASSERT(!"SB_OP_COUNT is not an op"); break;
    }
}

bool sb_op_has_reduction(sb_op op)
{
    switch (op) {
    case SB_OP_conv2d_fwd:
    case SB_OP_conv2d_bwd_data:
    case SB_OP_conv2d_bwd_filter:
    case SB_OP_conv2d_bwd_bias:
    case SB_OP_dense_fwd:
    case SB_OP_dense_bwd_data:
    case SB_OP_dense_bwd_weights:
    case SB_OP_dense_bwd_bias:
    case SB_OP_softmax_fwd:
    case SB_OP_xent_loss:
        return true;
    /* No reduction, or one whose result is exact in any order: relu, pool
     * (max is exact), dropout, the softmax-xent gradient (elementwise on
     * prob), accuracy (an integer count), optimiser updates. */
    case SB_OP_relu_fwd:
    case SB_OP_relu_bwd:
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd:
    case SB_OP_dropout_mask:
    case SB_OP_dropout_fwd:
    case SB_OP_dropout_bwd:
    case SB_OP_softmax_xent_bwd:
    case SB_OP_accuracy:
    case SB_OP_sgd_update:
    case SB_OP_rmsprop_update:
    case SB_OP_adam_update:
    case SB_OP_adadelta_update:
    case SB_OP_COUNT:
        return false;
    }
    return false;
}

void sb_op_call_bound(float *bound, const void *ctx, int out_index)
{
    const sb_op_call *c = ctx;
    SB_ASSERT(out_index >= 0 && out_index < c->n_out);
    switch (c->op) {
    case SB_OP_conv2d_fwd: sb_conv2d_fwd_bound(bound, IN(0), IN(1), IN(2), &c->conv); return;
    case SB_OP_conv2d_bwd_data: sb_conv2d_bwd_data_bound(bound, IN(0), IN(1), &c->conv); return;
    case SB_OP_conv2d_bwd_filter: sb_conv2d_bwd_filter_bound(bound, IN(0), IN(1), &c->conv); return;
    case SB_OP_conv2d_bwd_bias: sb_conv2d_bwd_bias_bound(bound, IN(0), &c->conv); return;
    case SB_OP_dense_fwd: sb_dense_fwd_bound(bound, IN(0), IN(1), IN(2), &c->dense); return;
    case SB_OP_dense_bwd_data: sb_dense_bwd_data_bound(bound, IN(0), IN(1), &c->dense); return;
    case SB_OP_dense_bwd_weights: sb_dense_bwd_weights_bound(bound, IN(0), IN(1), &c->dense); return;
    case SB_OP_dense_bwd_bias: sb_dense_bwd_bias_bound(bound, IN(0), &c->dense); return;
    case SB_OP_softmax_fwd: sb_softmax_fwd_bound(bound, IN(0), &c->cls); return;
    case SB_OP_xent_loss: sb_xent_loss_bound(bound, IN(0), LABELS(1), &c->cls); return;
    case SB_OP_relu_fwd:
    case SB_OP_relu_bwd:
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd:
    case SB_OP_dropout_mask:
    case SB_OP_dropout_fwd:
    case SB_OP_dropout_bwd:
    case SB_OP_softmax_xent_bwd:
    case SB_OP_accuracy:
    case SB_OP_sgd_update:
    case SB_OP_rmsprop_update:
    case SB_OP_adam_update:
    case SB_OP_adadelta_update:
        memset(bound, 0, sb_tensor_bytes(&c->out[out_index]));
        return;
    case SB_OP_COUNT: break;
    }
    SB_ASSERT(!"SB_OP_COUNT is not an op");
}
