/* Copies for the packers of the GEMM core and of conv (im2col, col2im).
 *
 * Packing moves data and never computes, so how it is done cannot change a
 * bit of any result: the transpose uses GNU vector extensions (GCC >= 12,
 * clang), which compile to shuffles on every x86-64 level and to plain moves
 * elsewhere. The callers are multiversioned (SB_ISA_VARIANTS, or the
 * register tiles' per-ISA copies) and the helpers here always inlined into
 * them, so each copy has its own; a caller compiled once gets the
 * baseline moves. */
#ifndef SB_DATA_MOVE_H
#define SB_DATA_MOVE_H

#include <stddef.h>
#include <string.h>

#include "sb_common.h"   /* SB_ISA_VARIANTS, SB_ALWAYS_INLINE */

typedef float sb_v8f __attribute__((vector_size(32)));
typedef float sb_v16f __attribute__((vector_size(64)));
/* The same at any float's address: the transposes load and store through
 * these, one vector move each. (Through memcpy into a local vector, GCC 12
 * copies an AVX2 row onto the stack in two 16-byte halves and reads it back
 * whole, a store-forwarding stall per row.) */
typedef float sb_v8f_at __attribute__((vector_size(32), aligned(4), may_alias));
typedef float sb_v16f_at __attribute__((vector_size(64), aligned(4), may_alias));

/* An empty asm that the compiler must assume changes p: a loop stepping p
 * through it is no longer one the compiler turns into a memcpy or memset
 * call, which costs more than the short runs copied here. */
#if defined(__GNUC__)
#define SB_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define SB_OPAQUE(p) ((void)0)
#endif

/* d[0..n) = s[0..n) without a library call: eight floats a move, a run that
 * does not end on eight finishing with one overlapping move (the short runs
 * of an image row, the rows of a panel). */
SB_ALWAYS_INLINE void sb_copy_run(float *restrict d, const float *restrict s, int n)
{
    if (n < 8) {
        for (int i = 0; i < n; i++) {
            d[i] = s[i];
            SB_OPAQUE(d);
        }
        return;
    }
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(d + i, s + i, 8 * sizeof(float));
        SB_OPAQUE(d);
    }
    if (i < n)
        memcpy(d + n - 8, s + n - 8, 8 * sizeof(float));
}

/* d[0..n) = 0, as sb_copy_run */
SB_ALWAYS_INLINE void sb_zero_run(float *d, int n)
{
    for (int i = 0; i < n; i++) {
        d[i] = 0.0f;
        SB_OPAQUE(d);
    }
}

/* d[0..n) = 0 for n a multiple of 8, eight floats a move */
SB_ALWAYS_INLINE void sb_zero_vectors(float *d, int n)
{
    static const float zeros[8];
    for (int i = 0; i < n; i += 8) {
        memcpy(d + i, zeros, sizeof zeros);
        SB_OPAQUE(d);
    }
}

/* dst[j*ds + i] = row[i][j] for i, j in 0..7: three rounds of shuffles
 * (pairs, quads, halves) on eight rows held in registers. */
SB_ALWAYS_INLINE void sb_transpose8_rows(float *restrict dst, ptrdiff_t ds,
                                         const float *const row[8])
{
    sb_v8f r[8];
    for (int i = 0; i < 8; i++)
        r[i] = *(const sb_v8f_at *)row[i];
    sb_v8f t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; h++) {
            u[i + 2 * h] =
                __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            u[i + 2 * h + 1] =
                __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    /* u[0..3] hold columns (0,4), (1,5), (2,6), (3,7) of rows 0..3; u[4..7]
     * the same of rows 4..7 */
    for (int j = 0; j < 4; j++) {
        sb_v8f lo = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        sb_v8f hi = __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
        *(sb_v8f_at *)(dst + j * ds) = lo;
        *(sb_v8f_at *)(dst + (j + 4) * ds) = hi;
    }
}

/* dst[j*ds + i] = src[i*ss + j] for i, j in 0..7 */
SB_ALWAYS_INLINE void sb_transpose8(float *restrict dst, ptrdiff_t ds, const float *restrict src,
                                    ptrdiff_t ss)
{
    const float *row[8];
    for (int i = 0; i < 8; i++)
        row[i] = src + i * ss;
    sb_transpose8_rows(dst, ds, row);
}

/* dst[j*ds + i] = src[i*ss + j] for i in 0..7, j in 0..15: two 8 x 8
 * blocks side by side, in three rounds of shuffles on 16-float vectors (two
 * within 128-bit quarters, one across them). Where the vectors are
 * AVX-512's that is 24 shuffles and 8 half-extractions, where two
 * sb_transpose8 take 48 shuffles. */
SB_ALWAYS_INLINE void sb_transpose8x16(float *restrict dst, ptrdiff_t ds,
                                       const float *restrict src, ptrdiff_t ss)
{
    sb_v16f r[8], t[8], u[8];
    for (int i = 0; i < 8; i++)
        r[i] = *(const sb_v16f_at *)(src + i * ss);
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9,
                                       25, 12, 28, 13, 29);
        t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 18, 3, 19, 6, 22, 7, 23, 10,
                                           26, 11, 27, 14, 30, 15, 31);
    }
    /* u[4h + c], quarter q: column 4q + c of rows 4h..4h+3 */
    for (int h = 0; h < 8; h += 4)
        for (int e = 0; e < 2; e++) {
            u[h + 2 * e] = __builtin_shufflevector(t[h + e], t[h + e + 2], 0, 1, 16, 17, 4, 5,
                                                   20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
            u[h + 2 * e + 1] = __builtin_shufflevector(t[h + e], t[h + e + 2], 2, 3, 18, 19, 6,
                                                       7, 22, 23, 10, 11, 26, 27, 14, 15, 30,
                                                       31);
        }
    /* column 4q + c = quarter q of u[c] (rows 0..3), then of u[4 + c] */
    for (int c = 0; c < 4; c++) {
        sb_v16f lo = __builtin_shufflevector(u[c], u[4 + c], 0, 1, 2, 3, 16, 17, 18, 19, 4, 5,
                                             6, 7, 20, 21, 22, 23);
        sb_v16f hi = __builtin_shufflevector(u[c], u[4 + c], 8, 9, 10, 11, 24, 25, 26, 27, 12,
                                             13, 14, 15, 28, 29, 30, 31);
        sb_v8f col[4] = {
            __builtin_shufflevector(lo, lo, 0, 1, 2, 3, 4, 5, 6, 7),
            __builtin_shufflevector(lo, lo, 8, 9, 10, 11, 12, 13, 14, 15),
            __builtin_shufflevector(hi, hi, 0, 1, 2, 3, 4, 5, 6, 7),
            __builtin_shufflevector(hi, hi, 8, 9, 10, 11, 12, 13, 14, 15),
        };
        for (int q = 0; q < 4; q++)
            *(sb_v8f_at *)(dst + (4 * q + c) * ds) = col[q];
    }
}

#endif
