/* The bodies of the register tiles (internal to kernels/gemm/): included by
 * gemm_tile_generic.c, gemm_tile_avx2.c and gemm_tile_avx512.c, each of
 * which compiles them for one instruction set with TILES. One file per
 * instruction set, so that a build compiles the three in parallel.
 *
 * The project builds for baseline x86-64, where fmaf is a libm call. The
 * wide, narrow and short tiles keep their accumulators in vectors of the
 * file's instruction set (tile_vec: a fused multiply-add instruction in the
 * AVX-512 and AVX2 copies, fmaf lane by lane in the baseline's); the tall
 * tile and the panel rest write fmaf chains over local arrays, which the
 * AVX-512 and AVX2 copies turn into vfmadd instructions. Either way each
 * element is one fmaf chain, and every index is a constant after
 * unrolling. */
#ifndef SB_GEMM_TILE_BODY_H
#define SB_GEMM_TILE_BODY_H

#include <limits.h>
#include <math.h>
#include <string.h>

#include "sb_common.h"
#include "gemm_tile.h"
#include "sb_data_move.h"

/* Under AddressSanitizer, which checks every access, the tiles' loops stay
 * loops: unrolled, GCC 12 takes minutes to compile them there, where speed
 * matters little. Unrolling never changes an element's chain, so the bits
 * are the same. */
#if defined(__SANITIZE_ADDRESS__)
#define SB_TILES_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SB_TILES_SANITIZED 1
#endif
#endif
#ifndef SB_TILES_SANITIZED
#define SB_TILES_SANITIZED 0
#endif

#define NR SB_GEMM_NR
#define MRN SB_GEMM_MRN
#define NRN SB_GEMM_NRN
#define KC SB_GEMM_KC
#define MRT SB_GEMM_MRT
#define NRT SB_GEMM_NRT

/* for (int v = 0; v < count; v++) stmt, fully unrolled (count up to 16, a
 * constant after inlining; rolled under ASan, above), so that the
 * accumulators are indexed by constants and stay in registers. GCC unrolls
 * fully when the unroll count is at least the trip count; clang only when
 * the two are equal, so for clang the loop goes four at a time, each v past
 * count skipped (a comparison of constants once unrolled). */
#define PRAGMA(x) _Pragma(#x)
#if SB_TILES_SANITIZED
#define FOR_UNROLLED(v, count, stmt) for (int v = 0; v < (count); v++) stmt
#elif defined(__clang__)
#define FOR_UNROLLED(v, count, stmt)                       \
    for (int v##4_ = 0; v##4_ < (count); v##4_ += 4) {     \
        PRAGMA(GCC unroll 4)                               \
        for (int v = v##4_; v < v##4_ + 4; v++)            \
            if (v < (count))                               \
                stmt                                       \
    }
#else
#define FOR_UNROLLED(v, count, stmt)                       \
    {                                                      \
        PRAGMA(GCC unroll 16)                              \
        for (int v = 0; v < (count); v++)                  \
            stmt                                           \
    }
#endif
#define ROWS_MAX 16
#define REST_ROWS_MAX 32

/* Before the loop over reduction steps: GCC takes two steps an iteration,
 * sharing the pointer updates (clang, unrolling this way, leaves the
 * accumulators in memory; under ASan, one step an iteration). */
#if defined(__clang__) || SB_TILES_SANITIZED
#define UNROLL_STEPS
#else
#define UNROLL_STEPS PRAGMA(GCC unroll 2)
#endif

/* What an element of C becomes from its chunk sum: its old value plus the
 * sum, or overwritten by the sum, onto its bias where there is one (bias:
 * the element's own, i and j from the bias's first row and column). */
SB_ALWAYS_INLINE float stored(float old, float sum, bool overwrite, sb_gemm_bias bias, int i,
                              int j)
{
    return !overwrite ? old + sum : bias.p ? sb_gemm_bias_of(bias, i, j) + sum : sum;
}

/* The tiles' vectors: TILE_VEC_FLOATS floats (set by the including file:
 * 16 for AVX-512, 8 for AVX2, 4 for the baseline), and a lane-wise fused
 * multiply-add with fmaf's single rounding. Accumulators held as vectors
 * indexed by constants stay in registers from the first step to the store.
 * As float arrays filled by `omp simd` loops, GCC 12 kept them in memory
 * at the loop's ends: stored onto the stack after the first step and after
 * the last, and loaded back for the loop and for the store into C. On a
 * Zen 4 EPYC, the 8 x 48 tile over all of a 288 x 576 product with A and
 * B in cache, % of the FMA peak at 1 thread: 32 steps a chunk 82 -> 88,
 * 64 steps 90 -> 93, 128 steps 93 -> 96, 256 steps 96.4 -> 97.3; AVX2's
 * 24-row tile 80 -> 94, 88 -> 96, 93 -> 97, 92 -> 94. */
typedef float tile_vec __attribute__((vector_size(TILE_VEC_FLOATS * sizeof(float))));
typedef float tile_vec_at
    __attribute__((vector_size(TILE_VEC_FLOATS * sizeof(float)), aligned(4), may_alias));

SB_ALWAYS_INLINE tile_vec tile_load(const float *p) { return *(const tile_vec_at *)p; }
SB_ALWAYS_INLINE void tile_store(float *p, tile_vec v) { *(tile_vec_at *)p = v; }
#if TILE_VEC_FLOATS == 16
SB_ALWAYS_INLINE tile_vec tile_splat(float x) { return (tile_vec)_mm512_set1_ps(x); }
SB_ALWAYS_INLINE tile_vec tile_fma(tile_vec a, tile_vec b, tile_vec c)
{
    return (tile_vec)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
}
#elif TILE_VEC_FLOATS == 8
SB_ALWAYS_INLINE tile_vec tile_splat(float x) { return (tile_vec)_mm256_set1_ps(x); }
SB_ALWAYS_INLINE tile_vec tile_fma(tile_vec a, tile_vec b, tile_vec c)
{
    return (tile_vec)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
}
#elif TILE_VEC_FLOATS == 4
SB_ALWAYS_INLINE tile_vec tile_splat(float x) { return (tile_vec){x, x, x, x}; }
SB_ALWAYS_INLINE tile_vec tile_fma(tile_vec a, tile_vec b, tile_vec c)
{
    for (int l = 0; l < TILE_VEC_FLOATS; l++)
        c[l] = fmaf(a[l], b[l], c[l]);
    return c;
}
#else
#error "TILE_VEC_FLOATS: 16, 8 or 4"
#endif
#define TV TILE_VEC_FLOATS

/* A block's sums acc[0..sm)[0..sn) into C (cb: its first element; bias:
 * from its first row and column), of which only rows x cols are valid:
 * overwritten, onto the bias, or added. A whole block is stored unrolled,
 * as the steps are: a loop over the rows would index acc by a variable and
 * so keep it in memory, the whole block stored onto the stack after the
 * last step and read back in pieces (a third of conv1's time, K = 9). An
 * edge goes through a copy, so that acc is only ever indexed by constants
 * and stays in registers. */
SB_ALWAYS_INLINE void store_block(float *restrict cb, ptrdiff_t ldc,
                                  tile_vec acc[ROWS_MAX][NR / TV], int rows, int cols,
                                  bool overwrite, sb_gemm_bias bias, int sm, int sn)
{
    if (rows == sm && cols == sn) {
        FOR_UNROLLED(i, sm, {
            float *ci = cb + i * ldc;
            FOR_UNROLLED(v, sn / TV, {
                tile_vec sum = acc[i][v];
                if (overwrite && bias.p && bias.per_column)
                    tile_store(ci + v * TV, tile_load(bias.p + v * TV) + sum);
                else if (overwrite && bias.p)
                    tile_store(ci + v * TV, tile_splat(bias.p[i]) + sum);
                else if (overwrite)
                    tile_store(ci + v * TV, sum);
                else
                    tile_store(ci + v * TV, tile_load(ci + v * TV) + sum);
            })
        })
        return;
    }
    _Alignas(64) float edge[ROWS_MAX][NR];
    FOR_UNROLLED(i, sm, FOR_UNROLLED(v, sn / TV, tile_store(&edge[i][v * TV], acc[i][v]);))
    for (int i = 0; i < rows; i++) {
        float *ci = cb + i * ldc;
        for (int j = 0; j < cols; j++)
            ci[j] = stored(ci[j], edge[i][j], overwrite, bias, i, j);
    }
}

/* The lines of C's block rows x cols (cb: its first element) asked for
 * before the steps that end in storing it: a product's output is often
 * out of the caches (conv2's forward pass writes 19 MB a call), and a
 * store that misses waits for its line. Asked for here, the lines come
 * while the block's steps run (a chunk of 256 steps: thousands of cycles).
 * On a Zen 4 EPYC, one thread (CPU time): conv2's forward product on B
 * panels left packed ran at 112 GFLOP/s with C in L2 (2 images), 103 with
 * the batch's 128 out of it; asked for, conv2's forward pass ran 1.06
 * times as fast, dense1's data and weight gradients (4.7 MB outputs) 1.10.
 * Never a change to an element's arithmetic. */
SB_ALWAYS_INLINE void prefetch_block(const float *cb, ptrdiff_t ldc, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j += 16)
            __builtin_prefetch(cb + i * ldc + j, 1, 3);
        __builtin_prefetch(cb + i * ldc + cols - 1, 1, 3);
    }
}

/* The tile as sm x sn blocks (constants after inlining), each block's
 * accumulators in registers for the whole chunk. Every row of A the body
 * reads is valid (edge rows come zero-padded, see TILE below). A block wholly
 * outside the valid rows or columns is skipped. a[i][p] is a[i*ars + p*acs];
 * b has rows of nr floats. Every element is the same fmaf chain whatever the
 * blocking, a lane of a vector accumulator. The blocks go column strip by
 * column strip, each strip down all the rows: AVX2's 6 x 16 blocks then
 * read one 16-column strip of the 48-wide B panel (16 KiB at kc = 256) from
 * L1 for the tile's four blocks of rows, where row block by row block took
 * the whole panel (48 KiB, more than Zen 3's L1) from L2 for each. A (24
 * KiB) is now read once per strip, three times, and with the strip still
 * exceeds L1, but it streams in order (the GPT's weight gradients at 1
 * thread on Zen 3: det 60-62 -> 67-71 GFLOP/s, medians of 7 rounds). */
SB_ALWAYS_INLINE void tile_body(float *restrict c, const float *restrict a, ptrdiff_t ars,
                                ptrdiff_t acs, const float *restrict b, int nr, ptrdiff_t ldc,
                                int kc, int mv, int nv, bool overwrite, sb_gemm_bias bias,
                                int sm, int sn)
{
    for (int j0 = 0; j0 < nv; j0 += sn)
        for (int i0 = 0; i0 < mv; i0 += sm) {
            /* p = 0 peeled (kc >= 1): every chain's first step is
             * fmaf(a, b, +0) */
            tile_vec acc[ROWS_MAX][NR / TV];
            {
                const float *ap = a + i0 * ars, *bp = b + j0;
                FOR_UNROLLED(i, sm, {
                    tile_vec ai = tile_splat(ap[i * ars]);
                    FOR_UNROLLED(v, sn / TV,
                                 acc[i][v] = tile_fma(ai, tile_load(bp + v * TV),
                                                      tile_splat(0.0f));)
                })
            }
            const int ri = mv - i0 < sm ? mv - i0 : sm, cj = nv - j0 < sn ? nv - j0 : sn;
            prefetch_block(c + i0 * ldc + j0, ldc, ri, cj);
            UNROLL_STEPS
            for (int p = 1; p < kc; p++) {
                /* every fourth row a base of its own: row i is then
                 * base[i / 4] + (i % 4) ars, three offsets in registers
                 * instead of fifteen reloaded from the stack every step
                 * (written as one base, GCC 12 also vectorises the narrow
                 * tile's first row as scalars) */
                const float *ap = a + p * acs + i0 * ars, *base[4];
                for (int q = 0; q < 4; q++)   /* only rows of the block: sm may be 4 to 8 */
                    base[q] = ap + (4 * q < sm ? 4 * q : 0) * ars;
                const float *bp = b + (ptrdiff_t)p * nr + j0;
                tile_vec bv[NR / TV];
                FOR_UNROLLED(v, sn / TV, bv[v] = tile_load(bp + v * TV);)
                FOR_UNROLLED(i, sm, {
                    tile_vec ai = tile_splat(base[i / 4][(i % 4) * ars]);
                    FOR_UNROLLED(v, sn / TV, acc[i][v] = tile_fma(ai, bv[v], acc[i][v]);)
                })
            }
            store_block(c + i0 * ldc + j0, ldc, acc, ri, cj, overwrite,
                        sb_gemm_bias_at(bias, i0, j0), sm, sn);
        }
}

/* The tall tile: vectors run down the columns of C, for a product of at most
 * 12 columns, A's columns contiguous (a[i][p] at a[i + p*acs]: dense2's
 * weight gradient reads x^T in place; TALL below copies A by rows into this
 * layout). Per step p, sm values of A's column p are one load and each
 * b[p][j] one broadcast, where the narrow tile loads 16 broadcasts to fill
 * 10 lanes. Blocks of sm rows x sn columns, acc[j][i]; the same fmaf chain
 * per element as tile_body. Every row of A read is valid (edge rows come
 * zero-padded). The loops over i are marked `omp simd`: their lanes are
 * independent chains, and without the mark GCC 12 leaves AVX2's 8-row
 * blocks as scalar fmaf with the accumulators on the stack (a tenth of the
 * vector speed); the mark changes which chains share a vector, never a
 * chain. */
SB_ALWAYS_INLINE void tall_body(float *restrict c, const float *restrict a, ptrdiff_t acs,
                                const float *restrict b, int nr, ptrdiff_t ldc, int kc, int mv,
                                int nv, bool overwrite, sb_gemm_bias bias, int sm, int sn)
{
    for (int i0 = 0; i0 < mv; i0 += sm)
        for (int j0 = 0; j0 < nv; j0 += sn) {
            float acc[NRT][MRT];
            {
                const float *ap = a + i0, *bp = b + j0;
                FOR_UNROLLED(j, sn, {
                    float bj = bp[j];
                    _Pragma("omp simd")
                    for (int i = 0; i < sm; i++)
                        acc[j][i] = fmaf(ap[i], bj, 0.0f);
                })
            }
            for (int p = 1; p < kc; p++) {
                const float *ap = a + p * acs + i0, *bp = b + (ptrdiff_t)p * nr + j0;
                FOR_UNROLLED(j, sn, {
                    float bj = bp[j];
                    _Pragma("omp simd")
                    for (int i = 0; i < sm; i++)
                        acc[j][i] = fmaf(ap[i], bj, acc[j][i]);
                })
            }
            /* C takes acc transposed, element by element */
            int ri = mv - i0 < sm ? mv - i0 : sm, cj = nv - j0 < sn ? nv - j0 : sn;
            for (int i = 0; i < ri; i++) {
                float *ci = c + (i0 + i) * ldc + j0;
                for (int j = 0; j < cj; j++)
                    ci[j] = stored(ci[j], acc[j][i], overwrite, bias, i0 + i, j0 + j);
            }
        }
}

/* The mv < rows valid rows of A copied into zero-padded rows [rows][kc]: the
 * body may then read every row of the tile. */
static void pad_rows(float *restrict dst, const float *a, ptrdiff_t ars, ptrdiff_t acs,
                     int kc, int rows, int mv)
{
    for (int i = 0; i < rows; i++)
        for (int p = 0; p < kc; p++)
            dst[i * kc + p] = i < mv ? a[i * ars + p * acs] : 0.0f;
}

/* tile_body with column blocks as narrow as the valid columns allow: a
 * 48-column block (AVX-512's whole wide tile) computes 16 or 32 columns
 * when no more are valid (n = 128 is 48 + 48 + 32), the others as given. */
SB_ALWAYS_INLINE void tile_cols(float *restrict c, const float *restrict a, ptrdiff_t ars,
                                ptrdiff_t acs, const float *restrict b, int nr, ptrdiff_t ldc,
                                int kc, int mv, int nv, bool overwrite, sb_gemm_bias bias,
                                int sm, int sn)
{
    if (sn == 48 && nv <= 16)
        tile_body(c, a, ars, acs, b, nr, ldc, kc, mv, nv, overwrite, bias, sm, 16);
    else if (sn == 48 && nv <= 32)
        tile_body(c, a, ars, acs, b, nr, ldc, kc, mv, nv, overwrite, bias, sm, 32);
    else
        tile_body(c, a, ars, acs, b, nr, ldc, kc, mv, nv, overwrite, bias, sm, sn);
}

/* tile_cols over the rows: sm-row blocks, except that 6-row blocks (AVX2)
 * leave the rows past the last whole one to 4-row blocks (4 x 16 in 8
 * accumulators) where that computes fewer rows past the valid ones: 8 rows
 * as 4 + 4, 16 as 6 + 6 + 4. Every row read lies within the tile's rows
 * (mv <= rows, and rows a multiple of 6 and of 4). */
SB_ALWAYS_INLINE void tile_rows(float *restrict c, const float *restrict a, ptrdiff_t ars,
                                ptrdiff_t acs, const float *restrict b, int nr, ptrdiff_t ldc,
                                int kc, int mv, int nv, bool overwrite, sb_gemm_bias bias,
                                int sm, int sn)
{
    if (sm != 6) {
        tile_cols(c, a, ars, acs, b, nr, ldc, kc, mv, nv, overwrite, bias, sm, sn);
        return;
    }
    int six = mv / 6;
    if ((mv - 6 * six) % 4 != 0 && six > 0 && (mv - 6 * (six - 1)) % 4 == 0)
        six--;
    int rows6 = mv - 6 * six == 5 ? mv : 6 * six;   /* 5 over: one 6-row block */
    tile_cols(c, a, ars, acs, b, nr, ldc, kc, rows6, nv, overwrite, bias, 6, sn);
    if (rows6 < mv)
        tile_cols(c + rows6 * ldc, a + rows6 * ars, ars, acs, b, nr, ldc, kc, mv - rows6, nv,
                  overwrite, sb_gemm_bias_at(bias, rows6, 0), 4, sn);
}

/* A tile function's body: full tiles read A in place, and edge tiles where
 * A's rows past mv are readable (a_whole), the others a padded copy; B's
 * rows nr floats apart. */
#define TILE_BODY(rows, a_whole, ars_full, ars, acs, nr, sm, sn)                         \
    if (mv == (rows) || (a_whole)) {                                                     \
        tile_rows(c, a, ars_full, acs, b, nr, ldc, kc, mv, nv, overwrite, bias, sm, sn); \
        return;                                                                          \
    }                                                                                    \
    _Alignas(64) float pad[KC * (rows)];   /* whole vectors, no split lines */           \
    SB_ASSERT(kc <= KC);                                                                 \
    pad_rows(pad, a, ars, acs, kc, rows, mv);                                            \
    tile_rows(c, pad, kc, 1, b, nr, ldc, kc, mv, nv, overwrite, bias, sm, sn);

/* One tile function on B panels nr wide. A wide tile reading A by columns is
 * told ars == 1, so that it loads A's contiguous values one by one as
 * broadcasts; told the same, a narrow tile would load them as one vector
 * and spread it with permutes on the FMA port, so the narrow tiles take
 * both strides as they come. */
#define TILE(name, attr, rows, nr, ars_full, sm, sn)                                       \
    attr static void name(float *c, const float *a, ptrdiff_t ars, ptrdiff_t acs,          \
                          const float *b, ptrdiff_t ldc, int kc, int mv, int nv,           \
                          bool overwrite, sb_gemm_bias bias)                               \
    {                                                                                      \
        TILE_BODY(rows, false, ars_full, ars, acs, nr, sm, sn)                             \
    }

/* The wide tile reading A by columns (ars == 1) and B where its rows lie,
 * ldb floats apart: B's own rows (a matrix by rows, read in place) or a
 * packed panel's (ldb = SB_GEMM_NR). An edge tile of a packed panel
 * (a_padded) reads it in place too: its rows past mv are the panel's zero
 * padding, and tile_rows reads none past the tile's height. */
#define TILE_STRIDED_B(name, attr, rows, sm, sn)                                           \
    attr static void name(float *c, const float *a, ptrdiff_t acs, bool a_padded,          \
                          const float *b, ptrdiff_t ldb, ptrdiff_t ldc, int kc, int mv,    \
                          int nv, bool overwrite, sb_gemm_bias bias)                       \
    {                                                                                      \
        SB_ASSERT(ldb <= INT_MAX);                                                         \
        TILE_BODY(rows, a_padded, 1, 1, acs, (int)ldb, sm, sn)                             \
    }

/* The tile's rows of A, [kc][MRT] from p = 0, rows past mv zero: A by
 * columns is copied a column at a time, A by rows is transposed 8 rows by
 * `steps` (16 or 8) steps at a time (single elements at the edges): 8 x 16
 * blocks where vectors hold 16 floats, 8 x 8 where they hold 8 (AVX2 has no
 * 16-float shuffles; spelt out in 8-float halves they go through memory). */
SB_ALWAYS_INLINE void pack_tall(float *restrict dst, const float *a, ptrdiff_t ars, ptrdiff_t acs,
                                int kc, int mv, int steps)
{
    if (ars == 1) {
        for (int p = 0; p < kc; p++)
            for (int i = 0; i < MRT; i++)
                dst[p * MRT + i] = i < mv ? a[i + p * acs] : 0.0f;
        return;
    }
    for (int i0 = 0; i0 < MRT; i0 += 8) {
        int p = 0;
        if (i0 + 8 <= mv && steps == 16)
            for (; p + 16 <= kc; p += 16)
                sb_transpose8x16(dst + p * MRT + i0, MRT, a + i0 * ars + p, ars);
        else if (i0 + 8 <= mv)
            for (; p + 8 <= kc; p += 8)
                sb_transpose8(dst + p * MRT + i0, MRT, a + i0 * ars + p, ars);
        for (; p < kc; p++)
            for (int i = i0; i < i0 + 8; i++)
                dst[p * MRT + i] = i < mv ? a[i * ars + p] : 0.0f;
    }
}

/* tall_body on B rows ldb floats apart, with as few of the tile's 12
 * columns as the valid ones need (sb_gemm_tall_reads): 2 or 4 (a wide
 * product's last few columns, gemm.c), 8, 10 (dense2 has 10) or 12. Two
 * FMA units of latency 4 need 8 chains to keep busy: AVX-512's 32-row
 * blocks (two vectors) have them at 4 columns, and compute 4 where fewer
 * are valid; AVX2's 8-row blocks (one vector) take 2 columns in 32-row
 * blocks and 4 in 16-row ones, where 4 columns of 8 rows left the units
 * idle half the time (the 2 columns past gpt.head.bwd_weights' 96, a tenth
 * of its time on a Zen 5 EPYC in AVX2 code). */
SB_ALWAYS_INLINE void tall_cols(float *restrict c, const float *restrict a, ptrdiff_t acs,
                                const float *restrict b, int ldb, ptrdiff_t ldc, int kc, int mv,
                                int nv, bool overwrite, sb_gemm_bias bias, int sm)
{
    const int reads = sb_gemm_tall_reads(nv);
    if (reads == 4 && nv <= 2 && 4 * sm <= MRT)
        tall_body(c, a, acs, b, ldb, ldc, kc, mv, nv, overwrite, bias, 4 * sm, 2);
    else if (reads == 4 && 2 * sm <= MRT)
        tall_body(c, a, acs, b, ldb, ldc, kc, mv, nv, overwrite, bias, 2 * sm, 4);
    else if (reads == 4)
        tall_body(c, a, acs, b, ldb, ldc, kc, mv, nv, overwrite, bias, sm, 4);
    else if (reads == 8)
        tall_body(c, a, acs, b, ldb, ldc, kc, mv, nv, overwrite, bias, sm, 8);
    else if (reads == 10)
        tall_body(c, a, acs, b, ldb, ldc, kc, mv, nv, overwrite, bias, sm, 10);
    else
        tall_body(c, a, acs, b, ldb, ldc, kc, mv, nv, overwrite, bias, sm, NRT);
}

/* The tall tile functions: A by columns is read in place when the tile is
 * full; edge rows, and A by rows, go through a copy [kc][MRT] (A by rows
 * would otherwise take MRT strided loads a step where the copy takes two),
 * made in a function of its own: inlined, GCC 12 kept the copy's row
 * addresses in vector registers and its loads on the stack (dense2.fwd,
 * 128 x 10 x 128, on a Zen 4 EPYC: 4.95 -> 4.65 us a call). B's rows lie
 * ldb floats apart: a packed panel's (SB_GEMM_NRN, the table's tall) or
 * B's own (tall_strided). */
#define TALL(name, attr, sm, steps)                                                         \
    attr __attribute__((noinline)) static void name##_pack(float *restrict dst,             \
                                                           const float *a, ptrdiff_t ars,   \
                                                           ptrdiff_t acs, int kc, int mv)   \
    {                                                                                       \
        pack_tall(dst, a, ars, acs, kc, mv, steps);                                         \
    }                                                                                       \
    attr __attribute__((noinline)) static void name##_strided(                              \
        float *c, const float *a, ptrdiff_t ars, ptrdiff_t acs, const float *b,             \
        ptrdiff_t ldb, ptrdiff_t ldc, int kc, int mv, int nv, bool overwrite,               \
        sb_gemm_bias bias)                                                                  \
    {                                                                                       \
        SB_ASSERT((ars == 1 || acs == 1) && nv <= NRT && ldb <= INT_MAX);                   \
        if (mv == MRT && ars == 1) {                                                        \
            tall_cols(c, a, acs, b, (int)ldb, ldc, kc, mv, nv, overwrite, bias, sm);        \
            return;                                                                         \
        }                                                                                   \
        _Alignas(64) float pad[KC * MRT];                                                   \
        SB_ASSERT(kc <= KC);                                                                \
        name##_pack(pad, a, ars, acs, kc, mv);                                              \
        tall_cols(c, pad, MRT, b, (int)ldb, ldc, kc, mv, nv, overwrite, bias, sm);          \
    }                                                                                       \
    attr static void name(float *c, const float *a, ptrdiff_t ars, ptrdiff_t acs,           \
                          const float *b, ptrdiff_t ldc, int kc, int mv, int nv,            \
                          bool overwrite, sb_gemm_bias bias)                                \
    {                                                                                       \
        name##_strided(c, a, ars, acs, b, NRN, ldc, kc, mv, nv, overwrite, bias);           \
    }

/* The panel rest: the last n % SB_GEMM_NR <= SB_GEMM_NRP columns of a wide
 * product whose A lies by rows (gpt.head's 98 = 48 + 48 + 2), from the wide
 * tiles' own packed copy of A: panels of pr rows, [kc][pr] each, one after
 * another, so a step of a panel holds its pr rows side by side. Vectors run
 * down those rows, as in the tall tile but without a copy of their own,
 * where a block of the wide tile would compute 16 columns for the 2 (a
 * sixth of gpt.head.fwd's time on a Zen 4 EPYC). gp panels at a time, sn
 * columns of a B panel SB_GEMM_NRN wide; rows past mv are the panels' zero
 * padding, computed and not stored. The same fmaf chain per element as
 * tile_body. */
SB_ALWAYS_INLINE void rest_body(float *restrict c, const float *restrict a, int pr,
                                const float *restrict b, ptrdiff_t ldc, int kc, int mv, int nv,
                                bool overwrite, sb_gemm_bias bias, int gp, int sn)
{
    const ptrdiff_t ps = (ptrdiff_t)kc * pr;   /* from a panel to the next */
    float acc[SB_GEMM_NRP][REST_ROWS_MAX];
    FOR_UNROLLED(j, sn, {
        float bj = b[j];
        FOR_UNROLLED(g, gp, {
            _Pragma("omp simd")
            for (int i = 0; i < pr; i++)
                acc[j][g * pr + i] = fmaf(a[g * ps + i], bj, 0.0f);
        })
    })
    for (int p = 1; p < kc; p++) {
        const float *ap = a + (ptrdiff_t)p * pr, *bp = b + (ptrdiff_t)p * NRN;
        FOR_UNROLLED(j, sn, {
            float bj = bp[j];
            FOR_UNROLLED(g, gp, {
                _Pragma("omp simd")
                for (int i = 0; i < pr; i++)
                    acc[j][g * pr + i] = fmaf(ap[g * ps + i], bj, acc[j][g * pr + i]);
            })
        })
    }
    int rows = mv < gp * pr ? mv : gp * pr;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < nv; j++)
            c[i * ldc + j] = stored(c[i * ldc + j], acc[j][i], overwrite, bias, i, j);
}

/* rest_body over the rows of a cache block: gp panels at a time, then one
 * at a time; 2 columns where no more are valid, else 4. */
#define REST(name, attr, pr, gp)                                                               \
    attr static void name(float *c, const float *a, int kc, int mv, const float *b,            \
                          ptrdiff_t ldc, int nv, bool overwrite, sb_gemm_bias bias)            \
    {                                                                                          \
        _Static_assert((pr) * (gp) <= REST_ROWS_MAX && SB_GEMM_NRP == 4, "rest_body's sizes"); \
        SB_ASSERT(nv >= 1 && nv <= SB_GEMM_NRP && kc >= 1);                                    \
        int panels = (mv + (pr) - 1) / (pr), g = 0;                                            \
        for (; g < panels; g += g + (gp) <= panels ? (gp) : 1) {                               \
            float *cg = c + (ptrdiff_t)g * (pr) * ldc;                                         \
            const float *ag = a + (ptrdiff_t)g * kc * (pr);                                    \
            int rows = mv - g * (pr);                                                          \
            sb_gemm_bias bg = sb_gemm_bias_at(bias, g * (pr), 0);                              \
            if (g + (gp) <= panels && nv <= 2)                                                 \
                rest_body(cg, ag, pr, b, ldc, kc, rows, nv, overwrite, bg, gp, 2);             \
            else if (g + (gp) <= panels)                                                       \
                rest_body(cg, ag, pr, b, ldc, kc, rows, nv, overwrite, bg, gp, 4);             \
            else                                                                               \
                rest_body(cg, ag, pr, b, ldc, kc, rows, nv, overwrite, bg, 1, 4);              \
        }                                                                                      \
    }

/* The short tile, for a reduction of at most SB_GEMM_KS steps (conv1's 9
 * taps, dense2's 10 classes), where a block of the other tiles spends more
 * on its setup and its stores than on its few steps. Where kc is a
 * constant (SHORT), the steps are unrolled and A's offsets are immediates.
 * For each block of sn columns, all the tile's rows of A pass the block's
 * kc rows of B, sm rows at a time, each row's sn sums its own chains (B is
 * read as an FMA operand; it stays in registers where they hold it,
 * AVX-512's 32). With the groups of rows outside instead, GCC 12 hoists
 * their broadcasts of A out of the loop over columns onto the stack. Rows
 * past mv in the last group are zero in the copy of A, columns past nv are
 * computed on B's zero padding; neither is stored. The same fmaf chain per
 * element as tile_body. */
SB_ALWAYS_INLINE void short_body(float *restrict c, const float *restrict a, ptrdiff_t ars,
                                 ptrdiff_t acs, const float *restrict b, ptrdiff_t ldc, int kc,
                                 int mv, int nv, bool overwrite, sb_gemm_bias bias, int sm,
                                 int sn)
{
    /* A as [rows][kc], whole groups: every broadcast is then at a constant
     * offset from its group's start (read through its strides, GCC 12 keeps
     * an address per step and row on the stack). A row-major A of kc
     * columns (conv1's filters, dense2's gradient) is that already, but for
     * a last group of fewer than sm rows; any other A is copied. Rows past
     * mv are zero. */
    _Alignas(64) float ap[SB_GEMM_MRS * SB_GEMM_KS];
    bool in_place = acs == 1 && ars == kc;
    int from = in_place ? mv / sm * sm : 0, rows_padded = (mv + sm - 1) / sm * sm;
    for (int i = from; i < rows_padded; i++)
        for (int p = 0; p < kc; p++)
            ap[(i - from) * kc + p] = i < mv ? a[i * ars + p * acs] : 0.0f;
    for (int j0 = 0; j0 < nv; j0 += sn) {
        const float *bp = b + j0;
        int cj = nv - j0 < sn ? nv - j0 : sn;
        for (int i0 = 0; i0 < mv; i0 += sm) {
            const float *ag = i0 < from ? a + i0 * kc : ap + (i0 - from) * kc;
            int rows = mv - i0 < sm ? mv - i0 : sm;
            tile_vec acc[ROWS_MAX][NR / TV];
            FOR_UNROLLED(i, sm, {
                tile_vec ai = tile_splat(ag[i * kc]);
                FOR_UNROLLED(v, sn / TV,
                             acc[i][v] = tile_fma(ai, tile_load(bp + v * TV), tile_splat(0.0f));)
            })
            FOR_UNROLLED(p, kc, {
                if (p > 0)
                    FOR_UNROLLED(i, sm, {
                        tile_vec ai = tile_splat(ag[i * kc + p]);
                        FOR_UNROLLED(v, sn / TV,
                                     acc[i][v] = tile_fma(ai, tile_load(bp + p * NR + v * TV),
                                                          acc[i][v]);)
                    })
            })
            store_block(c + i0 * ldc + j0, ldc, acc, rows, cj, overwrite,
                        sb_gemm_bias_at(bias, i0, j0), sm, sn);
        }
    }
}

/* The short tile function: short_body in groups of sm rows by sn columns,
 * with kc a constant for the model's short reductions, 9 (conv1's 3 x 3
 * taps of one channel) and 10 (dense2's classes), so that their steps are
 * unrolled and A's offsets are immediates (a quarter faster in conv1's
 * forward pass); other step counts, and the baseline variant (whose fmaf
 * is a library call), pass kc at run time. (A constant for every kc up to
 * SB_GEMM_KS made each gemm_tile_<isa>.c take 10 times as long to compile.) */
#define SHORT(name, attr, sm, sn, unrolled)                                          \
    attr static void name(float *c, const float *a, ptrdiff_t ars, ptrdiff_t acs,    \
                          const float *b, ptrdiff_t ldc, int kc, int mv, int nv,     \
                          bool overwrite, sb_gemm_bias bias)                         \
    {                                                                                \
        SB_ASSERT(kc >= 1 && kc <= SB_GEMM_KS && mv <= SB_GEMM_MRS && nv <= NR);     \
        if (unrolled && kc == 9)                                                     \
            short_body(c, a, ars, acs, b, ldc, 9, mv, nv, overwrite, bias, sm, sn);  \
        else if (unrolled && kc == 10)                                               \
            short_body(c, a, ars, acs, b, ldc, 10, mv, nv, overwrite, bias, sm, sn); \
        else                                                                         \
            short_body(c, a, ars, acs, b, ldc, kc, mv, nv, overwrite, bias, sm, sn); \
    }

/* The tile functions of one instruction set, the panel rest, and their table. */
#define TILES(isa, attr, wmr, wsm, wsn, nsm, nsn, tsm, tsteps, ssm, ssn, sunrolled, rgp) \
    TILE(wide_cols_##isa, attr, wmr, NR, 1, wsm, wsn)                                    \
    TILE(wide_rows_##isa, attr, wmr, NR, ars, wsm, wsn)                                  \
    TILE_STRIDED_B(wide_strided_##isa, attr, wmr, wsm, wsn)                              \
    TILE(narrow_##isa, attr, MRN, NRN, ars, nsm, nsn)                                    \
    TALL(tall_##isa, attr, tsm, tsteps)                                                  \
    SHORT(short_##isa, attr, ssm, ssn, sunrolled)                                        \
    REST(rest_##isa, attr, wmr, rgp)                                                     \
    const sb_gemm_tiles sb_gemm_tiles_##isa = {wide_cols_##isa, wide_rows_##isa,         \
                                               narrow_##isa,    tall_##isa,              \
                                               short_##isa,     rest_##isa,              \
                                               wide_strided_##isa, tall_##isa##_strided, \
                                               wmr};

/* Blocks of the whole tile where the registers hold it (AVX-512: 8 x 48 in
 * 24 of 32 zmm, 16 x 16 in 16, 32 x 12 in 24), smaller where they do not.
 * AVX2 has 16 ymm: its wide tile is 24 rows (SB_GEMM_MR_AVX2) of 6 x 16
 * blocks, 12 accumulators, two B vectors and a broadcast, where 4 x 16
 * blocks had only the 8 accumulators that two FMA units of latency 4 keep
 * busy with nothing to spare (4 x 24 needs all 16 registers, and GCC 12
 * then reloads B for every row); narrow 4 x 16 in 8, tall 8 x 12 in 12.
 * The short tile's groups: AVX2's 4 rows x 16 columns in 8 accumulators,
 * AVX-512's 16 x 16 in 16 (with B's kc vectors in registers beside them),
 * the baseline's 4 x 24: rows that divide the model's 32 and 128 and the
 * tile's 48, and enough chains to cover two FMA units of latency 4. (AVX2's
 * 4 x 24 groups, 12 accumulators, left no register for B, which GCC 12 then
 * read from memory in every FMA: 16 loads a step for 12 FMAs, where 4 x 16
 * takes 6 for 8; dense2.bwd_data ran at 0.75 of OpenBLAS's speed.)
 * The panel rest: AVX-512's 4 panels of 8 rows (ymm) x 2 or 4 columns in 8
 * or 16 accumulators, AVX2's one panel of 24 rows in 6 or 12; the baseline
 * takes 4 panels too, so that every CPU's tests take both of REST's paths.
 * Unrolled counts up to 16 (FOR_UNROLLED); tall_cols picks 4, 8, 10 or 12
 * columns. */
_Static_assert(SB_GEMM_MR % 8 == 0 && SB_GEMM_MR <= ROWS_MAX && SB_GEMM_MR <= SB_GEMM_MR_MAX &&
                   SB_GEMM_MR_AVX2 % 24 == 0 &&
                   SB_GEMM_MR_AVX2 <= SB_GEMM_MR_MAX && MRN % 4 == 0 && MRN <= ROWS_MAX &&
                   SB_GEMM_MRS % 16 == 0 && SB_GEMM_MRS % 4 == 0 && NR % 16 == 0 && NR % 24 == 0 &&
                   NRT == 12 && NRN >= NRT,
               "whole blocks in the wide tiles (8 rows; 6 and 4 on AVX2), tall_cols' widths, "
               "whole groups in the short tile (16 x 16; 4 x 16 on AVX2, 4 x 24 on the baseline)");

#endif
