/* Single draws: one Philox block per (seed, stream, step, index). */
#include <math.h>

#include "rng_block.h"

void sb_rng_block(uint32_t out[4], uint64_t seed, uint32_t stream, uint32_t step,
                  uint64_t index)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t counter[4] = {(uint32_t)index, (uint32_t)(index >> 32), step, stream};
    sb_philox4x32_10(out, counter, key);
}

/* The top 24 bits -> [0, 1): k * 2^-24, exactly representable in float. */
static float bits_to_unit(uint32_t bits)
{
    return (float)(bits >> 8) * 0x1p-24f;
}

uint32_t sb_rng_u32(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index)
{
    uint32_t x[4];
    sb_rng_block(x, seed, stream, step, index);
    return x[0];
}

float sb_rng_uniform(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index)
{
    return bits_to_unit(sb_rng_u32(seed, stream, step, index));
}

float sb_rng_normal(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index)
{
    uint32_t x[4];
    sb_rng_block(x, seed, stream, step, index);
    /* 1 - uniform lies in [2^-24, 1], so the log never sees 0 and the radius
     * is at most sqrt(48 ln 2) ~ 5.77. Evaluated in double, rounded once. */
    double u1 = 1.0 - (double)bits_to_unit(x[0]);
    double u2 = (double)bits_to_unit(x[1]);
    const double two_pi = 6.283185307179586476925286766559;
    double radius = sqrt(-2.0 * log(u1));
    return (float)(radius * cos(two_pi * u2));
}
