/* The register tiles in AVX2 with FMA (blocks sized for 16 ymm registers:
 * gemm_tile_body.h). */
#include "gemm_tile.h"

#if SB_GEMM_TILES_AVX2
#include "gemm_tile_body.h"

TILES(avx2, __attribute__((target("avx2,fma"))), SB_GEMM_MR_AVX2, 6, 16, 4, NRN, 8, 8,
      4, 16, true, 1)
#endif
