/* The register tile of the GEMM core (internal to kernels/gemm/).
 *
 * One call computes an SB_GEMM_MR x SB_GEMM_NR block of A B over one chunk of
 * kc reduction steps, each element one fmaf chain in p order from +0, then
 * stores it into C (overwrite) or adds it to C. Packed panels are zero-padded
 * to the full tile; only the mv x nv valid corner of C is touched, so an edge
 * tile runs exactly the arithmetic of a full one. */
#ifndef SB_GEMM_TILE_H
#define SB_GEMM_TILE_H

#include <stdbool.h>
#include <stddef.h>

#include "sb_gemm.h"   /* SB_GEMM_MR, SB_GEMM_NR */

/* c: [mv][ldc] (mv <= MR, nv <= NR), a: [kc][MR] packed, b: [kc][NR] packed */
typedef void sb_gemm_tile_fn(float *c, const float *a, const float *b,
                             ptrdiff_t ldc, int kc, int mv, int nv,
                             bool overwrite);

/* The tile compiled for the best instruction set this CPU has. Every variant
 * is the same C source; fmaf is correctly rounded everywhere (an instruction
 * or a libm call), so every variant gives the same bits. */
sb_gemm_tile_fn *sb_gemm_tile_select(void);

/* Every variant this CPU can run, best first (at most 3), so tests can show
 * they agree bit for bit; returns how many. */
int sb_gemm_tile_variants(sb_gemm_tile_fn *out[3]);

#endif
