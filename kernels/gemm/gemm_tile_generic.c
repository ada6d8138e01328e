/* The register tiles in the baseline instruction set (every CPU; fmaf a
 * libm call where the build's target has no FMA). */
#define TILE_VEC_FLOATS 4
#include "gemm_tile_body.h"

TILES(generic, , SB_GEMM_MR, SB_GEMM_MR, NR, MRN, NRN, MRT, 16, 4, 24, false, 4)
