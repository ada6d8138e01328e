/* Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
 *
 * Every random value is a pure function of (seed, stream, step, index): no
 * state, no per-thread streams, so any thread may draw any element and the
 * bits never depend on who drew it.
 *
 * Counter layout. key = {seed & 0xffffffff, seed >> 32}; the block of
 * block index b is counter = {b & 0xffffffff, b >> 32, step, stream}. One
 * block serves consecutive elements (a 10-round block per element would cost
 * most of a dropout mask), so element i's value depends on its own counter
 * and word alone:
 *   sb_rng_u32      block i/4, word i%4
 *   sb_rng_uniform  (that word >> 8) * 2^-24
 *   sb_rng_normal   block i/2, words 2*(i%2) and 2*(i%2)+1 (Box-Muller,
 *                   radius from 1 - uniform(first), angle from
 *                   uniform(second))
 * Initialisers have no step: glorot draws at step 0, and he_normal's r-th
 * redraw of element i is the normal at step r. sb_rng_permutation draws the
 * swap partner of position i from the block at block index i (two 64-bit values,
 * words 0|1<<32 and 2|3<<32), and after rejecting both moves to index
 * i + (attempt << 40). */
#ifndef SB_RNG_H
#define SB_RNG_H

#include <stddef.h>
#include <stdint.h>

/* One Philox4x32-10 block: out = philox(counter, key). */
void sb_philox4x32_10(uint32_t out[4], const uint32_t counter[4], const uint32_t key[2]);

/* Streams keep the draws of different purposes apart. A layer's stream is
 * its base plus the layer index. */
enum {
    SB_STREAM_INIT = 0x100,     /* weight initialisers: + layer */
    SB_STREAM_DROPOUT = 0x200,  /* dropout masks: + layer */
    SB_STREAM_SHUFFLE = 0x300,  /* epoch permutation of the training set */
    SB_STREAM_CASE_INPUT = 0x400, /* inputs of single-kernel cases: + tensor */
    SB_STREAM_WINDOWS = 0x500,  /* char_gpt: the training windows of each step */
    SB_STREAM_SAMPLE = 0x600,   /* char_gpt: the sampler's draws */
    SB_STREAM_DECODE = 0x700,   /* char_gpt: the other requests of a decode batch (+1: of the
                                 * greedy experiment) */
};

uint32_t sb_rng_u32(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index);
/* uniform in [0, 1), 24 random bits */
float sb_rng_uniform(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index);
/* standard normal (Box-Muller on two uniforms of the same counter block) */
float sb_rng_normal(uint64_t seed, uint32_t stream, uint32_t step, uint64_t index);

/* out[j] = sb_rng_uniform(seed, stream, step, index0 + j) for j in [0, n),
 * bit for bit, for any index0 and n with index0 + n <= 2^64: the same
 * function evaluated many Philox blocks at a time in vector lanes (AVX-512,
 * AVX2 or baseline, whichever the CPU has), for masks and fills that draw
 * consecutive indices. */
void sb_rng_uniform_run(float *out, uint64_t seed, uint32_t stream, uint32_t step,
                        uint64_t index0, size_t n);

/* Fill helpers; parallel where worth it, same bits for any thread count. */
void sb_rng_fill_uniform(float *out, size_t n, float lo, float hi,
                         uint64_t seed, uint32_t stream, uint32_t step);
/* The elements index0 .. index0+n-1 of that fill (sb_rng_fill_uniform is
 * index0 0): one row of a tensor drawn whole, e.g. one sample's inputs. */
void sb_rng_fill_uniform_from(float *out, size_t n, float lo, float hi, uint64_t seed,
                              uint32_t stream, uint32_t step, uint64_t index0);

/* Keras initialisers for a weight tensor with the given fans. */
void sb_init_glorot_uniform(float *w, size_t n, int fan_in, int fan_out,
                            uint64_t seed, uint32_t stream);
void sb_init_he_normal(float *w, size_t n, int fan_in,
                       uint64_t seed, uint32_t stream); /* truncated at 2 sd, as Keras 2.1 */
/* w[i] = stddev * sb_rng_normal(seed, stream, 0, i), untruncated (GPT-2's
 * normal initialiser). */
void sb_init_normal(float *w, size_t n, float stddev, uint64_t seed, uint32_t stream);
void sb_init_constant(float *w, size_t n, float value);
void sb_init_zeros(float *w, size_t n);

/* A permutation of 0..n-1 drawn from (seed, stream, step), e.g. an epoch's order. */
void sb_rng_permutation(int64_t *perm, int64_t n, uint64_t seed, uint32_t stream, uint32_t step);

#endif
