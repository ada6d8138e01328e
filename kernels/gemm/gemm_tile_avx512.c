/* The register tiles in AVX-512 (blocks sized for 32 zmm registers:
 * gemm_tile_body.h). */
#include "gemm_tile.h"

#if SB_GEMM_TILES_AVX512
#include "gemm_tile_body.h"

TILES(avx512, __attribute__((target("avx512f,fma"))), SB_GEMM_MR, SB_GEMM_MR, NR, MRN, NRN, MRT,
      16, 16, 16, true, 4)
#endif
