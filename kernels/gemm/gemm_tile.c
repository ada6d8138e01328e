/* The register tile, compiled once per instruction set from one body.
 *
 * The project builds for baseline x86-64, where fmaf is a libm call; the
 * AVX-512 and AVX2 copies turn the same fmaf chains into vfmadd instructions.
 * The accumulators are a local array whose indices are all constant after
 * unrolling, so the compiler keeps the 12 x 32 tile in registers. */
#include <math.h>

#include "gemm_tile.h"

#define MR SB_GEMM_MR
#define NR SB_GEMM_NR

#if defined(__GNUC__)
#define SB_INLINE static inline __attribute__((always_inline))
#else
#define SB_INLINE static inline
#endif

SB_INLINE void tile_body(float *restrict c, const float *restrict a,
                         const float *restrict b, ptrdiff_t ldc, int kc,
                         int mv, int nv, bool overwrite)
{
    float acc[MR][NR];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++)
            acc[i][j] = 0.0f;
    for (int p = 0; p < kc; p++) {
        const float *ap = a + (ptrdiff_t)p * MR;
        const float *bp = b + (ptrdiff_t)p * NR;
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                acc[i][j] = fmaf(ap[i], bp[j], acc[i][j]);
    }
    if (mv == MR && nv == NR) {
        for (int i = 0; i < MR; i++) {
            float *ci = c + i * ldc;
            if (overwrite)
                for (int j = 0; j < NR; j++)
                    ci[j] = acc[i][j];
            else
                for (int j = 0; j < NR; j++)
                    ci[j] += acc[i][j];
        }
        return;
    }
    for (int i = 0; i < mv; i++) {
        float *ci = c + i * ldc;
        for (int j = 0; j < nv; j++)
            ci[j] = overwrite ? acc[i][j] : ci[j] + acc[i][j];
    }
}

static void tile_generic(float *c, const float *a, const float *b,
                         ptrdiff_t ldc, int kc, int mv, int nv, bool overwrite)
{
    tile_body(c, a, b, ldc, kc, mv, nv, overwrite);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,fma")))
static void tile_avx512(float *c, const float *a, const float *b,
                        ptrdiff_t ldc, int kc, int mv, int nv, bool overwrite)
{
    tile_body(c, a, b, ldc, kc, mv, nv, overwrite);
}

__attribute__((target("avx2,fma")))
static void tile_avx2(float *c, const float *a, const float *b,
                      ptrdiff_t ldc, int kc, int mv, int nv, bool overwrite)
{
    tile_body(c, a, b, ldc, kc, mv, nv, overwrite);
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
