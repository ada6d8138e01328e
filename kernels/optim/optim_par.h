/* The parallel update loops, installed for det and loose by
 * sb_optim_register. An update has no reduction: each element is one
 * writer running the same arithmetic as ref, so every family and every
 * thread count gives the same bits. */
#ifndef SB_OPTIM_PAR_H
#define SB_OPTIM_PAR_H

#include "sb_kernels.h"

/* Below this many elements a parallel region costs more than it saves. */
#define OPTIM_PARALLEL_MIN 16384

sb_sgd_update_fn sb_sgd_update_par;
sb_rmsprop_update_fn sb_rmsprop_update_par;
sb_adam_update_fn sb_adam_update_par;
sb_adadelta_update_fn sb_adadelta_update_par;

#endif
