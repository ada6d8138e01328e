/* Keras 2.1.6 optimiser defaults (PyTorch 1.13's for adamw) and names. */
#include "optim.h"

void sb_optim_defaults(sb_optim_params *o, sb_optimizer kind)
{
    SB_ASSERT((unsigned)kind < SB_OPTIM_COUNT);
    *o = (sb_optim_params){
        .kind = kind,
        .momentum = 0.0f,
        .nesterov = false,
        .rho = 0.0f,
        .beta1 = 0.0f,
        .beta2 = 0.0f,
        .epsilon = 1e-7f, /* K.epsilon() */
        .decay = 0.0f,
        .weight_decay = 0.0f,
        .grad_scale = 1.0f,
    };
    switch (kind) {
    case SB_OPTIM_SGD:
        o->lr = 0.01f;
        break;
    case SB_OPTIM_RMSPROP:
        o->lr = 0.001f;
        o->rho = 0.9f;
        break;
    case SB_OPTIM_ADAM:
        o->lr = 0.001f;
        o->beta1 = 0.9f;
        o->beta2 = 0.999f;
        break;
    case SB_OPTIM_ADADELTA:
        o->lr = 1.0f;
        o->rho = 0.95f;
        break;
    case SB_OPTIM_ADAMW:
        o->lr = 0.001f;
        o->beta1 = 0.9f;
        o->beta2 = 0.999f;
        o->epsilon = 1e-8f;
        o->weight_decay = 0.01f;
        break;
    case SB_OPTIM_COUNT:
        break;
    }
}

const char *sb_optimizer_name(sb_optimizer kind)
{
    switch (kind) {
    case SB_OPTIM_SGD: return "sgd";
    case SB_OPTIM_RMSPROP: return "rmsprop";
    case SB_OPTIM_ADAM: return "adam";
    case SB_OPTIM_ADADELTA: return "adadelta";
    case SB_OPTIM_ADAMW: return "adamw";
    case SB_OPTIM_COUNT: break;
    }
    return "?";
}

const char *sb_optimizer_state_name(sb_optimizer kind, int s)
{
    /* the state parameters of the update's signature (kernels.def), in order */
    static const char *const velocity[] = {"velocity"}, *const acc[] = {"acc"},
                             *const moments[] = {"m", "v"}, *const accs[] = {"acc", "delta_acc"};
    const char *const *names = NULL;
    int n = 0;
    switch (kind) {
    case SB_OPTIM_SGD: names = velocity, n = 1; break;
    case SB_OPTIM_RMSPROP: names = acc, n = 1; break;
    case SB_OPTIM_ADAM:
    case SB_OPTIM_ADAMW: names = moments, n = 2; break;
    case SB_OPTIM_ADADELTA: names = accs, n = 2; break;
    case SB_OPTIM_COUNT: break;
    }
    SB_ASSERT(s >= 0 && s < n && n == sb_op_roles_of(sb_optimizer_update_op(kind)).n_out - 1);
    return names[s];
}

bool sb_optimizer_counts_steps(sb_optimizer kind)
{
    return kind == SB_OPTIM_ADAM || kind == SB_OPTIM_ADAMW;
}
