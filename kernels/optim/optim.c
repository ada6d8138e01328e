/* Keras 2.1.6 optimiser defaults, names, and the det/loose table entries.
 *
 * Learning-rate decay (Keras: lr / (1 + decay * iterations)) is not applied
 * by the update ops, which have no iteration count except Adam's t: the
 * caller that counts iterations passes the decayed rate in o->lr. */
#include "optim_par.h"

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
    case SB_OPTIM_COUNT: break;
    }
    return "?";
}

void sb_optim_register(sb_kernel_table *t, sb_family f)
{
    switch (f) {
    case SB_FAMILY_REF:
        return;
    case SB_FAMILY_DET:
    case SB_FAMILY_LOOSE:
        t->sgd_update = sb_sgd_update_par;
        t->rmsprop_update = sb_rmsprop_update_par;
        t->adam_update = sb_adam_update_par;
        t->adadelta_update = sb_adadelta_update_par;
        return;
    case SB_FAMILY_COUNT:
        break;
    }
    SB_ASSERT(!"SB_FAMILY_COUNT is not a family");
}
