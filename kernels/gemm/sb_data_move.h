/* Copies for the packers of the GEMM core and of conv (im2col, col2im).
 *
 * Packing moves data and never computes, so how it is done cannot change a
 * bit of any result: the transpose uses GNU vector extensions (GCC >= 12,
 * clang), which compile to shuffles on every x86-64 level and to plain moves
 * elsewhere. The callers are multiversioned with SB_DATA_MOVE_CLONES and the
 * helpers here always inlined into them, so each clone has its own copy. */
#ifndef SB_DATA_MOVE_H
#define SB_DATA_MOVE_H

#include <stddef.h>
#include <string.h>

/* Compile a data-moving function for AVX-512, AVX2 and the baseline, picked
 * at load time (an ifunc). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__INTEL_COMPILER)
#define SB_DATA_MOVE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SB_DATA_MOVE_CLONES
#endif

typedef float sb_v8f __attribute__((vector_size(32)));

#if defined(__GNUC__)
#define SB_DATA_MOVE_INLINE static inline __attribute__((always_inline))
#else
#define SB_DATA_MOVE_INLINE static inline
#endif

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
SB_DATA_MOVE_INLINE void sb_copy_run(float *restrict d, const float *restrict s, int n)
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
SB_DATA_MOVE_INLINE void sb_zero_run(float *d, int n)
{
    for (int i = 0; i < n; i++) {
        d[i] = 0.0f;
        SB_OPAQUE(d);
    }
}

/* dst[j*ds + i] = src[i*ss + j] for i, j in 0..7: three rounds of shuffles
 * (pairs, quads, halves) on eight rows held in registers. */
SB_DATA_MOVE_INLINE void sb_transpose8(float *restrict dst, ptrdiff_t ds, const float *restrict src,
                                 ptrdiff_t ss)
{
    sb_v8f r[8];
    for (int i = 0; i < 8; i++)
        memcpy(&r[i], src + i * ss, sizeof r[i]);
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
        memcpy(dst + j * ds, &lo, sizeof lo);
        memcpy(dst + (j + 4) * ds, &hi, sizeof hi);
    }
}

#endif
