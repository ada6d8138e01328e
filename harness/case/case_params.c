/* Case files: the parameter tables of [kernel] (by params group of
 * kernels.def), of [train] (by model) and of the optimisers, and setting a
 * parameter from its entry. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "case/case_loader.h"
#include "support/support.h"

#define CALL(field) offsetof(sb_op_call, field)
#define IMAX ((double)INT_MAX)
/* 2^40 elements: beyond any memory here; sb_op_call_describe draws the real line. */
#define NMAX 1099511627776.0

static const case_param conv_params[] = {
    {"n", P_INT, CALL(conv.n), 1, IMAX, false, true},
    {"c", P_INT, CALL(conv.c), 1, IMAX, false, true},
    {"h", P_INT, CALL(conv.h), 1, IMAX, false, true},
    {"w", P_INT, CALL(conv.w), 1, IMAX, false, true},
    {"k", P_INT, CALL(conv.k), 1, IMAX, false, true},
    {"r", P_INT, CALL(conv.r), 1, IMAX, false, true},
    {"s", P_INT, CALL(conv.s), 1, IMAX, false, true},
    {"stride", P_INT, CALL(conv.stride), 1, IMAX, false, false},
    {"pad", P_INT, CALL(conv.pad), 0, IMAX, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param dense_params[] = {
    {"n", P_INT, CALL(dense.n), 1, IMAX, false, true},
    {"in", P_INT, CALL(dense.in), 1, IMAX, false, true},
    {"out", P_INT, CALL(dense.out), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param pool_params[] = {
    {"n", P_INT, CALL(pool.n), 1, IMAX, false, true},
    {"c", P_INT, CALL(pool.c), 1, IMAX, false, true},
    {"h", P_INT, CALL(pool.h), 1, IMAX, false, true},
    {"w", P_INT, CALL(pool.w), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param class_params[] = {
    {"n", P_INT, CALL(cls.n), 1, IMAX, false, true},
    {"k", P_INT, CALL(cls.k), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* d: none (0, not in the digest) unless given */
static const case_param class_position_params[] = {
    {"n", P_INT, CALL(cls.n), 1, IMAX, false, true},
    {"k", P_INT, CALL(cls.k), 1, IMAX, false, true},
    {"d", P_INT, CALL(cls.d), 1, IMAX, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param embed_params[] = {
    {"n", P_INT, CALL(embed.n), 1, IMAX, false, true},
    {"t", P_INT, CALL(embed.t), 1, IMAX, false, true},
    {"vocab", P_INT, CALL(embed.vocab), 1, IMAX, false, true},
    {"c", P_INT, CALL(embed.c), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* eps: 1e-5 unless given (load_kernel_section), > 0 (sb_op_call_describe) */
static const case_param norm_params[] = {
    {"n", P_INT, CALL(norm.n), 1, IMAX, false, true},
    {"c", P_INT, CALL(norm.c), 1, IMAX, false, true},
    {"eps", P_REAL, CALL(norm.eps), 0, 1, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* ignore_index: -100 unless given (load_kernel_section) */
static const case_param nll_params[] = {
    {"n", P_INT, CALL(nll.n), 1, IMAX, false, true},
    {"k", P_INT, CALL(nll.k), 1, IMAX, false, true},
    {"d", P_INT, CALL(nll.d), 1, IMAX, false, false},
    {"ignore_index", P_INT, CALL(nll.ignore_index), -IMAX, IMAX, false, false},
    {"weighted", P_BOOL, CALL(nll.weighted), 0, 0, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* sh, sw: 1 unless given (load_kernel_section) */
static const case_param window_params[] = {
    {"n", P_INT, CALL(window.n), 1, IMAX, false, true},
    {"c", P_INT, CALL(window.c), 1, IMAX, false, true},
    {"h", P_INT, CALL(window.h), 1, IMAX, false, true},
    {"w", P_INT, CALL(window.w), 1, IMAX, false, true},
    {"kh", P_INT, CALL(window.kh), 1, IMAX, false, true},
    {"kw", P_INT, CALL(window.kw), 1, IMAX, false, true},
    {"sh", P_INT, CALL(window.sh), 1, IMAX, false, false},
    {"sw", P_INT, CALL(window.sw), 1, IMAX, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param reduce_params[] = {
    {"outer", P_INT, CALL(reduce.outer), 1, IMAX, false, true},
    {"r", P_INT, CALL(reduce.r), 1, IMAX, false, true},
    {"inner", P_INT, CALL(reduce.inner), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* base: 10000 unless given (load_kernel_section), > 1 (sb_op_call_describe) */
static const case_param rope_params[] = {
    {"n", P_INT, CALL(rope.n), 1, IMAX, false, true},
    {"t", P_INT, CALL(rope.t), 1, IMAX, false, true},
    {"h", P_INT, CALL(rope.h), 1, IMAX, false, true},
    {"d", P_INT, CALL(rope.d), 1, IMAX, false, true},
    {"base", P_REAL, CALL(rope.base), 1, 1e9, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param count_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param dropout_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {"rate", P_REAL, CALL(dropout.rate), 0, 1, true, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param adam_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {"t", P_I64, CALL(t), 1, 9.2e18, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param attn_params[] = {
    {"b", P_INT, CALL(attn.b), 1, IMAX, false, true},
    {"t", P_INT, CALL(attn.t), 1, IMAX, false, true},
    {"h", P_INT, CALL(attn.h), 1, IMAX, false, true},
    {"d", P_INT, CALL(attn.d), 1, IMAX, false, true},
    /* h unless given; dividing h (sb_op_call_describe) */
    {"kv_heads", P_INT, CALL(attn.kv_heads), 1, IMAX, false, false},
    {"noncausal", P_BOOL, CALL(attn.noncausal), 0, 0, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* grad_scale is the model's clipping factor in a training run, so a kernel
 * key only (not an optimiser key of [train]) */
static const case_param adamw_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {"t", P_I64, CALL(t), 1, 9.2e18, false, false},
    {"grad_scale", P_REAL, CALL(optim.grad_scale), 0, 1, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};

/* Optimiser hyper-parameters, offsets into sb_optim_params; `uses` says which
 * optimisers read each one (a bit per sb_optimizer). */
#define OPT(field) offsetof(sb_optim_params, field)
#define USES_KERAS (SB_CASE_USES(SB_OPTIM_SGD) | SB_CASE_USES(SB_OPTIM_RMSPROP) | SB_CASE_USES(SB_OPTIM_ADAM) | \
                    SB_CASE_USES(SB_OPTIM_ADADELTA))
const case_optim_param sb_case_optim_params[] = {
    {{"lr", P_REAL, OPT(lr), 0, HUGE_VAL, false, false}, USES_KERAS | SB_CASE_USES(SB_OPTIM_ADAMW)},
    {{"momentum", P_REAL, OPT(momentum), 0, HUGE_VAL, false, false}, SB_CASE_USES(SB_OPTIM_SGD)},
    {{"nesterov", P_BOOL, OPT(nesterov), 0, 0, false, false}, SB_CASE_USES(SB_OPTIM_SGD)},
    {{"rho", P_REAL, OPT(rho), 0, HUGE_VAL, false, false},
     SB_CASE_USES(SB_OPTIM_RMSPROP) | SB_CASE_USES(SB_OPTIM_ADADELTA)},
    {{"beta1", P_REAL, OPT(beta1), 0, 1, true, false},
     SB_CASE_USES(SB_OPTIM_ADAM) | SB_CASE_USES(SB_OPTIM_ADAMW)},
    {{"beta2", P_REAL, OPT(beta2), 0, 1, true, false},
     SB_CASE_USES(SB_OPTIM_ADAM) | SB_CASE_USES(SB_OPTIM_ADAMW)},
    {{"epsilon", P_REAL, OPT(epsilon), 0, HUGE_VAL, false, false},
     SB_CASE_USES(SB_OPTIM_RMSPROP) | SB_CASE_USES(SB_OPTIM_ADAM) | SB_CASE_USES(SB_OPTIM_ADADELTA) |
     SB_CASE_USES(SB_OPTIM_ADAMW)},
    {{"decay", P_REAL, OPT(decay), 0, HUGE_VAL, false, false}, USES_KERAS},
    {{"weight_decay", P_REAL, OPT(weight_decay), 0, HUGE_VAL, false, false},
     SB_CASE_USES(SB_OPTIM_ADAMW)},
};
const size_t sb_case_n_optim_params =
    sizeof sb_case_optim_params / sizeof sb_case_optim_params[0];

const case_param *sb_case_find_param(const case_param *list, const char *key)
{
    for (; list && list->key; list++)
        if (strcmp(list->key, key) == 0)
            return list;
    return NULL;
}

const case_param *sb_case_find_optim_param(sb_optimizer kind, const char *key)
{
    for (size_t i = 0; i < sb_case_n_optim_params; i++)
        if ((sb_case_optim_params[i].uses & SB_CASE_USES(kind)) && strcmp(sb_case_optim_params[i].p.key, key) == 0)
            return &sb_case_optim_params[i].p;
    return NULL;
}

sb_status sb_case_set_param(case_loader *ld, void *base, const case_param *p, const case_entry *e)
{
    char *at = (char *)base + p->offset;
    int64_t v = 0;
    sb_status st = SB_OK;
    switch (p->type) {
    case P_INT:
    case P_I64:
    case P_SIZE:
        st = sb_case_get_i64(ld, e, (int64_t)p->lo, (int64_t)p->hi, &v);
        if (st != SB_OK)
            return st;
        if (p->type == P_INT) {
            int x = (int)v;
            memcpy(at, &x, sizeof x);
        } else if (p->type == P_I64) {
            memcpy(at, &v, sizeof v);
        } else {
            size_t x = (size_t)v;
            memcpy(at, &x, sizeof x);
        }
        return SB_OK;
    case P_REAL: {
        float x;
        st = sb_case_get_real(ld, e, p->lo, p->hi, p->hi_open, &x);
        if (st == SB_OK)
            memcpy(at, &x, sizeof x);
        return st;
    }
    case P_BOOL: {
        bool x = false;
        st = sb_case_get_bool(ld, e, &x);
        if (st == SB_OK)
            memcpy(at, &x, sizeof x);
        return st;
    }
    }
    return st;
}

/* The [kernel] keys of an op's params group (kernels.def), in the order the
 * digest lists them. */
const case_param *sb_case_op_params(sb_op op)
{
    switch (sb_op_params_of(op)) {
    case SB_PARAMS_conv: return conv_params;
    case SB_PARAMS_dense: return dense_params;
    case SB_PARAMS_pool: return pool_params;
    case SB_PARAMS_cls: return class_params;
    case SB_PARAMS_clsd: return class_position_params;
    case SB_PARAMS_dropout: return dropout_params;
    case SB_PARAMS_adam: return adam_params;
    case SB_PARAMS_embed: return embed_params;
    case SB_PARAMS_norm: return norm_params;
    case SB_PARAMS_attn: return attn_params;
    case SB_PARAMS_rope: return rope_params;
    case SB_PARAMS_adamw: return adamw_params;
    case SB_PARAMS_nll: return nll_params;
    case SB_PARAMS_reduce: return reduce_params;
    case SB_PARAMS_window: return window_params;
    case SB_PARAMS_count:
    case SB_PARAMS_sgd:
    case SB_PARAMS_rmsprop:
    case SB_PARAMS_adadelta:
        return count_params;
    case SB_PARAMS_COUNT:
        break;
    }
    SB_ASSERT(!"SB_PARAMS_COUNT is not a params group");
    return NULL;
}

/* The optimiser an update op implements, or SB_OPTIM_COUNT. */
sb_optimizer sb_case_op_optimizer(sb_op op)
{
    return sb_params_optimizer(sb_op_params_of(op));
}

/* "n c h w" plus the optimiser's keys, for messages. */
void sb_case_describe_keys(char *out, size_t size, const case_param *list, sb_optimizer kind)
{
    size_t used = 0;
    out[0] = '\0';
    for (; list && list->key && used < size; list++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", used ? " " : "", list->key);
    for (size_t i = 0; kind != SB_OPTIM_COUNT && i < sb_case_n_optim_params && used < size; i++)
        if (sb_case_optim_params[i].uses & SB_CASE_USES(kind))
            used += (size_t)snprintf(out + used, size - used, " %s", sb_case_optim_params[i].p.key);
}

/* The [train] keys of each model besides model, dataset, train, test and
 * optimizer, offsets into sb_train_config, in the order the digest lists them
 * (the CNN's order is the digest's since its first version). */
#define TRAIN(field) offsetof(sb_train_config, field)
static const case_param cnn_train_params[] = {
    {"batch", P_INT, TRAIN(batch), 1, IMAX, false, false},
    {"epochs", P_INT, TRAIN(epochs), 1, IMAX, false, false},
    {"dropout1", P_REAL, TRAIN(dropout1), 0, 1, true, false},
    {"dropout2", P_REAL, TRAIN(dropout2), 0, 1, true, false},
    {"max_steps", P_I64, TRAIN(max_steps), 0, 9.2e18, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const case_param gpt_train_params[] = {
    {"batch", P_INT, TRAIN(batch), 1, 4096, false, false},
    {"steps", P_I64, TRAIN(gpt.steps), 1, 1e9, false, false},
    {"layers", P_INT, TRAIN(gpt.layers), 1, SB_GPT_MAX_LAYERS, false, false},
    {"heads", P_INT, TRAIN(gpt.heads), 1, 64, false, false},
    {"width", P_INT, TRAIN(gpt.width), 1, 4096, false, false},
    {"context", P_INT, TRAIN(gpt.context), 1, 4096, false, false},
    {"eval_every", P_INT, TRAIN(gpt.eval_every), 1, 1e9, false, false},
    {"eval_windows", P_INT, TRAIN(gpt.eval_windows), 1, 1e6, false, false},
    {"clip", P_REAL, TRAIN(gpt.clip), 0, HUGE_VAL, false, false},
    {"max_steps", P_I64, TRAIN(max_steps), 0, 9.2e18, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};

const case_param *sb_case_train_params(const sb_model_kind *m)
{
    return strcmp(m->name, "char_gpt") == 0 ? gpt_train_params : cnn_train_params;
}
