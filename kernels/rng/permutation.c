/* Fisher-Yates driven by the counter RNG: the swap partner of position i is
 * drawn from the block at index i, so the permutation is a function of
 * (seed, stream, step, n) alone. */
#include "sb_common.h"
#include "rng_block.h"

/* Attempts beyond the first use index i + (attempt << 40), so positions must
 * stay below 2^40 to keep every (position, attempt) on its own counter. */
#define PERM_MAX_N ((int64_t)1 << 40)

/* Uniform in [0, m), without modulo bias: a 64-bit draw x is accepted when
 * x >= 2^64 mod m, which leaves a multiple of m equally likely values. Each
 * block offers two 64-bit draws; a rejection (probability < m/2^64) moves on
 * to the next. */
static uint64_t draw_below(uint64_t m, uint64_t seed, uint32_t stream, uint32_t step,
                           uint64_t position)
{
    const uint64_t reject_below = (0 - m) % m; /* 2^64 mod m */
    for (uint64_t attempt = 0;; attempt++) {
        SB_ASSERT(attempt < ((uint64_t)1 << 24));
        uint32_t x[4];
        sb_rng_block(x, seed, stream, step, position + (attempt << 40));
        for (int half = 0; half < 2; half++) {
            uint64_t r = (uint64_t)x[2 * half] | (uint64_t)x[2 * half + 1] << 32;
            if (r >= reject_below)
                return r % m;
        }
    }
}

void sb_rng_permutation(int64_t *perm, int64_t n, uint64_t seed, uint32_t stream,
                        uint32_t step)
{
    SB_ASSERT(n >= 0 && n < PERM_MAX_N);
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)draw_below((uint64_t)i + 1, seed, stream, step, (uint64_t)i);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}
