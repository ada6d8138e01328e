/* The register tile, compiled once per instruction set from one body.
 *
 * The project builds for baseline x86-64, where fmaf is a libm call; the
 * AVX-512 and AVX2 copies turn the same fmaf chains into vfmadd instructions.
 * The accumulators are a local array whose indices are all constant after
 * unrolling, so the compiler keeps them in registers. */
#include <math.h>

#include "gemm_tile.h"

#define MR SB_GEMM_MR
#define NR SB_GEMM_NR

#if defined(__GNUC__)
#define SB_INLINE static inline __attribute__((always_inline))
#else
#define SB_INLINE static inline
#endif

/* The tile as sm x sn blocks (constants after inlining), each block's
 * accumulators in registers for the whole chunk: one block is the whole tile
 * where the registers hold it (AVX-512: 24 of 32 zmm), smaller blocks where
 * they do not (AVX2: 4 x 24 in 12 of 16 ymm). A block wholly outside the
 * valid corner is skipped. Every element is the same fmaf chain whatever the
 * blocking. */
SB_INLINE void tile_body(float *restrict c, const float *restrict a,
                         const float *restrict b, ptrdiff_t ldc, int kc,
                         int mv, int nv, bool overwrite, int sm, int sn)
{
    for (int i0 = 0; i0 < mv; i0 += sm)
        for (int j0 = 0; j0 < nv; j0 += sn) {
            float acc[MR][NR];
            for (int i = 0; i < sm; i++)
                for (int j = 0; j < sn; j++)
                    acc[i][j] = 0.0f;
            for (int p = 0; p < kc; p++) {
                const float *ap = a + (ptrdiff_t)p * MR + i0;
                const float *bp = b + (ptrdiff_t)p * NR + j0;
#pragma GCC unroll 8
                for (int i = 0; i < sm; i++)
                    for (int j = 0; j < sn; j++)
                        acc[i][j] = fmaf(ap[i], bp[j], acc[i][j]);
            }
            float *cb = c + i0 * ldc + j0;
            if (mv - i0 >= sm && nv - j0 >= sn) {
                for (int i = 0; i < sm; i++) {
                    float *ci = cb + i * ldc;
                    if (overwrite)
                        for (int j = 0; j < sn; j++)
                            ci[j] = acc[i][j];
                    else
                        for (int j = 0; j < sn; j++)
                            ci[j] += acc[i][j];
                }
                continue;
            }
            int rows = mv - i0 < sm ? mv - i0 : sm, cols = nv - j0 < sn ? nv - j0 : sn;
            for (int i = 0; i < rows; i++) {
                float *ci = cb + i * ldc;
                for (int j = 0; j < cols; j++)
                    ci[j] = overwrite ? acc[i][j] : ci[j] + acc[i][j];
            }
        }
}

static void tile_generic(float *c, const float *a, const float *b,
                         ptrdiff_t ldc, int kc, int mv, int nv, bool overwrite)
{
    tile_body(c, a, b, ldc, kc, mv, nv, overwrite, MR, NR);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,fma")))
static void tile_avx512(float *c, const float *a, const float *b,
                        ptrdiff_t ldc, int kc, int mv, int nv, bool overwrite)
{
    tile_body(c, a, b, ldc, kc, mv, nv, overwrite, MR, NR);
}

__attribute__((target("avx2,fma")))
static void tile_avx2(float *c, const float *a, const float *b,
                      ptrdiff_t ldc, int kc, int mv, int nv, bool overwrite)
{
    tile_body(c, a, b, ldc, kc, mv, nv, overwrite, 4, 24);
}
#endif

int sb_gemm_tile_variants(sb_gemm_tile_fn *out[3])
{
    int n = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        out[n++] = tile_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        out[n++] = tile_avx2;
#endif
    out[n++] = tile_generic;
    return n;
}

sb_gemm_tile_fn *sb_gemm_tile_select(void)
{
    sb_gemm_tile_fn *all[3];
    sb_gemm_tile_variants(all);
    return all[0];
}
