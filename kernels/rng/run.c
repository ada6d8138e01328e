/* Runs of consecutive uniforms. sb_rng_uniform pays a scalar Philox block
 * per 4 elements plus a memo lookup per element; a run instead computes
 * RUN_LANES consecutive blocks side by side, one block per lane of
 * struct-of-arrays words, so each round is a few vector multiplies, xors and
 * shuffles across all lanes. Every value is still the pure function of its
 * counter that sb_rng_uniform computes: same rounds, same map to [0, 1). */
#include <string.h>

#include "sb_common.h"
#include "rng_block.h"

#define RUN_LANES 16                /* blocks computed together */
#define RUN_FLOATS (4 * RUN_LANES)  /* the uniforms of those blocks */

/* out[0..RUN_FLOATS) = the uniforms of blocks b0 .. b0 + RUN_LANES - 1 of
 * (key, stream, step): word w of block b0 + l is out[4 l + w]. */
SB_ALWAYS_INLINE void uniform_lanes(float *restrict out, const uint32_t key[2], uint32_t stream,
                                    uint32_t step, uint64_t b0)
{
    uint32_t x[4][RUN_LANES];
    for (int l = 0; l < RUN_LANES; l++) {
        uint32_t counter[4];
        sb_rng_counter(counter, stream, step, b0 + (uint64_t)l);
        for (int i = 0; i < 4; i++)
            x[i][l] = counter[i];
    }
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < SB_PHILOX_ROUNDS; r++) {
        for (int l = 0; l < RUN_LANES; l++) {
            uint32_t w[4] = {x[0][l], x[1][l], x[2][l], x[3][l]};
            sb_philox_round(w, k0, k1);
            for (int i = 0; i < 4; i++)
                x[i][l] = w[i];
        }
        k0 += SB_PHILOX_W0;
        k1 += SB_PHILOX_W1;
    }
    for (int l = 0; l < RUN_LANES; l++)
        for (int i = 0; i < 4; i++)
            out[4 * l + i] = sb_rng_unit(x[i][l]);
}

/* out[0..n) in whole groups of RUN_LANES blocks: the group holding index0
 * starts up to 3 elements before out, the last may end past out + n; those
 * two go through a scratch group and only the elements in [0, n) are
 * copied. */
SB_ALWAYS_INLINE void uniform_run(float *out, uint64_t seed, uint32_t stream, uint32_t step,
                                  uint64_t index0, size_t n)
{
    /* and no index wraps past 2^64, where the block counter would not */
    SB_ASSERT(n <= PTRDIFF_MAX - RUN_FLOATS && (n == 0 || n - 1 <= UINT64_MAX - index0));
    uint32_t key[2];
    sb_rng_key(key, seed);
    uint64_t block = index0 >> 2;
    const ptrdiff_t end = (ptrdiff_t)n;
    for (ptrdiff_t j = -(ptrdiff_t)(index0 & 3); j < end; j += RUN_FLOATS, block += RUN_LANES) {
        if (j >= 0 && j + RUN_FLOATS <= end) {
            uniform_lanes(out + j, key, stream, step, block);
            continue;
        }
        float group[RUN_FLOATS];
        uniform_lanes(group, key, stream, step, block);
        const ptrdiff_t first = j < 0 ? -j : 0;
        const ptrdiff_t last = end - j < RUN_FLOATS ? end - j : RUN_FLOATS;
        memcpy(out + (j + first), group + first, (size_t)(last - first) * sizeof *out);
    }
}

/* One copy of the run per instruction set, the levels of
 * SB_ISA_VARIANTS, but as functions of their own so that tests can call
 * each one; the best the cap allows is picked at each call (sb_isa.h). */
#define RUN_VARIANT(name, attr)                                                      \
    attr static void name(float *out, uint64_t seed, uint32_t stream, uint32_t step, \
                          uint64_t index0, size_t n)                                 \
    {                                                                                \
        uniform_run(out, seed, stream, step, index0, n);                             \
    }

RUN_VARIANT(run_generic, )
#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(SB_WITHOUT_AVX512)
RUN_VARIANT(run_avx512, __attribute__((target("avx512f"))))
#endif
RUN_VARIANT(run_avx2, __attribute__((target("avx2"))))
#endif

int sb_rng_uniform_run_variants(sb_rng_run_fn out[3])
{
    int n = 0;
#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(SB_WITHOUT_AVX512)
    if (sb_isa_allows(SB_ISA_AVX512))
        out[n++] = run_avx512;
#endif
    if (sb_isa_allows(SB_ISA_AVX2))
        out[n++] = run_avx2;
#endif
    out[n++] = run_generic;
    return n;
}

void sb_rng_uniform_run(float *out, uint64_t seed, uint32_t stream, uint32_t step,
                        uint64_t index0, size_t n)
{
    sb_rng_run_fn variants[3];
    sb_rng_uniform_run_variants(variants);
    variants[0](out, seed, stream, step, index0, n);
}
