/* The blocked GEMM core: packing, cache blocking, and the det and loose
 * ways of sharing the work between threads. */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sb_common.h"
#include "gemm/sb_gemm.h"
#include "gemm_tile.h"
#include "sb_data_move.h"

#define MR_MAX SB_GEMM_MR_MAX
#define NR SB_GEMM_NR
#define KC SB_GEMM_KC
#define MRN SB_GEMM_MRN
#define NRN SB_GEMM_NRN

/* Cache blocks: an MC x KC block of A stays in L2 while the tiles sweep a
 * KC x NC block of B. They only decide which tiles are computed when, never
 * an element's arithmetic, so they may change freely. */
enum { MC = 144, NC = 960 };
_Static_assert(MC % SB_GEMM_MR == 0 && MC % SB_GEMM_MR_AVX2 == 0 && NC % NR == 0 && NC % NRN == 0,
               "cache blocks hold whole tiles");

struct sb_gemm_work {
    int m, n, k;    /* the largest problem the buffers fit */
    float *a;       /* [MC/mr][KC][mr], mr the wide tile's rows (unused where A is
                       read in place) */
    float *b;       /* [NC/NR][KC][NR], or panels of NR then one [KC][NRN] (the rest);
                       the panels of B read in place left unused */
};

/* Up to this many rows of C, B by rows is read where it lies, not packed:
 * a packed panel serves every row tile of a cache block, and its copy pays
 * off only over many. Read in place, a panel's rows lie a row of B apart
 * (512 to 2048 bytes for the GPT's 128 to 512 columns), their lines in a
 * fraction of L1's sets. On a Zen 5 EPYC, det/OpenBLAS at 1 thread, at
 * 128 rows in place: gpt.proj.bwd_weights (128 x 128 x 1024) 1.11-1.15 ->
 * 1.22-1.24, dense1.fwd (128 x 128 x 9216) 0.94-1.03 -> 1.10-1.15 (the
 * AVX2 tiles: within 0.03 either way, dense1.fwd 0.89-0.93 -> 0.93-0.98);
 * at 512 rows and more it costs more than the copy (a 512 x 128 x 1024
 * product 1.10 -> 1.04, 1024 x 128 x 128 1.00 -> 0.98; AVX2 0.97 -> 0.93). */
#define B_IN_PLACE_MAX_ROWS 128
/* Up to this many rows of C, sb_gemm_det_direct_b_rows reads B in place.
 * A B that comes from memory once (conv's data gradient reads each image's
 * output gradient for one product) waits on memory in a packing pass
 * before any tile runs; read in place, a panel's lines come as its first
 * tile reads them and the next tiles find them in L1. On a Zen 4 EPYC at 1
 * thread, the product of each image of a batch in turn (best of 7, % of the
 * FMA peak, packed -> in place): 288 x 576 x 64 (conv2's) 80 -> 83-84 in
 * AVX-512 code, 79-80 -> 81-82 in AVX2's; 576 x 576 x 64 82-84 -> 84-85,
 * but 83 -> 78 in AVX2's; 1152 rows within the noise in AVX-512 code and
 * 2-6% slower in AVX2's. */
#define B_FRESH_IN_PLACE_MAX_ROWS 512
/* The widest block of columns whose wide tiles read A by rows in place
 * (det_serial). */
#define A_ROWS_IN_PLACE_MAX_COLS 512
/* Floats in a 64-byte cache line. */
#define FLOATS_PER_LINE 16
/* The L1 data caches of x86 cores (32 KB of 8 ways, 48 KB of 12): addresses
 * a way's bytes apart fall in the same set, which holds the fewest ways' lines. */
#define L1_WAY_BYTES 4096
#define L1_WAYS_MIN 8

static int min_int(int a, int b) { return a < b ? a : b; }
static int round_up(int x, int to) { return (x + to - 1) / to * to; }

sb_gemm_work *sb_gemm_work_new(int m, int n, int k)
{
    sb_gemm_work *w = malloc(sizeof *w);
    if (!w)
        return NULL;
    w->m = m, w->n = n, w->k = k;
    size_t kc = (size_t)min_int(KC, k);
    w->a = sb_floats_try((size_t)min_int(MC, round_up(m, MR_MAX)) * kc);
    w->b = sb_floats_try((size_t)min_int(NC, round_up(n, NR)) * kc);
    if (!w->a || !w->b) {
        sb_gemm_work_free(w);
        return NULL;
    }
    return w;
}

void sb_gemm_work_free(sb_gemm_work *w)
{
    if (!w)
        return;
    free(w->a);
    free(w->b);
    free(w);
}

/* A[0..mc)[0..kc) into panels of mr rows (a multiple of 8), p-major inside a
 * panel; rows past mc are zero. Row-major A is transposed 8 x 8 blocks at a
 * time; any other view (columns contiguous: AVX2's 24-row panels only,
 * sb_gemm_det_serial) is copied one column of A at a time, across all
 * panels (one pass along each row of the underlying matrix). */
SB_ALWAYS_INLINE void pack_a_panels(float *restrict dst, sb_matview a, int mc, int kc, int mr)
{
    if (a.cs != 1) {
        for (int p = 0; p < kc; p++)
            for (int i0 = 0; i0 < mc; i0 += mr) {
                float *d = dst + (ptrdiff_t)i0 * kc + (ptrdiff_t)p * mr;
                const float *s = a.p + i0 * a.rs + p * a.cs;
                int rows = mc - i0 < mr ? mc - i0 : mr;
                if (rows == mr && a.rs == 1) {
                    memcpy(d, s, (size_t)mr * sizeof(float));
                    continue;
                }
                for (int i = 0; i < mr; i++)
                    d[i] = i < rows ? s[i * a.rs] : 0.0f;
            }
        return;
    }
    for (int i0 = 0; i0 < mc; i0 += mr, dst += (ptrdiff_t)kc * mr)
        for (int i8 = 0; i8 < mr; i8 += 8) {   /* the panel's rows, eight at a time */
            int rows = mc - i0 - i8;
            rows = rows < 0 ? 0 : rows > 8 ? 8 : rows;
            const float *s = a.p + (i0 + i8) * a.rs;
            float *d = dst + i8;
            int p = 0;
            if (rows == 8)
                for (; p + 8 <= kc; p += 8)
                    sb_transpose8(d + (ptrdiff_t)p * mr, mr, s + p, a.rs);
            for (; p < kc; p++)
                for (int i = 0; i < 8; i++)
                    d[(ptrdiff_t)p * mr + i] = i < rows ? s[i * a.rs + p] : 0.0f;
        }
}

/* pack_a_panels with mr a constant in each copy (a copy of mr floats is
 * then a vector move, not a library call) */
SB_ISA_VARIANTS(pack_a, (float *restrict dst, sb_matview a, int mc, int kc, int mr),
                (dst, a, mc, kc, mr))
{
    if (mr == SB_GEMM_MR)
        pack_a_panels(dst, a, mc, kc, SB_GEMM_MR);
    else
        pack_a_panels(dst, a, mc, kc, SB_GEMM_MR_AVX2);
}

/* B[0..kc)[0..nc) into panels of nr columns, p-major inside a panel;
 * columns past nc are zero. Contiguous rows are copied; a transposed view
 * (contiguous columns) is transposed 8 x 8 blocks at a time. */
SB_ISA_VARIANTS(pack_b, (float *restrict dst, sb_matview b, int kc, int nc, int nr),
                (dst, b, kc, nc, nr))
{
    for (int j0 = 0; j0 < nc; j0 += nr) {
        int cols = nc - j0 < nr ? nc - j0 : nr;
        if (b.rs == 1 && b.cs != 1) {
            int j = 0;
            for (; j + 8 <= cols; j += 8) {
                const float *s = b.p + (j0 + j) * b.cs;
                int p = 0;
                for (; p + 8 <= kc; p += 8)
                    sb_transpose8(dst + (ptrdiff_t)p * nr + j, nr, s + p, b.cs);
                for (; p < kc; p++)
                    for (int jj = 0; jj < 8; jj++)
                        dst[(ptrdiff_t)p * nr + j + jj] = s[jj * b.cs + p];
            }
            for (; j < cols; j++) {
                const float *s = b.p + (j0 + j) * b.cs;
                for (int p = 0; p < kc; p++)
                    dst[(ptrdiff_t)p * nr + j] = s[p];
            }
            for (int p = 0; p < kc; p++)
                sb_zero_run(dst + (ptrdiff_t)p * nr + cols, nr - cols);
        } else {
            for (int p = 0; p < kc; p++) {
                float *d = dst + (ptrdiff_t)p * nr;
                const float *s = b.p + p * b.rs + j0 * b.cs;
                if (b.cs == 1) {
                    /* a short row (dense2's 10 of 16): the whole row zeroed in
                     * vectors, then the values over it, where zeroing the
                     * tail alone takes a store per float */
                    if (cols < nr)
                        sb_zero_vectors(d, nr);
                    sb_copy_run(d, s, cols);
                    continue;
                }
                for (int j = 0; j < nr; j++)
                    d[j] = j < cols ? s[j * b.cs] : 0.0f;
            }
        }
        dst += (ptrdiff_t)kc * nr;
    }
}

static sb_matview sub(sb_matview v, int i, int j)
{
    return (sb_matview){v.p + i * v.rs + j * v.cs, v.rs, v.cs};
}

/* C = its bias, or 0: a product over no steps */
static void store_bias_only(float *c, ptrdiff_t ldc, int m, int n, sb_gemm_bias bias)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c[i * ldc + j] = bias.p ? sb_gemm_bias_of(bias, i, j) : 0.0f;
}

/* One det_serial product: its operands, its tiles and how they read A. */
typedef struct det_product {
    float *c;
    sb_matview a, b;
    sb_gemm_work *w;
    ptrdiff_t ldc;
    int m, n, k;
    bool accumulate;
    sb_gemm_bias bias;
    const sb_gemm_tiles *tiles;
    int mr;             /* the wide tile's rows */
    bool a_in_place;    /* the wide tiles read A by columns where it lies */
    ptrdiff_t a_step;   /* from a step of A to the next, as the wide tiles read it */
} det_product;

/* A block of columns [jc, jc + nc) of C: the wide tiles' columns [jc, jc +
 * wide), those of B packed from jc + first_packed on, and the last few
 * columns by the tall tile or the panel rest. */
typedef struct column_block {
    int jc, nc, wide, first_packed;
    bool tall_rest, panel_rest, a_rows_in_place;
} column_block;

/* A summation chunk: steps [pc, pc + kc) of the product. */
typedef struct chunk {
    int pc, kc;
    bool overwrite;     /* the chunk's tiles write C (the first, not accumulating) */
    float *b_rest;      /* the packed panel of the rest columns */
} chunk;

static det_product det_product_of(float *c, sb_matview a, sb_matview b, sb_gemm_work *w,
                                  ptrdiff_t ldc, int m, int n, int k, bool accumulate,
                                  sb_gemm_bias bias)
{
    const sb_gemm_tiles *tiles = sb_gemm_tiles_select();
    const int mr = tiles->wide_mr;
    /* An 8-row tile reads A by columns (a weight gradient's x^T) in place: a
     * step's 8 rows are 32 contiguous bytes, as in a packed panel, and the
     * copy took a fifth of the time of a product of 128 rows (the GPT's
     * proj, 128 x 128 x 1024). AVX2's 24 rows span two cache lines a step;
     * there the copy is faster (dense1's 9216 rows: 0.85 of the time). */
    const bool a_in_place = a.rs == 1 && mr == SB_GEMM_MR;
    return (det_product){c, a, b, w, ldc, m, n, k, accumulate, bias, tiles, mr,
                         a_in_place, a_in_place ? a.cs : mr};
}

/* In a product of few rows B by rows is read in place by the wide tiles,
 * where its rows are whole cache lines apart and the columns their blocks
 * compute lie within B's rows (all panels but a last one whose width is not
 * a whole number of blocks, which is packed). Rows of another length
 * (gpt.head's 98 outputs) put half of AVX2's loads across two lines: packed,
 * gpt.head.bwd_weights ran 2-4% faster in AVX2 code on a Zen 5 EPYC, and as
 * fast in AVX-512's. The first packed column of the wide ones. */
static int first_packed_column(const det_product *p, int wide)
{
    if (p->b.cs != 1 || p->m > B_IN_PLACE_MAX_ROWS || p->b.rs % FLOATS_PER_LINE != 0)
        return 0;
    return wide % SB_GEMM_BLOCK_COLS == 0 ? wide : wide / NR * NR;
}

/* The wide tiles read A by rows in place too, in a block of few columns
 * (each copy of A serves a block), where B is packed (wide_rows reads packed
 * panels only) and no panel rest reads A's packed panels: a step's
 * broadcasts come from the tile's rows as they would from a panel. On a Zen
 * 5 EPYC, against packing A, in the GPT's products of 128 columns (the copy
 * 4% of the time), det/OpenBLAS at 1 thread: the 8-row tiles (3 alternating
 * runs of tools/bench) gpt.head.bwd_data 0.99-1.00 -> 1.06, qkv.bwd_data
 * 0.99-1.01 -> 1.06-1.08, proj.fwd 0.99 -> 1.03-1.04, fcproj.fwd 0.99-1.00
 * -> 1.05-1.11; AVX2's 6 x 16 blocks against OpenBLAS's Haswell core (the
 * products alone, 3 runs of 5 alternating rounds) head.bwd_data 0.96-0.98 ->
 * 1.00, proj.fwd 0.96-0.98 -> 0.98-1.00, proj.bwd_data 0.98 -> 1.00-1.01,
 * qkv.bwd_data 0.99 -> 1.01-1.02, fcproj.fwd 0.99 -> 1.02-1.03, fc.bwd_data
 * 0.97-1.00 -> 1.02-1.03. Of 384 and 512 columns (qkv.fwd, fc.fwd) within
 * the noise on both; of 960 (dense1.bwd_data's blocks, where a copy serves
 * 960 columns) no gain on either (8-row: 0.93-1.00 against 0.98-1.05 in 4
 * alternating runs; AVX2: 0.97-0.99 against 0.98-0.99): they pack. */
static bool a_rows_in_place(const det_product *p, const column_block *cb)
{
    return p->a.cs == 1 && !p->a_in_place && cb->nc <= A_ROWS_IN_PLACE_MAX_COLS &&
           cb->first_packed == 0 && !cb->panel_rest;
}

/* A last panel of few columns (gpt.head's 98 is 48 + 48 + 2), where a wide
 * block would compute 16 columns for the 2, has its vectors run down A's
 * rows instead: where A's columns lie contiguous, the tall tile reads them in
 * place for at most SB_GEMM_NRT columns (edge rows through its copy); where
 * its rows do, the panel rest reads the wide tiles' packed panels for at
 * most SB_GEMM_NRP. Its B panel is packed SB_GEMM_NRN wide after the
 * others. */
static column_block column_block_at(const det_product *p, int jc)
{
    column_block cb = {.jc = jc, .nc = min_int(NC, p->n - jc)};
    const int rest = cb.nc % NR;
    cb.tall_rest = rest > 0 && p->a.rs == 1 && rest <= SB_GEMM_NRT;
    cb.panel_rest = rest > 0 && p->a.rs != 1 && rest <= SB_GEMM_NRP;
    cb.wide = cb.tall_rest || cb.panel_rest ? cb.nc - rest : cb.nc;
    cb.first_packed = first_packed_column(p, cb.wide);
    cb.a_rows_in_place = a_rows_in_place(p, &cb);
    return cb;
}

/* The chunk's panels of B: the wide columns from first_packed NR wide, the
 * rest's after them NRN wide. */
static void pack_b_chunk(const det_product *p, const column_block *cb, const chunk *ch)
{
    pack_b(p->w->b + (ptrdiff_t)cb->first_packed * ch->kc,
           sub(p->b, ch->pc, cb->jc + cb->first_packed), ch->kc, cb->wide - cb->first_packed, NR);
    if (cb->wide < cb->nc)
        pack_b(ch->b_rest, sub(p->b, ch->pc, cb->jc + cb->wide), ch->kc, cb->nc - cb->wide, NRN);
}

/* The wide tile at rows ic + ir, columns jc + jr of the block over the chunk. */
static void wide_tile(const det_product *p, const column_block *cb, const chunk *ch, int ic,
                      int mc, int ir, int jr)
{
    const bool packed = jr >= cb->first_packed;
    const float *b_tiles = packed ? p->w->b + (ptrdiff_t)jr * ch->kc
                                  : sub(p->b, ch->pc, cb->jc + jr).p;
    const ptrdiff_t ldb = packed ? NR : p->b.rs;
    float *c_tile = p->c + (ic + ir) * p->ldc + cb->jc + jr;
    const int mv = min_int(p->mr, mc - ir), nv = min_int(NR, cb->wide - jr);
    const sb_gemm_bias tile_bias = sb_gemm_bias_at(p->bias, ic + ir, cb->jc + jr);
    if (cb->a_rows_in_place) {
        p->tiles->wide_rows(c_tile, sub(p->a, ic + ir, ch->pc).p, p->a.rs, 1, b_tiles, p->ldc,
                            ch->kc, mv, nv, ch->overwrite, tile_bias);
    } else {
        const float *a_tiles = p->a_in_place ? sub(p->a, ic, ch->pc).p : p->w->a;
        const ptrdiff_t a_tile = p->a_in_place ? 1 : ch->kc; /* from a row of A to the next */
        p->tiles->wide_strided(c_tile, a_tiles + ir * a_tile, p->a_step, !p->a_in_place,
                               b_tiles, ldb, p->ldc, ch->kc, mv, nv, ch->overwrite, tile_bias);
    }
}

/* The wide tiles of rows [ic, ic + mc) of the block over the chunk: panel
 * by panel, each panel's row tiles in turn while it is in L1. But where C's
 * rows lie a whole number of L1 ways apart (rows of 1024 floats or a
 * multiple: power-of-two layer widths, dense1's 9216), the lines of a
 * column of tiles all fall in the same few sets of L1 and push each other
 * out; there, if a tile's rows fit in a set (AVX-512's 8), the tiles go row
 * by row, each row of tiles writing whole runs of lines. On a Zen 4 EPYC,
 * both orders in one process, 60 calls each, medians of % of the FMA peak
 * at 1 / 2 threads: dense1.bwd_data (128 x 9216 x 128) 76-84 -> 78-86 /
 * 84-85 -> 87; 256 x 2048 x 512 (B transposed) 89-91 -> 90-91 / 85 -> 89;
 * 1024^3 and 512 x 4096 x 256 up to 1 point. Row by row ran up to a point
 * slower where rows do not alias (1024 x 1000 x 1024, 512 x 4000 x 256) and
 * up to two for the GPT's qkv at 2 threads, and 1-2 points slower with
 * AVX2's tiles of 24 rows on every product above. Never a change to an
 * element's arithmetic. */
static bool tiles_by_rows(const det_product *p)
{
    return (size_t)p->ldc * sizeof(float) % L1_WAY_BYTES == 0 && p->mr <= L1_WAYS_MIN;
}

static void wide_tiles(const det_product *p, const column_block *cb, const chunk *ch, int ic,
                       int mc)
{
    if (tiles_by_rows(p)) {
        for (int ir = 0; ir < mc; ir += p->mr)
            for (int jr = 0; jr < cb->wide; jr += NR)
                wide_tile(p, cb, ch, ic, mc, ir, jr);
    } else {
        for (int jr = 0; jr < cb->wide; jr += NR)
            for (int ir = 0; ir < mc; ir += p->mr)
                wide_tile(p, cb, ch, ic, mc, ir, jr);
    }
}

/* Rows [ic, ic + MC) of the block over the chunk: A packed where the tiles
 * read it packed, the wide tiles, then the panel rest. */
static void row_block(const det_product *p, const column_block *cb, const chunk *ch, int ic)
{
    const int mc = min_int(MC, p->m - ic);
    if (!p->a_in_place && !cb->a_rows_in_place && (cb->wide > 0 || cb->panel_rest))
        pack_a(p->w->a, sub(p->a, ic, ch->pc), mc, ch->kc, p->mr);
    wide_tiles(p, cb, ch, ic, mc);
    if (cb->panel_rest)
        p->tiles->rest(p->c + ic * p->ldc + cb->jc + cb->wide, p->w->a, ch->kc, mc, ch->b_rest,
                       p->ldc, cb->nc - cb->wide, ch->overwrite,
                       sb_gemm_bias_at(p->bias, ic, cb->jc + cb->wide));
}

/* The tall rest reads A in place (never AVX2's packed copy): all of M in one
 * pass, whole 32-row tiles but the last. */
static void tall_rest(const det_product *p, const column_block *cb, const chunk *ch)
{
    const int j = cb->jc + cb->wide;
    for (int i = 0; i < p->m; i += SB_GEMM_MRT)
        p->tiles->tall(p->c + i * p->ldc + j, sub(p->a, i, ch->pc).p, 1, p->a.cs, ch->b_rest,
                       p->ldc, ch->kc, min_int(SB_GEMM_MRT, p->m - i), cb->nc - cb->wide,
                       ch->overwrite, sb_gemm_bias_at(p->bias, i, j));
}

/* The columns of cb over the whole sum: pc walks the summation chunks in
 * order, the det definition. */
static void column_block_run(const det_product *p, const column_block *cb)
{
    for (int pc = 0; pc < p->k; pc += KC) {
        const int kc = min_int(KC, p->k - pc);
        const chunk ch = {pc, kc, pc == 0 && !p->accumulate, p->w->b + (ptrdiff_t)cb->wide * kc};
        pack_b_chunk(p, cb, &ch);
        for (int ic = 0; ic < p->m; ic += MC)
            row_block(p, cb, &ch, ic);
        if (cb->tall_rest)
            tall_rest(p, cb, &ch);
    }
}

/* sb_gemm_det_serial onto a bias (accumulate false) */
static void det_serial(float *c, sb_matview a, sb_matview b, sb_gemm_work *w, ptrdiff_t ldc,
                       int m, int n, int k, bool accumulate, sb_gemm_bias bias)
{
    SB_ASSERT(m >= 0 && n >= 0 && k >= 0 && ldc >= n && !(accumulate && bias.p));
    SB_ASSERT(m <= w->m && n <= w->n && k <= w->k);
    if (k == 0 && !accumulate)
        store_bias_only(c, ldc, m, n, bias);
    const det_product p = det_product_of(c, a, b, w, ldc, m, n, k, accumulate, bias);
    for (int jc = 0; jc < n; jc += NC) {
        const column_block cb = column_block_at(&p, jc);
        column_block_run(&p, &cb);
    }
}

void sb_gemm_det_serial(float *c, sb_matview a, sb_matview b, sb_gemm_work *w,
                        ptrdiff_t ldc, int m, int n, int k, bool accumulate)
{
    det_serial(c, a, b, w, ldc, m, n, k, accumulate, SB_GEMM_NO_BIAS);
}

/* Split an mt x nt grid of tiles over `threads` rectangles (tm x tn, tm*tn <=
 * threads): the fewest tiles on the busiest thread, then the least packing,
 * then, where B (k x n) is no larger than A (m x k), the most row blocks: a
 * thread then reads only its own rows of A and writes whole rows of C, as
 * the row-parallel ops before and after a dense layer share its rows out
 * (the char GPT's qkv, 1024 x 384 at 2 threads, was split by columns: each
 * thread read all of A, half of it from the other core's cache); a wider
 * B keeps the column split, each thread packing only its part of it (the
 * seed model's dense1.bwd_data, 128 x 9216). Only the work split depends
 * on the thread count, not the arithmetic. */
static void grid_choose(int mt, int nt, int threads, bool rows_on_tie, int *tm, int *tn)
{
    long best = -1;
    for (int a = 1; a <= threads && a <= mt; a++) {
        int bcols = min_int(threads / a, nt);
        long busiest = (long)((mt + a - 1) / a) * ((nt + bcols - 1) / bcols);
        long cost = busiest * 1000 + a + bcols;
        if (best < 0 || cost < best || (cost == best && rows_on_tie)) {
            best = cost;
            *tm = a;
            *tn = bcols;
        }
    }
}

/* Threads take rectangles of C, each running the serial GEMM over all of K
 * with its own packing. */
static void det_split_output(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m,
                             int n, int k, bool accumulate, sb_gemm_bias bias)
{
    const int mr = sb_gemm_tiles_select()->wide_mr;
    int mt = (m + mr - 1) / mr, nt = (n + NR - 1) / NR;
#pragma omp parallel
    {
        int tm = 1, tn = 1;
        grid_choose(mt, nt, omp_get_num_threads(), n <= m, &tm, &tn);
        int t = omp_get_thread_num();
        if (t < tm * tn) {
            int ti = t / tn, tj = t % tn;
            int i0 = mt * ti / tm * mr, i1 = min_int(m, mt * (ti + 1) / tm * mr);
            int j0 = nt * tj / tn * NR, j1 = min_int(n, nt * (tj + 1) / tn * NR);
            if (i0 < i1 && j0 < j1) {
                sb_gemm_work *w = sb_gemm_work_new(i1 - i0, j1 - j0, k);
                SB_ASSERT(w != NULL);
                det_serial(c + i0 * ldc + j0, sub(a, i0, 0), sub(b, 0, j0), w, ldc, i1 - i0,
                           j1 - j0, k, accumulate, sb_gemm_bias_at(bias, i0, j0));
                sb_gemm_work_free(w);
            }
        }
    }
}

/* The buffer of det_split_chunks' chunk sums, kept from call to call (one
 * for the process, taken by a call and given back after it, so that calls
 * from several threads each get their own). Allocated afresh each call, its
 * pages were mapped and zeroed again whenever the allocator had handed them
 * back to the system: dense1.fwd at 2 threads, run after 1-thread calls,
 * took about 300 page faults a call and ran at 0.66 of loose's speed (Zen 4
 * EPYC); kept, none. It is the last one given back (calls that overlap
 * each make one; the one displaced is freed), at most SPLIT_CHUNKS_MAX_FLOATS
 * (64 MB), and stays allocated for the life of the process. */
typedef struct chunk_sums {
    float *p;
    size_t floats;
} chunk_sums;

static _Atomic(chunk_sums *) idle_chunk_sums;

static chunk_sums *chunk_sums_take(size_t floats)
{
    chunk_sums *s = atomic_exchange(&idle_chunk_sums, NULL);
    if (s != NULL && s->floats >= floats)
        return s;
    if (s == NULL) {
        s = malloc(sizeof *s);
        SB_ASSERT(s != NULL);
    } else {
        free(s->p);
    }
    s->p = sb_floats_new(floats);
    s->floats = floats;
    return s;
}

static void chunk_sums_give_back(chunk_sums *s)
{
    chunk_sums *displaced = atomic_exchange(&idle_chunk_sums, s);
    if (displaced != NULL) {
        free(displaced->p);
        free(displaced);
    }
}

/* Threads take whole summation chunks, a contiguous run each. The first
 * thread runs the serial GEMM over its run straight into C (C = s_0 or
 * C + s_0, then C + s_1, ...); every other chunk's sum s_j (its own fmaf
 * chains from +0, sb_gemm.h) goes to a buffer of its own, and after the
 * first thread is done those sums enter C in chunk order: the det
 * definition, whatever the runs. For an output no larger than K either way
 * (dense1.fwd: 128 x 128 over 9216; the char GPT's weight gradients, up to
 * 128 x 512 or 512 x 128 over its 1024 rows), where splitting C would have
 * every thread pack all of the long operand, and read all the rows the ops
 * before it left in each thread's cache by halves. */
static void det_split_chunks(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m,
                             int n, int k, bool accumulate, sb_gemm_bias bias)
{
    int chunks = (k + KC - 1) / KC;
    size_t mn = (size_t)m * (size_t)n;
    chunk_sums *kept = chunk_sums_take(mn * (size_t)chunks);
    float *sums = kept->p;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        int j0 = (int)((long)chunks * t / nth), j1 = (int)((long)chunks * (t + 1) / nth);
        int first_run = (int)((long)chunks / nth); /* chunks [0, first_run): thread 0's */
        int k0 = min_int(k, j1 * KC);
        sb_gemm_work *w = sb_gemm_work_new(m, n, t == 0 ? k0 : min_int(KC, k));
        SB_ASSERT(w != NULL);
        if (t == 0)
            det_serial(c, a, b, w, ldc, m, n, k0, accumulate, bias);
        else
            for (int j = j0; j < j1; j++)
                sb_gemm_det_serial(sums + mn * (size_t)j, sub(a, 0, j * KC), sub(b, j * KC, 0),
                                   w, n, m, n, min_int(KC, k - j * KC), false);
        sb_gemm_work_free(w);
#pragma omp barrier
#pragma omp for schedule(static)
        for (int i = 0; i < m; i++) {
            float *ci = c + i * ldc;
            for (int j = first_run; j < chunks; j++) {
                const float *sj = sums + mn * (size_t)j + (size_t)i * (size_t)n;
                for (int jj = 0; jj < n; jj++)
                    ci[jj] += sj[jj];
            }
        }
    }
    chunk_sums_give_back(kept);
}

/* Below this many multiply-adds waking a thread team costs more than the
 * product (dense2: 128 x 10 x 128). */
#define PARALLEL_MIN_MACS (1L << 21)
/* The largest B panel a small product keeps on the stack (16 KiB). */
#define SMALL_B_FLOATS 4096
/* The most chunk sums det_split_chunks keeps (64 MB). */
#define SPLIT_CHUNKS_MAX_FLOATS (1L << 24)

/* The tall tile reads B by rows where it lies when its rows hold just the
 * columns it computes (dense2's 10 classes, in its forward pass and its
 * weight gradient): each of its row tiles runs the chunks in order, as on
 * the direct path. Packing B's 128 rows of 10 into a panel of 16 took a
 * twentieth of dense2.fwd (128 x 10 x 128) on a Zen 4 EPYC. False (nothing
 * done) for any other product. */
static bool tall_b_in_place(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m, int n,
                            int k, bool accumulate, sb_gemm_bias bias)
{
    const sb_gemm_tiles *tiles = sb_gemm_tiles_select();
    if (k == 0 || b.cs != 1 || sb_gemm_tall_reads(n) != n ||
        sb_gemm_tile_for(tiles, m, n, k, a.rs, a.cs).fn != tiles->tall)
        return false;
    for (int ir = 0; ir < m; ir += SB_GEMM_MRT)
        for (int pc = 0; pc < k; pc += KC)
            tiles->tall_strided(c + ir * ldc, a.p + ir * a.rs + pc * a.cs, a.rs, a.cs,
                                b.p + pc * b.rs, b.rs, ldc, min_int(KC, k - pc),
                                min_int(SB_GEMM_MRT, m - ir), n, pc == 0 && !accumulate,
                                sb_gemm_bias_at(bias, ir, 0));
    return true;
}

static void det(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m, int n, int k,
                bool accumulate, sb_gemm_bias bias)
{
    if (m == 0 || n == 0)
        return;
    long macs = (long)m * n * (k > 0 ? k : 1);
    if (macs < PARALLEL_MIN_MACS && (a.rs == 1 || a.cs == 1)) {
        /* serial, A read in place: packing A would cost as much as the
         * product; so would allocating a small B panel (dense2's is 8 KiB) */
        if (tall_b_in_place(c, a, b, ldc, m, n, k, accumulate, bias))
            return;
        _Alignas(64) float b_stack[SMALL_B_FLOATS];
        size_t b_floats = sb_gemm_b_buf_floats(n, k);
        float *b_buf = b_floats <= SMALL_B_FLOATS ? b_stack : sb_floats_new(b_floats);
        sb_gemm_det_direct(c, a, (sb_gemm_b){sb_gemm_pack_b_view, &b}, b_buf, ldc, m, n, k,
                           accumulate, bias);
        if (b_buf != b_stack)
            free(b_buf);
        return;
    }
    int threads = omp_get_max_threads(), chunks = (k + KC - 1) / KC;
    if (threads > 1 && chunks >= threads && k >= (m > n ? m : n) &&
        (long)m * n * chunks <= SPLIT_CHUNKS_MAX_FLOATS)
        det_split_chunks(c, a, b, ldc, m, n, k, accumulate, bias);
    else
        det_split_output(c, a, b, ldc, m, n, k, accumulate, bias);
}

void sb_gemm_det(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m, int n, int k,
                 bool accumulate)
{
    det(c, a, b, ldc, m, n, k, accumulate, SB_GEMM_NO_BIAS);
}

void sb_gemm_det_biased(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m, int n,
                        int k, sb_gemm_bias bias)
{
    det(c, a, b, ldc, m, n, k, false, bias);
}

void sb_gemm_pack_b_view(float *dst, const void *src, int p0, int kc, int j0, int nc, int nr)
{
    pack_b(dst, sub(*(const sb_matview *)src, p0, j0), kc, nc, nr);
}

size_t sb_gemm_b_buf_floats(int n, int k)
{
    int nr = n <= NRN ? NRN : NR;   /* the panel width sb_gemm_tile_for picks */
    return (size_t)min_int(NC, round_up(n, nr)) * (size_t)min_int(KC, k);
}

/* The direct path walks a block of columns in groups: a group's panels are
 * packed over a run of chunks, then each of its row tiles runs those chunks
 * in order. Where the sum has more than one chunk and one panel over all of
 * them fits the buffer (conv2's forward pass: 288 steps, two chunks, 55 KB;
 * its filter gradient: 576 steps, three), a group is one panel over every
 * chunk: a tile's C is added into by the next chunk while still in L1, and
 * the panel, packed just before its tiles read it, is still in L2 (the whole
 * 576 columns of a chunk took 590 KB). Else a group is the whole block over
 * one chunk. Either way each element's chunks enter C in order. On a Zen 4
 * EPYC at 1 thread (CPU time, 8 interleaved rounds, batch 128, load 14-15)
 * conv2's forward pass ran 1.017 [0.965 1.070] times as fast, its filter
 * gradient 1.010 [0.923 1.070]; its data gradient, one chunk, 0.993 [0.950
 * 1.023] by panel, so it stays by chunk. */
void sb_gemm_det_direct(float *c, sb_matview a, sb_gemm_b b, float *b_buf, ptrdiff_t ldc,
                        int m, int n, int k, bool accumulate, sb_gemm_bias bias)
{
    SB_ASSERT(m >= 0 && n >= 0 && k >= 0 && ldc >= n && !(accumulate && bias.p));
    if (k == 0 && !accumulate)
        store_bias_only(c, ldc, m, n, bias);
    sb_gemm_tile t = sb_gemm_tile_for(sb_gemm_tiles_select(), m, n, k, a.rs, a.cs);
    const int mr = t.rows, nr = t.width;
    const bool by_panel = k > KC && (size_t)k * (size_t)nr <= sb_gemm_b_buf_floats(n, k);
    const int group_steps = by_panel ? round_up(k, KC) : KC;
    for (int jc = 0; jc < n; jc += NC) {
        const int nc = min_int(NC, n - jc);
        for (int jg = jc; jg < jc + nc; jg += by_panel ? nr : nc) {
            const int ng = min_int(by_panel ? nr : nc, jc + nc - jg), width = round_up(ng, nr);
            for (int pg = 0; pg < k; pg += group_steps) {
                const int kg = min_int(group_steps, k - pg);
                /* chunk pc's panels at b_buf + (pc - pg) width */
                for (int pc = pg; pc < pg + kg; pc += KC)
                    b.pack(b_buf + (ptrdiff_t)(pc - pg) * width, b.src, pc,
                           min_int(KC, pg + kg - pc), jg, ng, nr);
                for (int jr = 0; jr < ng; jr += nr)
                    for (int ir = 0; ir < m; ir += mr)
                        for (int pc = pg; pc < pg + kg; pc += KC) {
                            const int kc = min_int(KC, pg + kg - pc);
                            t.fn(c + ir * ldc + jg + jr, a.p + ir * a.rs + pc * a.cs, a.rs,
                                 a.cs, b_buf + (ptrdiff_t)(pc - pg) * width + (ptrdiff_t)jr * kc,
                                 ldc, kc, min_int(mr, m - ir), min_int(nr, ng - jr),
                                 pc == 0 && !accumulate, sb_gemm_bias_at(bias, ir, jg + jr));
                        }
            }
        }
    }
}

/* B by rows read where it lies (sb_gemm_det_direct_b_rows): the wide tile
 * on A by columns takes B's rows ldb floats apart, a panel at a time, each
 * tile over its chunks in order while its C stays in L1. */
static bool b_rows_readable(sb_matview a, sb_matview b, const sb_gemm_tiles *t, int m, int n,
                            int k)
{
    return a.rs == 1 && b.cs == 1 && b.rs % FLOATS_PER_LINE == 0 &&
           n % SB_GEMM_BLOCK_COLS == 0 && m <= B_FRESH_IN_PLACE_MAX_ROWS &&
           sb_gemm_tile_for(t, m, n, k, a.rs, a.cs).fn == t->wide_cols;
}

/* Row tile `tile` of `tiles` asks for its share of the lines of B's next
 * panel (columns [j, j + cols), all k rows), so that the panel comes while
 * the current one's tiles run: read in place from memory, the panel's
 * first tile otherwise waits for each of its lines. On a Zen 4 EPYC at 1
 * thread, conv2's data gradient (the batch's 128 products and their
 * col2im): 76.9-77.2 -> 78.1-78.3% of the FMA peak, the products alone
 * 86-86.4 -> 87.4-87.8%. */
static void prefetch_b_share(sb_matview b, int k, int j, int cols, int tile, int tiles)
{
    const int p0 = (int)((long)k * tile / tiles), p1 = (int)((long)k * (tile + 1) / tiles);
    for (int p = p0; p < p1; p++)
        for (int jj = 0; jj < cols; jj += FLOATS_PER_LINE)
            __builtin_prefetch(b.p + p * b.rs + j + jj, 0, 3);
}

void sb_gemm_det_direct_b_rows(float *c, sb_matview a, sb_matview b, float *b_buf,
                               ptrdiff_t ldc, int m, int n, int k, bool accumulate)
{
    const sb_gemm_tiles *t = sb_gemm_tiles_select();
    if (!b_rows_readable(a, b, t, m, n, k)) {
        sb_gemm_det_direct(c, a, (sb_gemm_b){sb_gemm_pack_b_view, &b}, b_buf, ldc, m, n, k,
                           accumulate, SB_GEMM_NO_BIAS);
        return;
    }
    const int mr = t->wide_mr, row_tiles = (m + mr - 1) / mr;
    for (int jr = 0; jr < n; jr += NR)
        for (int ir = 0; ir < m; ir += mr) {
            if (jr + NR < n)
                prefetch_b_share(b, k, jr + NR, min_int(NR, n - jr - NR), ir / mr, row_tiles);
            for (int pc = 0; pc < k; pc += KC)
                t->wide_strided(c + ir * ldc + jr, a.p + ir + pc * a.cs, a.cs, false,
                                b.p + pc * b.rs + jr, b.rs, ldc, min_int(KC, k - pc),
                                min_int(mr, m - ir), min_int(NR, n - jr), pc == 0 && !accumulate,
                                SB_GEMM_NO_BIAS);
        }
}

/* From this many rows a loose product over a batch gives each thread a
 * block of rows rather than a slice of K: a tall product, where every
 * thread of a large node still gets a few hundred rows, partitioned over M
 * the way BLAS libraries thread one. */
#define LOOSE_TALL_ROWS 2048

/* Rows [i0, i1) of C (+)= the sum of `parts` partial products of m x n,
 * added in part order. */
static void loose_combine(float *c, ptrdiff_t ldc, const float *part, int parts, int m, int n,
                          int i0, int i1, bool accumulate)
{
    size_t mn = (size_t)m * (size_t)n;
    for (int i = i0; i < i1; i++)
        for (int j = 0; j < n; j++) {
            float s = accumulate ? c[i * ldc + j] : 0.0f;
            for (int u = 0; u < parts; u++)
                s += part[mn * (size_t)u + (size_t)i * (size_t)n + (size_t)j];
            c[i * ldc + j] = s;
        }
}

void sb_gemm_loose(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m,
                   int n, int k, bool accumulate)
{
    /* Fewer rows than a register tile: a matrix-vector product, which runs
     * serially over all of K the way a BLAS sends a one-row GEMM to its
     * GEMV (no thread split): so a sample's loose bits follow the size of
     * the batch it is in, as a served model's do. */
    if (m < SB_GEMM_MR) {
        sb_gemm_work *w = sb_gemm_work_new(m, n, k);
        SB_ASSERT(w != NULL);
        sb_gemm_det_serial(c, a, b, w, ldc, m, n, k, accumulate);
        sb_gemm_work_free(w);
        return;
    }
    /* split-K: thread t multiplies its slice of the reduction into its own
     * partial product; the partials are then added in thread order. */
    int threads = omp_get_max_threads();
    size_t mn = (size_t)m * (size_t)n;
    float *part = sb_floats_try(mn * (size_t)threads);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        int k0 = (int)((long)k * t / nth), k1 = (int)((long)k * (t + 1) / nth);
        sb_gemm_work *w = sb_gemm_work_new(m, n, k1 - k0);
        SB_ASSERT(w != NULL);
        sb_gemm_det_serial(part + mn * (size_t)t, sub(a, 0, k0), sub(b, k0, 0), w,
                           n, m, n, k1 - k0, false);
        sb_gemm_work_free(w);
#pragma omp barrier
        int i0 = (int)((long)m * t / nth), i1 = (int)((long)m * (t + 1) / nth);
        loose_combine(c, ldc, part, nth, m, n, i0, i1, accumulate);
    }
    free(part);
}

void sb_gemm_loose_batch(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m,
                         int n, int k, bool accumulate)
{
    if (m < LOOSE_TALL_ROWS) {
        sb_gemm_loose(c, a, b, ldc, m, n, k, accumulate);
        return;
    }
    /* a tall product: thread t's rows over all of K into one partial
     * product, then added to C. On one thread the same sums as split-K; on
     * more, a row's bits follow whether its batch made the product tall. */
    float *part = sb_floats_try((size_t)m * (size_t)n);
    SB_ASSERT(part != NULL);
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        int i0 = (int)((long)m * t / nth), i1 = (int)((long)m * (t + 1) / nth);
        sb_gemm_work *w = sb_gemm_work_new(i1 - i0, n, k);
        SB_ASSERT(w != NULL);
        sb_gemm_det_serial(part + (size_t)i0 * (size_t)n, sub(a, i0, 0), b, w, n, i1 - i0, n,
                           k, false);
        sb_gemm_work_free(w);
        loose_combine(c, ldc, part, 1, m, n, i0, i1, accumulate);
    }
    free(part);
}
