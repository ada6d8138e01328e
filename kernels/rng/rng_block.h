/* The one place the counter layout documented in sb_rng.h is written down. */
#ifndef SB_RNG_BLOCK_H
#define SB_RNG_BLOCK_H

#include "sb_rng.h"

/* The four words of the Philox block of (seed, stream, step, index). */
void sb_rng_block(uint32_t out[4], uint64_t seed, uint32_t stream, uint32_t step,
                  uint64_t index);

#endif
