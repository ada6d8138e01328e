/* The resume mutants of mutants.def: a restore of a checkpoint that gets
 * one of the counters wrong, as real checkpoint code does. Each changes
 * only that counter; the tensors are restored as saved. */
#include "mutants.h"

/* The optimiser's step counter lives outside the state dict that is saved
 * (a scheduler's or a hand-written loop's `t`): the restored optimiser
 * counts from zero, so its first update after the resume uses t = 1. */
void sb_resume_mutant_step_counter_unsaved(sb_train_counters *c)
{
    c->optim_t = 0;
}

/* The RNG is re-seeded per epoch (a generator seeded with seed + epoch at
 * the epoch's start) and a resume re-seeds it instead of restoring its
 * position: the masks restart at the epoch's first step. */
void sb_resume_mutant_rng_epoch_restart(sb_train_counters *c)
{
    c->rng_step = c->epoch_first;
}

/* The data loader is built anew on resume and its sampler draws the next
 * permutation of its generator instead of the one the epoch was using. */
void sb_resume_mutant_order_reshuffled(sb_train_counters *c)
{
    c->order_key++;
}
