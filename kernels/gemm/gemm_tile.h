/* The register tiles of the GEMM core (internal to kernels/gemm/).
 *
 * One call computes a block of A B over one chunk of kc reduction steps, each
 * element one fmaf chain in p order from +0, then stores it into C
 * (overwrite, optionally onto a bias per row or per column) or adds it to
 * C. B comes packed in a panel [kc][width], zero-padded to the full width
 * (or, for the cache blocks' wide tile, wide_strided below, where its rows
 * lie); A is read where it lies (a packed panel or the matrix itself). Only
 * the mv x nv valid corner of C is touched, so an edge tile runs exactly the
 * arithmetic of a full one.
 *
 * Four shapes, chosen by the width of the product, the length of its
 * reduction and the layout of A:
 *   wide    SB_GEMM_MR x SB_GEMM_NR   (8 x 48; 24 x 48 on AVX2,
 *           SB_GEMM_MR_AVX2), B panels SB_GEMM_NR wide;
 *   narrow  SB_GEMM_MRN x SB_GEMM_NRN (16 x 16), for n <= SB_GEMM_NRN, where
 *           a wide tile would compute three times the columns it keeps;
 *   tall    SB_GEMM_MRT x SB_GEMM_NRT (32 x 12), for n <= SB_GEMM_NRT, and
 *           for the last n % SB_GEMM_NR <= SB_GEMM_NRT columns of a wider
 *           product whose A has contiguous columns (gemm.c): vectors run
 *           down C's columns, so that none of their lanes is wasted on
 *           the columns past n; B panels SB_GEMM_NRN wide;
 *   short   SB_GEMM_MRS x SB_GEMM_NR (48 x 48), for a reduction of at most
 *           SB_GEMM_KS steps (k <= 12) and n > SB_GEMM_NRN: the steps
 *           unrolled, all the tile's rows of A passing each block of B's
 *           columns.
 * Beside them the panel rest (sb_gemm_rest_fn below) takes the last
 * n % SB_GEMM_NR <= SB_GEMM_NRP columns of a product whose A lies by rows
 * (all of them where n <= SB_GEMM_NRP, as a thread's last strip of columns
 * may be), from the packed panels of the wide tiles, vectors down their rows.
 * A is read through its strides, a[i][p] at a[i*ars + p*acs], one of them 1:
 *   cols    ars == 1 (a packed panel, acs = the tile's rows; a transposed matrix)
 *   rows    acs == 1 (a row-major matrix)
 * The wide shape has a tile for each (the compiler is told which stride is
 * 1), and the cache blocks' wide_strided (below) for cols with B's rows at
 * any distance; the narrow one serves both as they come, the tall one reads
 * columns in place and copies rows transposed, a tile at a time, the short
 * one reads a row-major A of kc columns in place and copies any other. Shape and
 * strides decide only which elements are computed together, never an
 * element's arithmetic. */
#ifndef SB_GEMM_TILE_H
#define SB_GEMM_TILE_H

#include <stdbool.h>
#include <stddef.h>

#include "sb_gemm.h"   /* the tile sizes */

/* c: [mv][ldc] (mv, nv within the tile); a[i][p] at a[i*ars + p*acs], the
 * tile's rows from the chunk's first step; b: [kc][width] packed. (A's view
 * comes as three arguments, not an sb_matview, so that it travels in
 * registers.) Overwriting with a bias (the tile's: from its first row and
 * column), element (i, j) of C becomes its bias + its sums: the same
 * addition as filling C with the bias and adding the sums into it. */
typedef void sb_gemm_tile_fn(float *c, const float *a, ptrdiff_t ars, ptrdiff_t acs,
                             const float *b, ptrdiff_t ldc, int kc, int mv, int nv,
                             bool overwrite, sb_gemm_bias bias);

/* The panel rest (gemm_tile_body.h): C's nv <= SB_GEMM_NRP columns
 * (+)= A B over one chunk, A the wide tiles' packed panels [kc][wide_mr]
 * one after another for its mv rows, b a B panel [kc][SB_GEMM_NRN];
 * overwriting onto a bias as the tiles do. */
typedef void sb_gemm_rest_fn(float *c, const float *a, int kc, int mv, const float *b,
                             ptrdiff_t ldc, int nv, bool overwrite, sb_gemm_bias bias);

/* The columns of the blocks a wide tile computes: it reads nv columns of B
 * rounded up to a multiple of this (gemm_tile_body.h's tile_cols). */
#define SB_GEMM_BLOCK_COLS 16

/* The wide tile on A by columns (a packed panel, acs its rows; or a matrix
 * by columns) and B rows ldb floats apart (a packed panel, ldb =
 * SB_GEMM_NR; or a matrix by rows read in place): the cache blocks' tile
 * (gemm.c). a_padded: A's rows past mv, up to the tile's wide_mr, may be
 * read (a packed panel's zero padding; what they sum to is never stored);
 * else only its mv rows are read.
 * B's rows must hold nv columns rounded up to SB_GEMM_BLOCK_COLS. */
typedef void sb_gemm_strided_fn(float *c, const float *a, ptrdiff_t acs, bool a_padded,
                                const float *b, ptrdiff_t ldb, ptrdiff_t ldc, int kc, int mv,
                                int nv, bool overwrite, sb_gemm_bias bias);

/* The tall tile on B rows ldb floats apart: a packed panel's (ldb =
 * SB_GEMM_NRN, as the table's tall reads it) or B's own rows read where
 * they lie, which must hold the sb_gemm_tall_reads(nv) columns it reads. */
typedef void sb_gemm_tall_fn(float *c, const float *a, ptrdiff_t ars, ptrdiff_t acs,
                             const float *b, ptrdiff_t ldb, ptrdiff_t ldc, int kc, int mv, int nv,
                             bool overwrite, sb_gemm_bias bias);

/* The columns of B the tall tile reads for nv <= SB_GEMM_NRT valid ones:
 * its blocks are 4 (AVX2's 2 where nv <= 2), 8, 10 or 12 columns wide
 * (gemm_tile_body.h's tall_cols); the columns past nv are computed and not
 * stored. */
static inline int sb_gemm_tall_reads(int nv)
{
    return nv <= 4 ? 4 : nv <= 8 ? 8 : nv <= 10 ? 10 : SB_GEMM_NRT;
}

typedef struct sb_gemm_tiles {
    sb_gemm_tile_fn *wide_cols, *wide_rows, *narrow, *tall, *short_k;
    sb_gemm_rest_fn *rest;
    sb_gemm_strided_fn *wide_strided;
    sb_gemm_tall_fn *tall_strided;
    int wide_mr;   /* the wide tiles' rows, and so the height of packed A panels */
} sb_gemm_tiles;

/* A tile and its size: rows of C, and the width of its B panels. */
typedef struct sb_gemm_tile {
    sb_gemm_tile_fn *fn;
    int rows, width;
} sb_gemm_tile;

/* The variants, one file each (gemm_tile_<isa>.c). AVX2 and AVX-512 are
 * compiled for x86-64 with GCC's target attributes (GCC and clang), AVX-512
 * unless the build leaves it out (meson -Davx512=false). */
#if defined(__x86_64__) && defined(__GNUC__)
#define SB_GEMM_TILES_AVX2 1
#else
#define SB_GEMM_TILES_AVX2 0
#endif
#if SB_GEMM_TILES_AVX2 && !defined(SB_WITHOUT_AVX512)
#define SB_GEMM_TILES_AVX512 1
#else
#define SB_GEMM_TILES_AVX512 0
#endif
extern const sb_gemm_tiles sb_gemm_tiles_generic, sb_gemm_tiles_avx2, sb_gemm_tiles_avx512;

/* The tiles compiled for the best instruction set this CPU has under the
 * run's cap (SAMEBITS_ISA, sb_isa.h). Every variant is the same C source
 * but for the few lines of its vectors' multiply-add (gemm_tile_body.h);
 * a fused multiply-add is correctly rounded everywhere (an instruction or
 * fmaf, a libm call), so every variant gives the same bits. */
const sb_gemm_tiles *sb_gemm_tiles_select(void);

/* Every variant this CPU can run under the cap, best first (at most 3), so tests can show
 * they agree bit for bit; returns how many. */
int sb_gemm_tiles_variants(const sb_gemm_tiles *out[3]);

/* The tile for a product of m rows, n columns and k reduction steps with
 * A's strides (one of them 1; SB_ASSERT otherwise): short for k <=
 * SB_GEMM_KS and n > SB_GEMM_NRN, else tall, narrow or wide, as above,
 * except that a product of at most SB_GEMM_MRN rows takes the narrow tile
 * for n <= SB_GEMM_NRT too (the tall one would compute 32 rows for them: a
 * batch of one through a 10-class head). */
sb_gemm_tile sb_gemm_tile_for(const sb_gemm_tiles *t, int m, int n, int k, ptrdiff_t ars,
                              ptrdiff_t acs);

#endif
