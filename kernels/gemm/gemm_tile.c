/* Which variant of the register tiles a CPU runs, and which tile a product
 * takes. The tiles themselves: gemm_tile_body.h, compiled once per
 * instruction set in gemm_tile_<isa>.c. */
#include "sb_common.h"
#include "gemm_tile.h"

int sb_gemm_tiles_variants(const sb_gemm_tiles *out[3])
{
    int n = 0;
#if SB_GEMM_TILES_AVX512
    if (sb_isa_allows(SB_ISA_AVX512))
        out[n++] = &sb_gemm_tiles_avx512;
#endif
#if SB_GEMM_TILES_AVX2
    if (sb_isa_allows(SB_ISA_AVX2))
        out[n++] = &sb_gemm_tiles_avx2;
#endif
    out[n++] = &sb_gemm_tiles_generic;
    return n;
}

const sb_gemm_tiles *sb_gemm_tiles_select(void)
{
    const sb_gemm_tiles *all[3];
    sb_gemm_tiles_variants(all);
    return all[0];
}

sb_gemm_tile sb_gemm_tile_for(const sb_gemm_tiles *t, int m, int n, int k, ptrdiff_t ars,
                              ptrdiff_t acs)
{
    SB_ASSERT(ars == 1 || acs == 1);
    if (k <= SB_GEMM_KS && n > SB_GEMM_NRN)
        return (sb_gemm_tile){t->short_k, SB_GEMM_MRS, SB_GEMM_NR};
    if (n <= SB_GEMM_NRT && m > SB_GEMM_MRN)
        return (sb_gemm_tile){t->tall, SB_GEMM_MRT, SB_GEMM_NRN};
    if (n <= SB_GEMM_NRN)
        return (sb_gemm_tile){t->narrow, SB_GEMM_MRN, SB_GEMM_NRN};
    return (sb_gemm_tile){ars == 1 ? t->wide_cols : t->wide_rows, t->wide_mr, SB_GEMM_NR};
}
