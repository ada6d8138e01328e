/* Single draws. One Philox block serves 4 consecutive uniforms (or 2
 * normals); each thread remembers the last block it computed, so a loop over
 * consecutive elements pays one block per 4 of them while every value stays a
 * pure function of (seed, stream, step, index). Long runs of uniforms are
 * cheaper through sb_rng_uniform_run (run.c). */
#include <math.h>
#include <stdbool.h>

#include "rng_block.h"

void sb_rng_block(uint32_t out[4], uint64_t seed, uint32_t stream, uint32_t step,
                  uint64_t index)
{
    uint32_t key[2], counter[4];
    sb_rng_key(key, seed);
    sb_rng_counter(counter, stream, step, index);
    sb_philox4x32_10(out, counter, key);
}

/* The last block this thread drew: a memo, never a stream state. */
typedef struct block_memo {
    bool valid;
    uint64_t seed, block;
    uint32_t stream, step;
    uint32_t word[4];
} block_memo;

static _Thread_local block_memo memo;

static const uint32_t *block_at(uint64_t seed, uint32_t stream, uint32_t step, uint64_t block)
{
    if (!(memo.valid && memo.block == block && memo.seed == seed && memo.stream == stream &&
          memo.step == step)) {
        sb_rng_block(memo.word, seed, stream, step, block);
        memo.valid = true;
        memo.seed = seed, memo.block = block, memo.stream = stream, memo.step = step;
    }
    return memo.word;
}

uint32_t sb_rng_u32(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index)
{
    return block_at(seed, stream, step, index >> 2)[index & 3];
}

float sb_rng_uniform(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index)
{
    return sb_rng_unit(sb_rng_u32(seed, stream, step, index));
}

float sb_rng_normal(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index)
{
    const uint32_t *x = block_at(seed, stream, step, index >> 1) + 2 * (index & 1);
    /* 1 - uniform lies in [2^-24, 1], so the log never sees 0 and the radius
     * is at most sqrt(48 ln 2) ~ 5.77. Evaluated in double, rounded once. */
    double u1 = 1.0 - (double)sb_rng_unit(x[0]);
    double u2 = (double)sb_rng_unit(x[1]);
    const double two_pi = 6.283185307179586476925286766559;
    double radius = sqrt(-2.0 * log(u1));
    return (float)(radius * cos(two_pi * u2));
}
