/* What the kernel list says of each op besides its kernels: its params
 * group, the roles of its tensors, whether it reduces; what each params
 * group and each role is. Tables generated from kernels.def and params.def. */
#include "op_kernels.h"

typedef struct op_info {
    sb_op_params params;
    bool reduces;
    int n_out, n_in;
    sb_role out[SB_OP_MAX_OUT], in[SB_OP_MAX_IN];
} op_info;

static const op_info ops[SB_OP_COUNT] = {
#define SB_OP(name, area, params, outputs, inputs, bound, ...)                             \
    [SB_OP_##name] = {SB_PARAMS_##params, SB_CHOOSE_##bound(true, false),                  \
                      SB_COUNT_##outputs, SB_COUNT_##inputs, SB_ROLES_##outputs,           \
                      SB_ROLES_##inputs},
#include "kernels.def"
#undef SB_OP
};

static const op_info *info_of(sb_op op)
{
    SB_ASSERT((unsigned)op < SB_OP_COUNT);
    return &ops[op];
}

sb_op_params sb_op_params_of(sb_op op)
{
    return info_of(op)->params;
}

bool sb_op_has_reduction(sb_op op)
{
    return (unsigned)op < SB_OP_COUNT && ops[op].reduces;
}

bool sb_op_name_exact(const char *name)
{
    sb_op k = sb_op_from_name(name);
    return k != SB_OP_COUNT && !sb_op_has_reduction(k);
}

sb_op_roles sb_op_roles_of(sb_op op)
{
    const op_info *i = info_of(op);
    return (sb_op_roles){i->n_in, i->n_out, i->in, i->out};
}

bool sb_op_updates_in_place(sb_op op)
{
    return sb_role_in_place(info_of(op)->out[0]);
}

/* What params.def says of each params group. */
typedef struct params_info {
    sb_optimizer optimizer;
    bool batched;
} params_info;

static const params_info params[SB_PARAMS_COUNT] = {
#define SB_PARAMS(name, shapes, batch, optimizer, ...)                                     \
    [SB_PARAMS_##name] = {SB_OPTIM_##optimizer, SB_CHOOSE_##batch(true, false)},
#include "params.def"
#undef SB_PARAMS
};

static const params_info *params_info_of(sb_op_params p)
{
    SB_ASSERT((unsigned)p < SB_PARAMS_COUNT);
    return &params[p];
}

sb_optimizer sb_params_optimizer(sb_op_params p)
{
    return (unsigned)p < SB_PARAMS_COUNT ? params[p].optimizer : SB_OPTIM_COUNT;
}

sb_op sb_optimizer_update_op(sb_optimizer kind)
{
    for (int op = 0; op < SB_OP_COUNT; op++)
        if (kind != SB_OPTIM_COUNT && sb_params_optimizer(ops[op].params) == kind)
            return (sb_op)op;
    return SB_OP_COUNT;
}

typedef struct role_info {
    const char *name;
    sb_dtype dtype;
    bool in_place, nonnegative;
} role_info;

static const role_info roles[SB_ROLE_COUNT] = {
    [SB_ROLE_x] = {"x", SB_DTYPE_F32, false, false},
    [SB_ROLE_w] = {"w", SB_DTYPE_F32, false, false},
    [SB_ROLE_b] = {"b", SB_DTYPE_F32, false, false},
    [SB_ROLE_y] = {"y", SB_DTYPE_F32, false, false},
    [SB_ROLE_z] = {"z", SB_DTYPE_F32, false, false},
    [SB_ROLE_labels] = {"labels", SB_DTYPE_I32, false, true},
    [SB_ROLE_scalar] = {"scalar", SB_DTYPE_F32, false, false},
    [SB_ROLE_v] = {"v", SB_DTYPE_F32, false, false},
    [SB_ROLE_param] = {"param", SB_DTYPE_F32, true, false},
    [SB_ROLE_moment] = {"moment", SB_DTYPE_F32, true, false},
    [SB_ROLE_square] = {"square", SB_DTYPE_F32, true, true},
    [SB_ROLE_index] = {"index", SB_DTYPE_I32, false, true},
    [SB_ROLE_row] = {"row", SB_DTYPE_F32, false, false},
};

static const role_info *role_of(sb_role r)
{
    SB_ASSERT((unsigned)r < SB_ROLE_COUNT);
    return &roles[r];
}

const char *sb_role_name(sb_role r) { return role_of(r)->name; }
sb_dtype sb_role_dtype(sb_role r) { return role_of(r)->dtype; }
bool sb_role_in_place(sb_role r) { return role_of(r)->in_place; }
bool sb_role_nonnegative(sb_role r) { return role_of(r)->nonnegative; }

bool sb_role_per_sample(sb_op op, sb_role r)
{
    if (!params_info_of(sb_op_params_of(op))->batched)
        return false;
    return r == SB_ROLE_x || r == SB_ROLE_y || r == SB_ROLE_z || r == SB_ROLE_labels ||
           r == SB_ROLE_row;
}

bool sb_op_per_sample(sb_op op)
{
    /* the gradient of the batch's mean loss is a row per sample scaled by
     * 1/n (the NLL's: 1 / the batch's weight sum): its value is the batch's
     * by definition */
    return op != SB_OP_softmax_xent_bwd && op != SB_OP_nll_loss_mean_bwd &&
           sb_role_per_sample(op, info_of(op)->out[0]);
}

void sb_op_call_set_batch(sb_op_call *c, int n)
{
    c->conv.n = c->dense.n = c->pool.n = c->cls.n = c->norm.n = c->nll.n = c->window.n = n;
    c->attn.b = n;
}
