/* Placeholder until the area is implemented. */
#include "sb_rng.h"
#include "sb_common.h"
void sb_philox4x32_10(uint32_t out[4], const uint32_t counter[4], const uint32_t key[2]) { (void)out; (void)counter; (void)key; SB_ASSERT(!"not yet implemented"); }
