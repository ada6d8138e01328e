/* The register tiles in AVX2 with FMA (blocks sized for 16 ymm registers:
 * gemm_tile_body.h). Every function of the file is compiled for the
 * instruction set, its inline bodies too, which take in the multiply-add
 * intrinsic. */
#include "gemm_tile.h"

#if SB_GEMM_TILES_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#include <immintrin.h>
#define TILE_VEC_FLOATS 8
#include "gemm_tile_body.h"

TILES(avx2, __attribute__((target("avx2,fma"))), SB_GEMM_MR_AVX2, 6, 16, 4, NRN, 8, 8,
      4, 16, true, 1)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
