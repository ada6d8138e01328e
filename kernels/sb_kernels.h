/* The training kernels: shapes, the kernel table of each family, and the
 * generic op call that lets the harness run any op from a case file. */
#ifndef SB_KERNELS_H
#define SB_KERNELS_H

#include <stdbool.h>

#include "sb_op_list.h"
#include "sb_common.h"
#include "sb_probe.h"

typedef struct sb_conv_shape {
    int n, c, h, w;     /* input */
    int k, r, s;        /* k filters of c x r x s */
    int stride, pad;
    int p, q;           /* output height, width: see sb_conv_shape_complete */
} sb_conv_shape;

typedef struct sb_dense_shape {
    int n, in, out;
} sb_dense_shape;

typedef struct sb_pool_shape {
    int n, c, h, w;     /* input; window and stride are 2, output h/2 x w/2 (floor) */
} sb_pool_shape;

typedef struct sb_class_shape {
    int n, k;           /* samples, classes */
    int mean_over;      /* softmax_xent_bwd: the rows the loss is the mean over, so the
                         * gradient's divisor; 0 for n. A data-parallel pass over part
                         * of a batch gives the whole batch's size. */
    int d;              /* log_softmax_fwd, log_softmax_bwd: positions per row, ONNX's
                         * (N, C, d1..dk) with d = d1..dk: z [n][k][d], the softmax over
                         * the middle axis; 0 or 1: z [n][k] */
} sb_class_shape;

/* Token and position embeddings: n token rows, row i at position i % t;
 * token ids in [0, vocab); width c. */
typedef struct sb_embed_shape {
    int n;
    int t;
    int vocab;
    int c;
} sb_embed_shape;

/* Layer normalisation of n rows of c over c; eps 1e-5 (PyTorch's default). */
typedef struct sb_norm_shape {
    int n, c;
    float eps;
} sb_norm_shape;
/* Negative log-likelihood over n rows of k classes at d positions each
 * (ONNX's (N, C, d) layout: logprob [n][k][d], labels int32 [n][d]); a
 * label equal to ignore_index adds nothing, not even to the mean's
 * denominator (-100 by default, PyTorch's); weighted: each term is scaled
 * by its class's weight w [k], and the mean divides by the weights' sum,
 * else every weight is 1 (w is not read) and the mean divides by the count. */
typedef struct sb_nll_shape {
    int n, k, d;
    int ignore_index;
    bool weighted;
} sb_nll_shape;

/* Pooling with any window kh x kw and stride (sh, sw), no padding: x
 * [n][c][h][w], y [n][c][(h - kh) / sh + 1][(w - kw) / sw + 1]. */
typedef struct sb_window_shape {
    int n, c, h, w;
    int kh, kw, sh, sw;
} sb_window_shape;

/* ReduceMean over the middle axis of x [outer][r][inner] (ONNX's over one
 * axis, or over consecutive axes folded into r): y [outer][inner]. */
typedef struct sb_reduce_shape {
    int outer, r, inner;
} sb_reduce_shape;

/* Rotary position embedding of n rows, row i at position i % t, each row h
 * heads of width d (even), the pairs (2k, 2k + 1) of a head rotated by the
 * angle position * base^(-2k/d). */
typedef struct sb_rope_shape {
    int n, t, h, d;
    float base;
} sb_rope_shape;

/* Multi-head self-attention over a fused QKV tensor, with grouped key/value
 * heads: query head j reads key/value head j / (h / kv_heads). */
typedef struct sb_attn_shape {
    int b, t, h, d;     /* b sequences of t tokens, h heads of width d (C = h*d);
                         * scores scaled by 1/sqrt(d) */
    int kv_heads;       /* key/value heads, dividing h; 0: h (multi-head) */
    bool noncausal;     /* every query sees every key; false: causal */
} sb_attn_shape;

/* Dropout: element i of the mask is drawn from the counter-based RNG at
 * counter (stream, step, i) under key seed; kept elements are 1/(1-rate). */
typedef struct sb_dropout_params {
    float rate;
    uint64_t seed;
    uint32_t stream;
    uint32_t step;
} sb_dropout_params;

typedef enum sb_optimizer {
    SB_OPTIM_SGD,       /* momentum and nesterov select the variant */
    SB_OPTIM_RMSPROP,
    SB_OPTIM_ADAM,
    SB_OPTIM_ADADELTA,
    SB_OPTIM_ADAMW,     /* PyTorch's torch.optim.AdamW */
    SB_OPTIM_COUNT
} sb_optimizer;

/* Keras 2.1 hyper-parameters (PyTorch's for adamw); sb_optim_defaults fills
 * that library's defaults. */
typedef struct sb_optim_params {
    sb_optimizer kind;
    float lr;
    float momentum;     /* sgd */
    bool nesterov;      /* sgd */
    float rho;          /* rmsprop, adadelta */
    float beta1, beta2; /* adam, adamw */
    float epsilon;
    float decay;        /* lr / (1 + decay * iterations); not adamw */
    float weight_decay; /* adamw: w *= 1 - lr * weight_decay before the step */
    float grad_scale;   /* adamw: the gradient is g * grad_scale, the clipping
                         * factor min(1, max_norm / (norm + 1e-6)); 1 when not
                         * clipping */
} sb_optim_params;

void sb_optim_defaults(sb_optim_params *o, sb_optimizer kind);
const char *sb_optimizer_name(sb_optimizer kind);
/* The name of state s of an optimiser's update (s in [0, the update op's
 * outputs - 1)): the signature's name of the tensor it updates in place
 * after the parameter ("velocity"; "acc"; "m", "v"; "acc", "delta_acc"). */
const char *sb_optimizer_state_name(sb_optimizer kind, int s);
/* true for the optimisers whose update reads the 1-based step t (adam, adamw) */
bool sb_optimizer_counts_steps(sb_optimizer kind);

/* Fills p and q from the rest; SB_ERR_SHAPE for an absurd shape
 * (conv/conv_shape.c). */
sb_status sb_conv_shape_complete(sb_conv_shape *s);
/* The largest scratch buffer, in floats, that a family allocates for a
 * completed shape: the column matrix of an image (c*r*s*p*q, det and loose)
 * or det's partial weight gradients (k*c*r*s per SB_CONV_GROUP images). */
int64_t sb_conv_scratch_floats(const sb_conv_shape *s);

/* ---- the kernel list ----------------------------------------------------
 * kernels.def names every op once, with its metadata; everything keyed by
 * op below is generated from it (sb_op_list.h). */

/* Each flag column holds one of its two words: a misspelt one stops the
 * build here, naming it. */
#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, refd, signature) \
    SB_CHECK_FLAGS(name, bound, loose, hashed, refd)
#include "kernels.def"
#undef SB_OP

typedef enum sb_op {
#define SB_OP(name, ...) SB_OP_##name,
#include "kernels.def"
#undef SB_OP
    SB_OP_COUNT
} sb_op;

#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, refd, signature) \
    typedef void sb_##name##_fn signature;
#include "kernels.def"
#undef SB_OP

typedef struct sb_kernel_table {
#define SB_OP(name, ...) sb_##name##_fn *name;
#include "kernels.def"
#undef SB_OP
} sb_kernel_table;

/* The readable definitions, one per op. */
#define SB_OP(name, ...) sb_##name##_fn sb_##name##_ref;
#include "kernels.def"
#undef SB_OP

typedef enum sb_family {
    SB_FAMILY_REF,      /* serial, obvious loop order */
    SB_FAMILY_DET,      /* parallel, same bits for every thread count */
    SB_FAMILY_LOOSE,    /* parallel as usually written, bits follow the thread count */
    SB_FAMILY_COUNT
} sb_family;

const char *sb_op_name(sb_op op);
sb_op sb_op_from_name(const char *name);        /* SB_OP_COUNT if unknown */
const char *sb_op_area(sb_op op);               /* "conv": its kernels are in kernels/conv/ */
const char *sb_family_name(sb_family f);
sb_family sb_family_from_name(const char *name); /* SB_FAMILY_COUNT if unknown */

/* The table of a family: ref first, then each op's det kernel, and for loose
 * each op's loose kernel where it has one (kernels.def), det's elsewhere. */
const sb_kernel_table *sb_kernels(sb_family f);

/* What an op reads besides its tensors: one of the parameter groups of
 * sb_op_call (params.def). It decides the tail of the op's signature, its
 * keys in a case file and, with the roles of its tensors, their shapes. */
typedef enum sb_op_params {
#define SB_PARAMS(name, ...) SB_PARAMS_##name,
#include "params.def"
#undef SB_PARAMS
    SB_PARAMS_COUNT
} sb_op_params;

sb_op_params sb_op_params_of(sb_op op);
/* The optimiser whose update an op's params belong to, or SB_OPTIM_COUNT. */
sb_optimizer sb_params_optimizer(sb_op_params p);
/* The update op of an optimiser (SB_OP_COUNT for SB_OPTIM_COUNT). */
sb_op sb_optimizer_update_op(sb_optimizer kind);

/* What a tensor of an op is: its shape among the tensors of the op's params
 * (a data gradient has the role of the data), its dtype, and for optimiser
 * state, that the op updates it in place. */
typedef enum sb_role {
    SB_ROLE_x,          /* conv, dense, pool, window, norm, reduce: the data (images, rows);
                         * attn: qkv [b][t][3c] */
    SB_ROLE_w,          /* conv, dense: filters, weights; embed: token table
                         * [vocab][c]; norm: gamma [c]; nll: class weights [k] */
    SB_ROLE_b,          /* conv, dense: bias; embed: position table [t][c];
                         * norm: beta [c] */
    SB_ROLE_y,          /* conv, dense, pool, window, embed, norm, attn, reduce: the output */
    SB_ROLE_z,          /* classifier: logits or probabilities [n][k]; nll: log-probabilities
                         * [n][k][d] */
    SB_ROLE_labels,     /* classifier: int32 [n] in [0, k); embed: the tokens,
                         * int32 [n] in [0, vocab); nll: int32 [n][d] in [0, k) */
    SB_ROLE_scalar,     /* classifier: one value over the batch; count: over the vector */
    SB_ROLE_v,          /* a vector of n */
    SB_ROLE_param,      /* optimiser: the parameter, updated in place (either sign) */
    SB_ROLE_moment,     /* optimiser: a velocity or first moment, in place (either sign) */
    SB_ROLE_square,     /* optimiser: a mean of squares, in place (never negative) */
    SB_ROLE_index,      /* window: int32 [n][c][p][q], an output's argmax as an index
                         * into the whole of x (never negative; not per sample: a
                         * sample's indices count the samples before it) */
    SB_ROLE_row,        /* one value per row: norm: [n] (a row's mean, its rstd);
                         * nll: [n][d] (a position's loss) */
    SB_ROLE_COUNT
} sb_role;

const char *sb_role_name(sb_role r);
sb_dtype sb_role_dtype(sb_role r);      /* SB_DTYPE_I32 for labels, F32 for the rest */
bool sb_role_in_place(sb_role r);       /* optimiser state: read and written by the op */
bool sb_role_nonnegative(sb_role r);    /* holds values >= 0 only */

/* The tensors of an op by role, in signature order. */
typedef struct sb_op_roles {
    int n_in, n_out;
    const sb_role *in, *out;
} sb_op_roles;

sb_op_roles sb_op_roles_of(sb_op op);
/* true for an op whose outputs are state it updates in place (the
 * optimiser updates): they are inputs too. */
bool sb_op_updates_in_place(sb_op op);

/* Batches. In the conv, dense, pool, classifier and norm ops the roles x,
 * y, z and labels lead with the batch dimension n, one row per sample, and
 * in the attn ops x and y lead with the sequences b, one sequence per
 * sample: a sample's slice of them is one row (one sequence). */
bool sb_role_per_sample(sb_op op, sb_role r);
/* The op's output is per sample (a row per sample, a function of that
 * sample alone; not a batch-level reduction such as a loss or a weight
 * gradient, nor the loss gradient, which carries 1/n). */
bool sb_op_per_sample(sb_op op);

/* ---- reordering bounds ------------------------------------------------------
 * For each op with a reduction (BOUND in kernels.def), a function with the
 * op's own signature whose first argument receives, per output element, the
 * largest difference two summation orders of that element's reductions can
 * produce (about 2*gamma(n)*sum|terms|, gamma(n) = n*u/(1-n*u), u = 2^-24),
 * evaluated in double and rounded up. Ops without a reduction have bound 0. */
#define SB_OP(name, area, params, outputs, inputs, bound, ...) \
    SB_IF_##bound(sb_##name##_fn sb_##name##_bound;)
#include "kernels.def"
#undef SB_OP

/* gamma(n) = n*u / (1 - n*u) with u = 2^-24, in double (bound.c). */
double sb_gamma(double n);

/* The reordering bound of one sum of n terms t_i (products rounded or
 * fused, partial sums rounded, any bracketing): any order gives fl(s) with
 *     |fl(s) - s| <= gamma(n) * sum |t_i|      (Higham, ASNA 2nd ed., 3.1)
 * so two orders differ by at most 2 gamma(n) sum |t_i|. abs_sum is that sum
 * of magnitudes, taken in double from exact double products of the float
 * inputs (its own relative error, about n 2^-53, is far below the slack of
 * the bound). Gradual underflow is not covered: the bound assumes terms in
 * the normal range. Returns 2 gamma(nterms) abs_sum rounded up to float, 0
 * when abs_sum is 0. */
float sb_dot_bound(double nterms, double abs_sum);

/* ---- the generic op call ----------------------------------------------------
 * One op with its parameters and tensors, so the harness can describe, run and
 * bound any op named in a case file; the model uses it for every op too. */
#define SB_OP_MAX_IN 4
#define SB_OP_MAX_OUT 3

typedef struct sb_op_call {
    sb_op op;
    /* parameters: only those of `op` are read */
    sb_conv_shape conv;
    sb_dense_shape dense;
    sb_pool_shape pool;
    sb_class_shape cls;
    sb_dropout_params dropout;
    sb_optim_params optim;
    int64_t t;          /* adam, adamw: 1-based iteration */
    size_t n;           /* element count of elementwise ops and optimiser updates */
    sb_embed_shape embed;
    sb_norm_shape norm;
    sb_attn_shape attn;
    sb_rope_shape rope;
    sb_nll_shape nll;
    sb_reduce_shape reduce;
    sb_window_shape window;
    /* tensors, in the order of the op's signature; optimiser state updated in
     * place (w, accumulators) is an output */
    int n_in, n_out;
    sb_tensor in[SB_OP_MAX_IN];
    sb_tensor out[SB_OP_MAX_OUT];
} sb_op_call;

/* From op and parameters, fill n_in, n_out and dtype/ndim/dim of every
 * tensor (data untouched). SB_ERR_SHAPE for absurd parameters. */
sb_status sb_op_call_describe(sb_op_call *c);
/* How many values a labels tensor of c's op may hold: its values are in
 * [0, this) (classes of the classifier ops, the vocabulary of the
 * embedding ops); 0 for ops without labels. */
int sb_op_call_label_range(const sb_op_call *c);
void sb_op_call_run(const sb_kernel_table *k, const sb_op_call *c);
/* Sets the batch n of every params group that has one (sb_op_per_sample's
 * groups); call sb_op_call_describe again after. */
void sb_op_call_set_batch(sb_op_call *c, int n);
/* sb_bound_fn over an sb_op_call (ctx); zeros for ops without a reduction. */
sb_bound_fn sb_op_call_bound;
/* true when the op has a reduction (a nonzero bound is possible) */
bool sb_op_has_reduction(sb_op op);
/* true when `name` is an op of the list without a reduction: exact, any
 * difference in its output is a bug */
bool sb_op_name_exact(const char *name);

/* ---- hashing leaves while they are hot ----------------------------------------
 * The elementwise ops and optimiser updates of the det and loose tables have
 * a hashed mode: the op runs in leaf-sized blocks (every tensor of the call
 * has c->n floats, so leaf k of each covers the same elements), threads take
 * whole blocks, and right after computing a block a thread hashes that block
 * of every tensor the request asks for, while it is still in its cache. An
 * elementwise op has no reduction, so the blocks give the bits of the plain
 * kernel at every thread count. */
typedef struct sb_leaf_request {
    sb_leaf_hash_fn *hash;
    /* per tensor of the call: NULL, or room for its leaf digests
     * (ceil(n * 4 / SB_HASH_LEAF_BYTES) of them) */
    sb_leaf_digest *out[SB_OP_MAX_OUT];
    sb_leaf_digest *in[SB_OP_MAX_IN];
} sb_leaf_request;

/* Runs c like sb_op_call_run. When k's kernel for c->op is the one the library
 * installs for det and loose, runs its hashed mode, fills the digests r asks
 * for and returns true. Any other kernel (ref, a mutant, a replacement put in
 * a copied table) runs as it is, hashes nothing and gives false, and the
 * harness hashes its tensors itself: only kernels of this library, paired here
 * with their hashed mode and tested against the harness's hashing, ever
 * supply digests, so no kernel under test can hide behind digests of its own. */
bool sb_op_call_run_hashed(const sb_kernel_table *k, const sb_op_call *c,
                           const sb_leaf_request *r);

/* ---- mutants ----------------------------------------------------------------
 * Det kernels with one deliberate fault each (kernels/mutants/mutants.def):
 * determinism faults, which prove that the harness catches, localises and
 * classifies a thread-count dependence, and numerics faults, which are as
 * deterministic as det and which `samebits numerics` must flag. */
typedef enum sb_mutant_kind {
    SB_MUTANT_DETERMINISM,
    SB_MUTANT_NUMERICS,
} sb_mutant_kind;

int sb_mutant_count(void);
int sb_mutant_find(const char *name);       /* index, or -1 if unknown */
const char *sb_mutant_name(int i);          /* i in [0, sb_mutant_count()) */
sb_mutant_kind sb_mutant_kind_of(int i);
sb_op sb_mutant_op(int i);                  /* the op the mutant replaces */
const char *sb_mutant_fault(int i);         /* one line */
/* The rank mutants (SB_RANK_MUTANT): faults of the det data-parallel step,
 * an sb_rank_fault of sb_model.h each. */
int sb_rank_mutant_find(const char *name);  /* index, or -1 if unknown */
const char *sb_rank_mutant_fault(int i);    /* one line */
/* The det table with the mutant's one op replaced; NULL if unknown. */
const sb_kernel_table *sb_kernels_mutant(const char *name);
/* Puts mutant i's kernel in place of t's entry for its op (i in
 * [0, sb_mutant_count())): to run it on top of another table. */
void sb_mutant_install(int i, sb_kernel_table *t);

#endif
