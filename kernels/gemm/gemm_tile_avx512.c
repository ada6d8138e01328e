/* The register tiles in AVX-512 (blocks sized for 32 zmm registers:
 * gemm_tile_body.h). Every function of the file is compiled for the
 * instruction set, its inline bodies too, which take in the multiply-add
 * intrinsic. */
#include "gemm_tile.h"

#if SB_GEMM_TILES_AVX512
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
#endif
#include <immintrin.h>
#define TILE_VEC_FLOATS 16
#include "gemm_tile_body.h"

TILES(avx512, __attribute__((target("avx512f,fma"))), SB_GEMM_MR, SB_GEMM_MR, NR, MRN, NRN, MRT,
      16, 16, 16, true, 4)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
