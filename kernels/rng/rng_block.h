/* The one place the counter layout documented in sb_rng.h is written down,
 * with the Philox round and the word -> uniform map that the single draws
 * (philox.c, draw.c) and the runs (run.c) share, so the two evaluations of
 * the same function cannot drift apart. */
#ifndef SB_RNG_BLOCK_H
#define SB_RNG_BLOCK_H

#include "sb_rng.h"

#define SB_PHILOX_M0 0xD2511F53u
#define SB_PHILOX_M1 0xCD9E8D57u
#define SB_PHILOX_W0 0x9E3779B9u /* golden ratio */
#define SB_PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */
#define SB_PHILOX_ROUNDS 10

/* One round on x with round key {k0, k1}: two 32x32->64 products, written
 * as uint64 multiplies of zero-extended words so that a loop of rounds over
 * many blocks becomes vector multiplies of 32-bit lanes. */
static inline void sb_philox_round(uint32_t x[4], uint32_t k0, uint32_t k1)
{
    uint64_t p0 = (uint64_t)SB_PHILOX_M0 * x[0];
    uint64_t p1 = (uint64_t)SB_PHILOX_M1 * x[2];
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1;
    x[0] = y0;
    x[1] = (uint32_t)p1;
    x[2] = y2;
    x[3] = (uint32_t)p0;
}

/* The top 24 bits -> [0, 1): k * 2^-24, exactly representable in float.
 * k < 2^24 converts exactly as a signed int, which every x86-64 level
 * converts in vectors (an unsigned conversion needs AVX-512). */
static inline float sb_rng_unit(uint32_t bits)
{
    return (float)(int32_t)(bits >> 8) * 0x1p-24f;
}

/* key = {seed low, seed high} */
static inline void sb_rng_key(uint32_t key[2], uint64_t seed)
{
    key[0] = (uint32_t)seed;
    key[1] = (uint32_t)(seed >> 32);
}

/* The counter of block index b: {b low, b high, step, stream}. */
static inline void sb_rng_counter(uint32_t counter[4], uint32_t stream, uint32_t step,
                                  uint64_t b)
{
    counter[0] = (uint32_t)b;
    counter[1] = (uint32_t)(b >> 32);
    counter[2] = step;
    counter[3] = stream;
}

/* The four words of the Philox block of (seed, stream, step, index). */
void sb_rng_block(uint32_t out[4], uint64_t seed, uint32_t stream, uint32_t step,
                  uint64_t index);

/* sb_rng_uniform_run compiled for one instruction set. */
typedef void (*sb_rng_run_fn)(float *out, uint64_t seed, uint32_t stream, uint32_t step,
                              uint64_t index0, size_t n);

/* Every variant of sb_rng_uniform_run this CPU can run, best first (at most
 * 3), so tests can show they agree bit for bit; returns how many. */
int sb_rng_uniform_run_variants(sb_rng_run_fn out[3]);

#endif
