/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11): ten rounds of two 32x32->64 multiplies with the
 * key added by xor, the key bumped by Weyl constants between rounds. */
#include "rng_block.h"

void sb_philox4x32_10(uint32_t out[4], const uint32_t counter[4], const uint32_t key[2])
{
    uint32_t x[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < SB_PHILOX_ROUNDS; r++) {
        if (r > 0) {
            k[0] += SB_PHILOX_W0;
            k[1] += SB_PHILOX_W1;
        }
        sb_philox_round(x, k[0], k[1]);
    }
    for (int i = 0; i < 4; i++)
        out[i] = x[i];
}
