/* The generic op call and the kernel tables: shapes every op describes,
 * absurd parameters refused, names round-tripping, no empty table entry,
 * gamma, and the optimiser ops dispatched with their tensors in order. */
#include <limits.h>
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sb_kernels.h"
#include "sb_rng.h"

Suite *make_op_call_suite(void);

#define MAX_ELEMENTS ((int64_t)1 << 28)

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Parameters in the models' range (the Keras MNIST CNN, the char GPT) for
 * every op. */
static sb_op_call valid_call(sb_op op)
{
    sb_op_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.conv = (sb_conv_shape){.n = 8, .c = 32, .h = 26, .w = 26, .k = 64, .r = 3, .s = 3,
                             .stride = 1, .pad = 0};
    c.dense = (sb_dense_shape){.n = 8, .in = 9216, .out = 128};
    c.pool = (sb_pool_shape){.n = 8, .c = 64, .h = 24, .w = 24};
    c.cls = (sb_class_shape){.n = 8, .k = 10};
    c.attn = (sb_attn_shape){.b = 4, .t = 64, .h = 4, .d = 32};
    c.dropout = (sb_dropout_params){.rate = 0.25f, .seed = 1, .stream = SB_STREAM_DROPOUT};
    sb_optim_defaults(&c.optim, SB_OPTIM_ADADELTA);
    c.t = 1;
    c.n = 1000;
    c.embed = (sb_embed_shape){.n = 1024, .t = 64, .vocab = 65, .c = 128};
    c.norm = (sb_norm_shape){.n = 1024, .c = 128, .eps = 1e-5f};
    c.rope = (sb_rope_shape){.n = 1024, .t = 64, .h = 4, .d = 32, .base = 10000.0f};
    c.nll = (sb_nll_shape){.n = 1024, .k = 65, .d = 1, .ignore_index = -100};
    c.reduce = (sb_reduce_shape){.outer = 16, .r = 64, .inner = 128};
    c.window = (sb_window_shape){.n = 8, .c = 32, .h = 26, .w = 26, .kh = 3, .kw = 3, .sh = 2,
                                 .sw = 2};
    return c;
}

static void check_sane(const sb_op_call *c)
{
    const char *name = sb_op_name(c->op);
    ck_assert_msg(c->n_in >= 0 && c->n_in <= SB_OP_MAX_IN, "%s: n_in %d", name, c->n_in);
    ck_assert_msg(c->n_out >= 1 && c->n_out <= SB_OP_MAX_OUT, "%s: n_out %d", name, c->n_out);
    for (int i = 0; i < c->n_in + c->n_out; i++) {
        const sb_tensor *t = i < c->n_in ? &c->in[i] : &c->out[i - c->n_in];
        ck_assert_msg(t->dtype == SB_DTYPE_F32 || t->dtype == SB_DTYPE_I32, "%s: dtype", name);
        ck_assert_msg(t->ndim >= 1 && t->ndim <= SB_MAX_DIMS, "%s: ndim %d", name, t->ndim);
        int64_t count = 1;
        for (int d = 0; d < t->ndim; d++) {
            ck_assert_msg(t->dim[d] > 0, "%s: tensor %d dim %d is %lld", name, i, d,
                          (long long)t->dim[d]);
            count *= t->dim[d];
        }
        ck_assert_msg(count <= MAX_ELEMENTS, "%s: tensor %d too large", name, i);
        ck_assert_uint_eq(sb_tensor_count(t), (size_t)count);
    }
}

START_TEST(test_every_op_describes_sane_shapes)
{
    for (int op = 0; op < SB_OP_COUNT; op++) {
        sb_op_call c = valid_call((sb_op)op);
        ck_assert_msg(sb_op_call_describe(&c) == SB_OK, "%s", sb_op_name((sb_op)op));
        check_sane(&c);
    }
}
END_TEST

static int64_t count_of(const sb_tensor *t) { return (int64_t)sb_tensor_count(t); }

START_TEST(test_specific_shapes)
{
    /* conv 3x3, stride 1, no padding: 26 -> 24 */
    sb_op_call c = valid_call(SB_OP_conv2d_fwd);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(c.conv.p, 24);
    ck_assert_int_eq(c.conv.q, 24);
    ck_assert_int_eq(c.n_in, 3);
    ck_assert_int_eq(count_of(&c.out[0]), 8 * 64 * 24 * 24);
    ck_assert_int_eq(count_of(&c.in[1]), 64 * 32 * 3 * 3);
    /* padding 1, stride 2: (26 + 2 - 3)/2 + 1 = 13 */
    c = valid_call(SB_OP_conv2d_fwd);
    c.conv.pad = 1, c.conv.stride = 2;
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(c.conv.p, 13);
    /* dense weights in Keras layout [in][out] */
    c = valid_call(SB_OP_dense_bwd_weights);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(c.out[0].dim[0], 9216);
    ck_assert_int_eq(c.out[0].dim[1], 128);
    /* pool halves, flooring odd sizes */
    c = valid_call(SB_OP_maxpool_fwd);
    c.pool.h = 25;
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(c.out[0].dim[2], 12);
    /* labels are int32 */
    c = valid_call(SB_OP_xent_loss);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(c.in[1].dtype, SB_DTYPE_I32);
    ck_assert_int_eq(count_of(&c.out[0]), 1);
    /* attention: qkv [b][t][3C] in, y [b][t][C] out; its gradient is qkv's shape */
    c = valid_call(SB_OP_attention_fwd);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(c.in[0].ndim, 3);
    ck_assert_int_eq(c.in[0].dim[2], 3 * 4 * 32);
    ck_assert_int_eq(c.out[0].dim[2], 4 * 32);
    c = valid_call(SB_OP_attention_bwd);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(count_of(&c.out[0]), 4 * 64 * 3 * 128);
    ck_assert_int_eq(count_of(&c.in[0]), 4 * 64 * 128);
    /* the gradient norm: one value */
    c = valid_call(SB_OP_grad_norm);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    ck_assert_int_eq(count_of(&c.out[0]), 1);
    ck_assert_int_eq(count_of(&c.in[0]), 1000);
    /* optimisers: g in, weights and state out */
    static const struct {
        sb_op op;
        int n_out;
    } optim[] = {{SB_OP_sgd_update, 2}, {SB_OP_rmsprop_update, 2},
                 {SB_OP_adam_update, 3}, {SB_OP_adadelta_update, 3},
                 {SB_OP_adamw_update, 3}};
    for (size_t i = 0; i < sizeof optim / sizeof optim[0]; i++) {
        c = valid_call(optim[i].op);
        ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
        ck_assert_int_eq(c.n_in, 1);
        ck_assert_int_eq(c.n_out, optim[i].n_out);
        for (int j = 0; j < c.n_out; j++)
            ck_assert_int_eq(count_of(&c.out[j]), 1000);
    }
}
END_TEST

/* One absurd variant of the parameters an op reads. */
typedef void absurd_fn(sb_op_call *c);

static void zero_dims(sb_op_call *c)
{
    c->conv.n = 0, c->dense.in = 0, c->pool.c = 0, c->cls.k = 0, c->n = 0;
    c->embed.vocab = 0, c->norm.c = 0;
    c->attn.d = 0, c->rope.t = 0, c->nll.k = 0, c->reduce.r = 0, c->window.sh = 0;
}

static void negative_dims(sb_op_call *c)
{
    c->conv.k = -3, c->dense.out = -1, c->pool.n = -8, c->cls.n = -1, c->attn.h = -2;
    c->n = (size_t)-1; /* -1 as a size: beyond any limit */
    c->embed.t = -2, c->norm.n = -1, c->rope.h = -1, c->nll.d = -1, c->reduce.inner = -1, c->window.kw = -3;
}

/* Each dimension fine, the product beyond 2^28 elements in some tensor every
 * op touches (the bias gradients see only y, so its other dims are large). */
static void too_large(sb_op_call *c)
{
    c->conv.n = 1 << 10, c->conv.c = c->conv.k = 1 << 10, c->conv.h = c->conv.w = 1 << 5;
    c->dense.n = 1 << 15, c->dense.in = c->dense.out = 1 << 14;
    c->pool.n = 1 << 10, c->pool.c = 1 << 10, c->pool.h = c->pool.w = 1 << 5;
    c->cls.n = 1 << 15, c->cls.k = 1 << 14;
    c->attn = (sb_attn_shape){.b = 1 << 12, .t = 1 << 10, .h = 1 << 4, .d = 1 << 4};
    c->n = ((size_t)1 << 28) + 1;
    c->embed.n = 1 << 15, c->embed.t = 1 << 15, c->embed.vocab = 1 << 15, c->embed.c = 1 << 14;
    c->norm.n = 1 << 15, c->norm.c = 1 << 14;
    c->rope.n = 1 << 15, c->rope.h = 1 << 7, c->rope.d = 1 << 7;
    c->nll.n = 1 << 15, c->nll.k = 1 << 10, c->nll.d = 1 << 5;
    c->reduce.outer = 1 << 15, c->reduce.r = 1 << 10, c->reduce.inner = 1 << 5;
    c->window.n = 1 << 10, c->window.c = 1 << 10, c->window.h = c->window.w = 1 << 5;
}

/* A kernel larger than the padded input (pool: input smaller than its
 * window; the other ops have no kernel and get a zero size instead). */
static void kernel_too_large(sb_op_call *c)
{
    c->conv.h = 2, c->conv.r = 5, c->conv.pad = 1;
    c->pool.h = 1;
    c->dense.n = 0, c->cls.n = 0, c->n = 0, c->attn.t = 0;
    c->embed.n = 0, c->norm.eps = 0.0f; /* norm: eps 0, 1/sqrt(0) on a constant row */
    c->rope.d = 33;                      /* rope: a head of odd width has no pairs */
    c->nll.n = 0, c->reduce.outer = 0;
    c->window.kh = 27; /* window: taller than the input */
}

START_TEST(test_absurd_shapes_refused)
{
    static absurd_fn *const absurd[] = {zero_dims, negative_dims, too_large, kernel_too_large};
    static const char *const what[] = {"zero", "negative", "too large", "kernel too large"};
    for (size_t a = 0; a < sizeof absurd / sizeof absurd[0]; a++) {
        for (int op = 0; op < SB_OP_COUNT; op++) {
            sb_op_call c = valid_call((sb_op)op);
            absurd[a](&c);
            ck_assert_msg(sb_op_call_describe(&c) == SB_ERR_SHAPE, "%s: %s accepted",
                          sb_op_name((sb_op)op), what[a]);
        }
    }
    /* conv only: padding of the kernel size or more, and a zero stride */
    sb_op_call c = valid_call(SB_OP_conv2d_fwd);
    c.conv.pad = 3;
    ck_assert_int_eq(sb_op_call_describe(&c), SB_ERR_SHAPE);
    c = valid_call(SB_OP_conv2d_fwd);
    c.conv.stride = 0;
    ck_assert_int_eq(sb_op_call_describe(&c), SB_ERR_SHAPE);
    c = valid_call(SB_OP_COUNT);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_ERR_USAGE);
}
END_TEST

/* A pad near INT_MAX (under a window larger still): 2 * pad must not
 * overflow (UBSan halts the ASan build's run on it) and the shape is absurd. */
START_TEST(test_conv_huge_pad_refused)
{
    sb_op_call c = valid_call(SB_OP_conv2d_fwd);
    c.conv.pad = INT_MAX - 1;
    c.conv.r = c.conv.s = INT_MAX;
    ck_assert_int_eq(sb_op_call_describe(&c), SB_ERR_SHAPE);
}
END_TEST

/* Every tensor within 2^28 elements, but scratch no family can allocate:
 * the column matrix of an image (36 taps x 8190^2 positions), or det's
 * partial weight gradients (2^18 groups of 2^16 weights). */
START_TEST(test_conv_huge_scratch_refused)
{
    for (int op = 0; op < SB_OP_COUNT; op++) {
        if (sb_op_params_of((sb_op)op) != SB_PARAMS_conv)
            continue;
        sb_op_call c = valid_call((sb_op)op);
        c.conv = (sb_conv_shape){.n = 1, .c = 4, .h = 8192, .w = 8192, .k = 1, .r = 3,
                                 .s = 3, .stride = 1};
        ck_assert_msg(sb_op_call_describe(&c) == SB_ERR_SHAPE, "%s: column matrix",
                      sb_op_name((sb_op)op));
        c.conv = (sb_conv_shape){.n = 1 << 20, .c = 1, .h = 16, .w = 16, .k = 256, .r = 16,
                                 .s = 16, .stride = 1};
        ck_assert_msg(sb_op_call_describe(&c) == SB_ERR_SHAPE, "%s: partials",
                      sb_op_name((sb_op)op));
    }
}
END_TEST

/* Every tensor within 2^28 elements, but per-thread scratch of attention's
 * two [t][t] matrices beyond it. */
START_TEST(test_attn_huge_scratch_refused)
{
    for (int op = 0; op < SB_OP_COUNT; op++) {
        if (sb_op_params_of((sb_op)op) != SB_PARAMS_attn)
            continue;
        sb_op_call c = valid_call((sb_op)op);
        c.attn = (sb_attn_shape){.b = 1, .t = 1 << 14, .h = 1, .d = 1};
        ck_assert_msg(sb_op_call_describe(&c) == SB_ERR_SHAPE, "%s", sb_op_name((sb_op)op));
    }
}
END_TEST

START_TEST(test_names_round_trip)
{
    for (int op = 0; op < SB_OP_COUNT; op++) {
        const char *name = sb_op_name((sb_op)op);
        ck_assert_str_ne(name, "?");
        ck_assert_int_eq(sb_op_from_name(name), op);
    }
    ck_assert_str_eq(sb_op_name(SB_OP_adadelta_update), "adadelta_update");
    ck_assert_str_eq(sb_op_name(SB_OP_COUNT), "?");
    ck_assert_int_eq(sb_op_from_name("no_such_op"), SB_OP_COUNT);
    ck_assert_int_eq(sb_op_from_name(""), SB_OP_COUNT);
    ck_assert_int_eq(sb_op_from_name("conv2d_fwd "), SB_OP_COUNT);
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        ck_assert_int_eq(sb_family_from_name(sb_family_name((sb_family)f)), f);
    ck_assert_str_eq(sb_family_name(SB_FAMILY_DET), "det");
    ck_assert_int_eq(sb_family_from_name("fast"), SB_FAMILY_COUNT);
    ck_assert_str_eq(sb_family_name(SB_FAMILY_COUNT), "?");
}
END_TEST

START_TEST(test_tables_complete)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *t = sb_kernels((sb_family)f);
        ck_assert_ptr_nonnull(t);
#define SB_OP(name, ...) \
    ck_assert_msg(t->name != NULL, "%s: %s is NULL", sb_family_name((sb_family)f), #name);
#include "kernels.def"
#undef SB_OP
    }
    /* ref is the readable definitions themselves */
    const sb_kernel_table *ref = sb_kernels(SB_FAMILY_REF);
#define SB_OP(name, ...) ck_assert(ref->name == sb_##name##_ref);
#include "kernels.def"
#undef SB_OP
}
END_TEST

/* gamma(n) = n u / (1 - n u), u = 2^-24. Where n u and 1 - n u are exact in
 * double, the result is one correctly rounded division, so it equals the
 * same quotient written another way bit for bit. */
START_TEST(test_gamma)
{
    ck_assert(same_bits(sb_gamma(0.0), 0.0));
    ck_assert(same_bits(sb_gamma(1.0), 1.0 / (0x1p24 - 1.0)));
    ck_assert(same_bits(sb_gamma(0x1p23), 1.0));  /* (1/2) / (1/2) */
    ck_assert(same_bits(sb_gamma(0x1p22), 1.0 / 3.0)); /* (1/4) / (3/4) */
    ck_assert(same_bits(sb_gamma(9216.0), 9216.0 / (0x1p24 - 9216.0)));
    /* increasing, and above n u */
    double prev = 0.0;
    for (double n = 1.0; n < 0x1p24; n *= 2.0) {
        double g = sb_gamma(n);
        ck_assert(isfinite(g));
        ck_assert_double_gt(g, prev);
        ck_assert_double_ge(g, n * 0x1p-24);
        prev = g;
    }
}
END_TEST

START_TEST(test_bound_zero_without_reduction)
{
    ck_assert(!sb_op_has_reduction(SB_OP_adam_update));
    ck_assert(!sb_op_has_reduction(SB_OP_relu_fwd));
    ck_assert(sb_op_has_reduction(SB_OP_conv2d_fwd));
    ck_assert(sb_op_has_reduction(SB_OP_dense_bwd_weights));
    sb_op_call c = valid_call(SB_OP_adam_update);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    float bound[1000];
    for (int i = 0; i < 1000; i++)
        bound[i] = NAN;
    for (int out = 0; out < c.n_out; out++) {
        sb_op_call_bound(bound, &c, out);
        for (int i = 0; i < 1000; i++)
            ck_assert_msg(bound[i] >= 0.0f && bound[i] <= 0.0f, "bound[%d] of output %d", i, out);
    }
}
END_TEST

/* sb_op_call_run hands the tensors to the optimiser in signature order:
 * outputs w, state...; input g. Compared with a direct call on copies. */
enum { OPT_N = 1000 };
typedef float optim_buffers[4][OPT_N]; /* w, state 1, state 2, g */
typedef void direct_fn(const sb_kernel_table *k, optim_buffers b, const sb_optim_params *o);

static void direct_sgd(const sb_kernel_table *k, optim_buffers b, const sb_optim_params *o)
{
    k->sgd_update(b[0], b[1], b[3], o, OPT_N);
}

static void direct_rmsprop(const sb_kernel_table *k, optim_buffers b, const sb_optim_params *o)
{
    k->rmsprop_update(b[0], b[1], b[3], o, OPT_N);
}

static void direct_adam(const sb_kernel_table *k, optim_buffers b, const sb_optim_params *o)
{
    k->adam_update(b[0], b[1], b[2], b[3], o, 2, OPT_N);
}

static void direct_adadelta(const sb_kernel_table *k, optim_buffers b, const sb_optim_params *o)
{
    k->adadelta_update(b[0], b[1], b[2], b[3], o, OPT_N);
}

static void direct_adamw(const sb_kernel_table *k, optim_buffers b, const sb_optim_params *o)
{
    k->adamw_update(b[0], b[1], b[2], b[3], o, 2, OPT_N);
}

START_TEST(test_run_optimiser_tensor_order)
{
    static const struct {
        sb_op op;
        sb_optimizer kind;
        direct_fn *direct;
    } ops[] = {
        {SB_OP_sgd_update, SB_OPTIM_SGD, direct_sgd},
        {SB_OP_rmsprop_update, SB_OPTIM_RMSPROP, direct_rmsprop},
        {SB_OP_adam_update, SB_OPTIM_ADAM, direct_adam},
        {SB_OP_adadelta_update, SB_OPTIM_ADADELTA, direct_adadelta},
        {SB_OP_adamw_update, SB_OPTIM_ADAMW, direct_adamw},
    };
    const sb_kernel_table *k = sb_kernels(SB_FAMILY_DET);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        static optim_buffers a, b;
        for (int j = 0; j < 4; j++)
            sb_rng_fill_uniform(a[j], OPT_N, j == 0 ? -1.0f : 0.0f, 1.0f, 3,
                                SB_STREAM_CASE_INPUT + (uint32_t)j, 0);
        memcpy(b, a, sizeof a);
        sb_op_call c = valid_call(ops[i].op);
        sb_optim_defaults(&c.optim, ops[i].kind);
        c.optim.momentum = 0.5f; /* read by sgd only; makes its state matter */
        c.t = 2;
        c.n = OPT_N;
        ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
        for (int j = 0; j < c.n_out; j++)
            c.out[j].data = a[j];
        c.in[0].data = a[3];
        sb_op_call_run(k, &c);
        ops[i].direct(k, b, &c.optim);
        ck_assert_msg(memcmp(a, b, sizeof a) == 0, "%s", sb_op_name(ops[i].op));
    }
}
END_TEST

/* What the kernel list says of each op agrees with what describing it gives,
 * and the optimiser updates are the ops whose tensors change in place. */
START_TEST(test_list_metadata)
{
    for (int op = 0; op < SB_OP_COUNT; op++) {
        const char *name = sb_op_name((sb_op)op);
        sb_op_call c = valid_call((sb_op)op);
        ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
        sb_op_roles r = sb_op_roles_of((sb_op)op);
        ck_assert_int_eq(r.n_in, c.n_in);
        ck_assert_int_eq(r.n_out, c.n_out);
        for (int i = 0; i < r.n_in; i++)
            ck_assert_msg(c.in[i].dtype == (r.in[i] == SB_ROLE_labels ? SB_DTYPE_I32
                                                                      : SB_DTYPE_F32),
                          "%s: input %d (%s)", name, i, sb_role_name(r.in[i]));
        const sb_optimizer kind = sb_params_optimizer(sb_op_params_of((sb_op)op));
        for (int j = 0; j < r.n_out; j++)
            ck_assert_msg(sb_role_in_place(r.out[j]) == (kind != SB_OPTIM_COUNT),
                          "%s: output %d (%s)", name, j, sb_role_name(r.out[j]));
        for (int i = 0; i < r.n_in; i++)
            ck_assert_msg(!sb_role_in_place(r.in[i]), "%s: input %d", name, i);
        ck_assert_int_eq(sb_op_updates_in_place((sb_op)op), kind != SB_OPTIM_COUNT);
        ck_assert_str_ne(sb_op_area((sb_op)op), "?");
    }
    for (int k = 0; k < SB_OPTIM_COUNT; k++) {
        sb_op op = sb_optimizer_update_op((sb_optimizer)k);
        char want[32];
        snprintf(want, sizeof want, "%s_update", sb_optimizer_name((sb_optimizer)k));
        ck_assert_str_eq(sb_op_name(op), want);
    }
    ck_assert_int_eq(sb_optimizer_update_op(SB_OPTIM_COUNT), SB_OP_COUNT);
    /* the squared-gradient state never holds a negative value */
    ck_assert(sb_role_nonnegative(SB_ROLE_square) && !sb_role_nonnegative(SB_ROLE_moment));
    ck_assert_str_eq(sb_op_area(SB_OP_dense_fwd), "dense");
}
END_TEST

Suite *make_op_call_suite(void)
{
    Suite *s = suite_create("op_call");
    TCase *tc = tcase_create("describe");
    tcase_add_test(tc, test_every_op_describes_sane_shapes);
    tcase_add_test(tc, test_specific_shapes);
    tcase_add_test(tc, test_absurd_shapes_refused);
    tcase_add_test(tc, test_conv_huge_pad_refused);
    tcase_add_test(tc, test_conv_huge_scratch_refused);
    tcase_add_test(tc, test_attn_huge_scratch_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("tables");
    tcase_add_test(tc, test_names_round_trip);
    tcase_add_test(tc, test_tables_complete);
    tcase_add_test(tc, test_gamma);
    tcase_add_test(tc, test_bound_zero_without_reduction);
    tcase_add_test(tc, test_run_optimiser_tensor_order);
    tcase_add_test(tc, test_list_metadata);
    suite_add_tcase(s, tc);
    return s;
}
