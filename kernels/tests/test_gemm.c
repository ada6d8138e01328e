/* The GEMM core: the det GEMM equals its written definition bit for bit
 * (edge tiles, cache-block edges, chunk edges, transposed views, every ISA
 * variant of the tile, any thread count); the loose GEMM stays within the
 * reordering bound; the det sum and the bound rounding. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gemm/gemm_tile.h"
#include "gemm/sb_gemm.h"
#include "sb_kernels.h"

Suite *make_gemm_suite(void);

/* uniform in [-1, 1) from a fixed-seed LCG: reproducible, no RNG dependency */
static float *uniform_new(size_t n, uint64_t seed)
{
    float *x = malloc((n > 0 ? n : 1) * sizeof(float));
    uint64_t st = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        x[i] = (float)(st >> 40) * 0x1p-23f - 1.0f;
    }
    return x;
}

static bool same_bits(float x, float y) { return memcmp(&x, &y, sizeof x) == 0; }

static float at(sb_matview v, int i, int j) { return v.p[i * v.rs + j * v.cs]; }

/* The det definition of sb_gemm.h, one element at a time. */
static float det_definition(sb_matview a, sb_matview b, int i, int j, int k, float c0,
                            bool accumulate)
{
    float c = accumulate ? c0 : 0.0f;
    for (int p0 = 0; p0 < k; p0 += SB_GEMM_KC) {
        float s = 0.0f;
        for (int p = p0; p < k && p < p0 + SB_GEMM_KC; p++)
            s = fmaf(at(a, i, p), at(b, p, j), s);
        c = p0 == 0 && !accumulate ? s : c + s;
    }
    return c;
}

typedef struct gemm_case {
    int m, n, k;
    bool a_trans, b_trans, accumulate;
    int b_wider;   /* B by rows as a window of a matrix this many columns wider */
} gemm_case;

/* tiles are 8 x 48 (16 x 16 for n <= 16, 32 x 12 for n <= 12 and for the
 * last n % 48 <= 12 columns with A by columns, the panel rest for the last
 * n % 48 <= 4 with A by rows, 48 x 48 for k <= 12), cache
 * blocks 144 x 960, chunks 256: none divides these.
 * sb_gemm_det runs products below 2^21 multiply-adds on the direct path,
 * larger ones on the general path split over threads by output, or by chunk
 * when K is long against the output: all three kinds are here, every tile,
 * A by rows and by columns. */
static const gemm_case cases[] = {
    {1, 1, 1, false, false, false, 0},
    {13, 37, 600, false, false, true, 0},
    {12, 32, 256, true, false, false, 0},
    {150, 1030, 300, false, true, true, 0},
    {25, 70, 513, true, true, false, 0},
    {7, 5, 0, false, false, true, 0},
    {7, 5, 0, false, false, false, 0},
    {37, 14, 300, false, false, true, 0},   /* narrow, A by rows */
    {41, 16, 530, true, false, false, 0},   /* narrow, A by columns */
    {20, 15, 9000, false, true, true, 0},   /* narrow, many chunks */
    {37, 10, 300, false, false, true, 0},   /* tall, A by rows (dense2.fwd), edges, B in place */
    {20, 9, 9000, false, true, true, 0},    /* tall, A by rows, many chunks */
    {40, 11, 12, false, false, false, 0},   /* tall, A by rows, k < 16: no 8 x 16 copy */
    {300, 13, 600, true, true, false, 0},   /* narrow, general path */
    {70, 10, 300, true, false, true, 0},    /* tall, A by cols (dense2.bwd_weights), B in place */
    {33, 12, 600, true, true, false, 0},    /* tall, widest */
    {130, 100, 10, false, true, false, 0},  /* short k (dense2.bwd_data), A by rows */
    {32, 676, 9, false, false, false, 0},   /* short k, conv1.fwd's shape */
    {53, 70, 12, true, false, true, 0},     /* short k, A by columns, the longest */
    {61, 17, 1, false, true, false, 0},     /* short k, one step */
    {30, 50, 2000, false, false, true, 0},  /* split by chunk at 2..8 threads */
    {21, 60, 1800, true, true, false, 0},   /* the same, overwriting */
    {150, 98, 600, true, false, true, 0},   /* wide, the last 2 columns tall (gpt.head) */
    {150, 98, 600, false, false, true, 0},  /* wide, the last 2 from packed panels (gpt.head) */
    {157, 52, 300, false, true, false, 0},  /* wide, the last 4 from packed panels, edge rows */
    {20, 1024, 300, false, false, true, 0}, /* B read in place, two cache blocks of columns */
    {100, 64, 300, true, false, false, 16}, /* B read in place (rows 80 apart) */
    {100, 70, 300, true, false, false, 10}, /* the same, its last panel (22) packed */
    {100, 70, 300, true, false, false, 0},  /* rows 70 apart, not whole lines: B packed */
    {50, 112, 600, true, false, true, 0},   /* B by rows in place (b_rows): edges, chunks */
    {1500, 1500, 0, false, false, false, 0}, /* no steps on the general path: C = 0 or a bias */
};
#define N_CASES (sizeof cases / sizeof cases[0])

typedef struct gemm_data {
    float *a, *b, *c0;
    sb_matview av, bv;
    ptrdiff_t ldc;
} gemm_data;

static gemm_data data_new(gemm_case g)
{
    gemm_data d;
    d.a = uniform_new((size_t)g.m * g.k, 1);
    ptrdiff_t ldb = g.n + (g.b_trans ? 0 : g.b_wider);
    d.b = uniform_new((size_t)g.k * (size_t)ldb, 2);
    d.ldc = g.n + 3;    /* C is a window of a wider matrix */
    d.c0 = uniform_new((size_t)g.m * d.ldc, 3);
    d.av = g.a_trans ? sb_matview_trans(d.a, g.m) : sb_matview_rows(d.a, g.k);
    d.bv = g.b_trans ? sb_matview_trans(d.b, g.k) : sb_matview_rows(d.b, ldb);
    return d;
}

static void data_free(gemm_data *d)
{
    free(d->a), free(d->b), free(d->c0);
}

static float *c_copy(const gemm_data *d, gemm_case g)
{
    float *c = malloc((size_t)g.m * d->ldc * sizeof(float) + sizeof(float));
    memcpy(c, d->c0, (size_t)g.m * d->ldc * sizeof(float));
    return c;
}

/* The element that breaks the rule, or -1: plain C loops, one ck_assert. */
static long first_mismatch(const float *c, const gemm_data *d, gemm_case g)
{
    for (int i = 0; i < g.m; i++) {
        for (int j = 0; j < g.n; j++) {
            float want = det_definition(d->av, d->bv, i, j, g.k, d->c0[i * d->ldc + j],
                                        g.accumulate);
            if (!same_bits(want, c[i * d->ldc + j]))
                return (long)i * d->ldc + j;
        }
        for (ptrdiff_t j = g.n; j < d->ldc; j++)   /* outside the window: untouched */
            if (!same_bits(c[i * d->ldc + j], d->c0[i * d->ldc + j]))
                return (long)i * d->ldc + j;
    }
    return -1;
}

START_TEST(test_det_serial_is_the_definition)
{
    gemm_case g = cases[_i];
    gemm_data d = data_new(g);
    float *c = c_copy(&d, g);
    sb_gemm_work *w = sb_gemm_work_new(g.m, g.n, g.k);
    ck_assert_ptr_nonnull(w);
    sb_gemm_det_serial(c, d.av, d.bv, w, d.ldc, g.m, g.n, g.k, g.accumulate);
    long bad = first_mismatch(c, &d, g);
    ck_assert_msg(bad < 0, "case %d: element %ld differs from the definition", _i, bad);
    sb_gemm_work_free(w);
    free(c);
    data_free(&d);
}
END_TEST

/* sb_gemm_det of case `which` of the set `set` at 1 to max_threads threads
 * against the definition. */
static void check_det_threads(const gemm_data *d, gemm_case g, const char *set, int which,
                              int max_threads)
{
    for (int threads = 1; threads <= max_threads; threads++) {
        omp_set_num_threads(threads);
        float *c = c_copy(d, g);
        sb_gemm_det(c, d->av, d->bv, d->ldc, g.m, g.n, g.k, g.accumulate);
        long bad = first_mismatch(c, d, g);
        ck_assert_msg(bad < 0, "%s %d, %d threads: element %ld differs", set, which, threads,
                      bad);
        free(c);
    }
}

START_TEST(test_det_parallel_is_the_definition)
{
    gemm_case g = cases[_i];
    gemm_data d = data_new(g);
    check_det_threads(&d, g, "case", _i, 16);
    data_free(&d);
}
END_TEST

/* C's rows a whole number of L1 ways apart (1024 floats, 2048): there
 * AVX-512's wide tiles of 8 rows run row by row (gemm.c), with the
 * definition's bits. */
START_TEST(test_det_c_rows_an_l1_way_apart)
{
    static const gemm_case aliasing[] = {
        {150, 1000, 300, false, true, true, 0}, /* two blocks of rows and of columns, B packed */
        {40, 1024, 130, true, false, false, 0}, /* A by columns, B in place */
    };
    gemm_case g = aliasing[_i];
    gemm_data d = data_new(g);
    free(d.c0);
    d.ldc = (ptrdiff_t)1024 << _i;
    d.c0 = uniform_new((size_t)g.m * d.ldc, 3);
    check_det_threads(&d, g, "aliasing case", _i, 3);
    data_free(&d);
}
END_TEST

/* Products split by chunk from two threads at once (nested teams of two),
 * of different A: each call takes the kept buffer of chunk sums or makes
 * its own (gemm.c), so neither adds the other's sums. */
START_TEST(test_det_split_chunks_concurrent_callers)
{
    const gemm_case g = {30, 50, 2000, false, false, true, 0};
    gemm_data d[2] = {data_new(g), data_new(g)};
    for (size_t i = 0; i < (size_t)g.m * g.k; i++)
        d[1].a[i] *= -2.0f;   /* exact: other sums, the same rounding */
    float *c[2] = {c_copy(&d[0], g), c_copy(&d[1], g)};
    int levels = omp_get_max_active_levels(), threads = omp_get_max_threads();
    bool dynamic = omp_get_dynamic();
    omp_set_max_active_levels(2);
    omp_set_dynamic(0);
    omp_set_num_threads(2);
    long bad[2] = {-1, -1};
    int teams = 0;
#pragma omp parallel num_threads(2) reduction(+ : teams)
    {
        int t = omp_get_thread_num();
#pragma omp parallel num_threads(2)
#pragma omp single
        teams += omp_get_num_threads() == 2 && omp_get_level() == 2;
        for (int rep = 0; rep < 200 && bad[t] < 0; rep++) {
            memcpy(c[t], d[t].c0, (size_t)g.m * d[t].ldc * sizeof(float));
            sb_gemm_det(c[t], d[t].av, d[t].bv, d[t].ldc, g.m, g.n, g.k, g.accumulate);
            bad[t] = first_mismatch(c[t], &d[t], g);
        }
    }
    omp_set_max_active_levels(levels);
    omp_set_dynamic(dynamic);
    omp_set_num_threads(threads);
    ck_assert_int_eq(teams, 2);   /* two callers, each with a team of two */
    ck_assert_msg(bad[0] < 0 && bad[1] < 0, "element %ld / %ld differs", bad[0], bad[1]);
    for (int t = 0; t < 2; t++) {
        free(c[t]);
        data_free(&d[t]);
    }
}
END_TEST

/* A view of the tile kind's layout over a row-major [rows][k] matrix m0:
 * rows contiguous (the matrix itself), or columns contiguous (a copy stored
 * [k][rows], the layout of a packed panel or a transposed matrix). */
static sb_matview tile_a_view(const float *m0, float *copy, int rows, int k, bool cols)
{
    if (!cols)
        return sb_matview_rows(m0, k);
    for (int i = 0; i < rows; i++)
        for (int p = 0; p < k; p++)
            copy[p * rows + i] = m0[i * k + p];
    return sb_matview_trans(copy, rows);
}

/* The instruction-set levels by name, and the refusals: a name of none, a
 * level this CPU or build does not run. */
START_TEST(test_isa_levels)
{
    char err[160] = "";
    sb_isa i;
    ck_assert_int_eq(sb_isa_from_name("avx2"), SB_ISA_AVX2);
    ck_assert_int_eq(sb_isa_from_name("sse4"), SB_ISA_COUNT);
    ck_assert(!sb_isa_parse("sse4", &i, err, sizeof err));
    ck_assert_str_eq(err, "SAMEBITS_ISA=sse4: expected avx512, avx2 or baseline");
    for (int l = 0; l < SB_ISA_COUNT; l++) {
        bool ok = sb_isa_parse(sb_isa_name((sb_isa)l), &i, err, sizeof err);
        ck_assert_int_eq(ok, sb_isa_runs((sb_isa)l));
        if (ok)
            ck_assert_int_eq(i, l);
    }
}
END_TEST

/* SAMEBITS_ISA caps the tiles a product takes: under baseline the generic
 * tiles, under avx2 the AVX2 ones where the CPU runs them. The cap is read
 * once per process, so only in a test process of its own (Check's fork). */
START_TEST(test_isa_cap_picks_the_tiles)
{
    const char *fork = getenv("CK_FORK");
    if (fork && strcmp(fork, "no") == 0)
        return;
    const sb_isa level = (sb_isa)_i;
    if (!sb_isa_runs(level))
        return;
    setenv("SAMEBITS_ISA", sb_isa_name(level), 1);
    ck_assert_int_eq(sb_isa_cap(), level);
    const sb_gemm_tiles *t = sb_gemm_tiles_select();
    if (level == SB_ISA_BASELINE)
        ck_assert_ptr_eq(t, &sb_gemm_tiles_generic);
#if SB_GEMM_TILES_AVX2
    if (level == SB_ISA_AVX2)
        ck_assert_ptr_eq(t, &sb_gemm_tiles_avx2);
#endif
}
END_TEST

/* Every ISA variant of every tile (wide, narrow, tall and short; A read by
 * rows and by columns): same bits as the definition, full and edge tiles,
 * overwrite and accumulate. */
START_TEST(test_tile_variants_agree)
{
    enum { KC = 203 };   /* not a multiple of 16: the tall tile's 8 x 16 copies of
                            A by rows end with single steps */
    const sb_gemm_tiles *variants[3];
    int nv = sb_gemm_tiles_variants(variants);
    ck_assert_int_ge(nv, 1);
    /* product widths, reduction lengths and A layouts that pick each tile
     * (sb_gemm_tile_for) in a product of tall_m rows: wide, narrow and tall,
     * each by rows and by columns (fewer rows take the narrow tile for the
     * tall's widths), and the short tile at its shortest, conv1's, dense2's
     * and its longest reduction */
    const int tall_m = 1000;
    const struct {
        int n, k;
        bool cols;
    } kinds[] = {{SB_GEMM_NR, KC, false},  {SB_GEMM_NR, KC, true},  {SB_GEMM_NRN, KC, false},
                 {SB_GEMM_NRN, KC, true},  {SB_GEMM_NRT, KC, false}, {SB_GEMM_NRT, KC, true},
                 {SB_GEMM_NR, 1, false},   {SB_GEMM_NR, 9, false},   {SB_GEMM_NR, 10, true},
                 {SB_GEMM_NR, SB_GEMM_KS, false}, {SB_GEMM_NR, SB_GEMM_KS, true}};
    for (size_t kind = 0; kind < sizeof kinds / sizeof kinds[0]; kind++)
        for (int v = 0; v < nv; v++) {
            const int nmax = kinds[kind].n, kc = kinds[kind].k;
            const bool cols = kinds[kind].cols;
            /* the wide tile's rows depend on the instruction set, its width not */
            sb_gemm_tile probe =
                sb_gemm_tile_for(variants[v], tall_m, nmax, kc, cols ? 1 : 2, cols ? 2 : 1);
            const int mr = probe.rows, nr = probe.width;
            float *a = uniform_new((size_t)mr * KC, 4), *a_copy = uniform_new((size_t)mr * KC, 0);
            float *b = uniform_new((size_t)KC * nr, 5), *c0 = uniform_new((size_t)mr * nr, 6);
            float *c = malloc((size_t)mr * nr * sizeof(float));
            float *bias = uniform_new((size_t)(mr > nr ? mr : nr), 7);
            sb_matview av_def = sb_matview_rows(a, kc), bv = sb_matview_rows(b, nr);
            sb_matview av = tile_a_view(a, a_copy, mr, kc, cols);
            /* full, few rows, few columns, one element, one short of full, the
             * 6 + 6 + 4 and 4 + 4 rows of AVX2's 24-row wide tile, 13, and 3
             * and 2 columns (the tall tile's narrowest blocks: 4 columns, and
             * AVX2's 2 columns of 32 rows) */
            const int edges[][2] = {{mr, nmax},  {5, nmax},         {mr, 9},
                                    {1, 1},      {mr - 1, nmax - 1}, {mr, nmax < 32 ? nmax : 32},
                                    {3, nmax < 20 ? nmax : 20},     {16, nmax},
                                    {8, nmax},   {13, nmax},        {mr, 3},
                                    {mr, 2}};
            const int n_edges = (int)(sizeof edges / sizeof edges[0]);
            sb_gemm_tile t = sb_gemm_tile_for(variants[v], tall_m, nmax, kc, av.rs, av.cs);
            /* the tile this kind is here to check, not another */
            sb_gemm_tile_fn *kind_tile = kc <= SB_GEMM_KS     ? variants[v]->short_k
                                         : nmax == SB_GEMM_NRT ? variants[v]->tall
                                         : nmax == SB_GEMM_NRN ? variants[v]->narrow
                                         : cols                ? variants[v]->wide_cols
                                                               : variants[v]->wide_rows;
            ck_assert_msg(t.fn == kind_tile, "kind %zu picked another tile", kind);
            ck_assert_int_eq(t.rows, mr);
            ck_assert_int_eq(t.width, nr);
            /* the wide tile on A by columns also as the cache blocks call it,
             * B read where its rows lie: in a wider matrix, ldb floats apart */
            const bool strided = cols && nmax == SB_GEMM_NR && kc > SB_GEMM_KS;
            const ptrdiff_t ldb = nr + 13;
            /* mode 0 accumulates, 1 overwrites, 2 overwrites onto a row bias,
             * 3 onto a column bias; each twice more through wide_strided, told
             * that only the edge's rows of A are there (via_strided 1) and
             * that all mr are (2: they are, so an edge tile reads them in
             * place; the sums of rows past the edge must not be stored) */
            for (int e = 0; e < n_edges; e++)
                for (int run = 0; run < 4 * (1 + 2 * strided); run++) {
                    const int mode = run % 4, via_strided = run / 4;
                    if (edges[e][0] > mr)
                        continue;
                    memcpy(c, c0, (size_t)mr * nr * sizeof(float));
                    sb_gemm_bias gb = {mode >= 2 ? bias : NULL, mode == 3};
                    if (via_strided) {
                        /* B's last row ends where the tile may read no further,
                         * the edge's columns rounded up to whole blocks: ASan
                         * sees more */
                        const int cols_read = (edges[e][1] + SB_GEMM_BLOCK_COLS - 1) /
                                              SB_GEMM_BLOCK_COLS * SB_GEMM_BLOCK_COLS;
                        size_t b_floats = (size_t)(kc - 1) * ldb + cols_read;
                        float *b_wide = malloc(b_floats * sizeof(float));
                        for (int p = 0; p < kc; p++)
                            memcpy(b_wide + p * ldb, b + p * nr,
                                   (size_t)cols_read * sizeof(float));
                        variants[v]->wide_strided(c, av.p, av.cs, via_strided == 2, b_wide,
                                                  ldb, nr, kc, edges[e][0], edges[e][1],
                                                  mode > 0, gb);
                        free(b_wide);
                    } else
                        t.fn(c, av.p, av.rs, av.cs, b, nr, kc, edges[e][0], edges[e][1],
                             mode > 0, gb);
                    for (int i = 0; i < mr; i++)
                        for (int j = 0; j < nr; j++) {
                            bool valid = i < edges[e][0] && j < edges[e][1];
                            float want = c0[i * nr + j];
                            if (valid) {
                                float sum = det_definition(av_def, bv, i, j, kc, 0.0f, false);
                                want = mode == 0   ? want + sum
                                       : mode == 1 ? sum
                                                   : bias[mode == 3 ? j : i] + sum;
                            }
                            if (!same_bits(want, c[i * nr + j]))
                                ck_abort_msg("width %d k %d cols %d variant %d edge %d "
                                             "mode %d strided %d: [%d][%d]",
                                             nmax, kc, (int)cols, v, e, mode, via_strided, i,
                                             j);
                        }
                }
            free(a), free(a_copy), free(b), free(c0), free(c), free(bias);
        }
}
END_TEST

/* The panel rest of every variant (gemm_tile.h): C's first nv <= 4 columns
 * from A packed as the wide tiles pack it, panels [kc][wide_mr] with rows
 * past mv zero, against the definition; whole groups of panels and the
 * single panels after them, every width, accumulating, overwriting, and
 * overwriting onto a row bias and onto a column bias. */
START_TEST(test_rest_variants_agree)
{
    enum { KC = 203, M = 150, LDC = 7 };
    const sb_gemm_tiles *variants[3];
    int nv = sb_gemm_tiles_variants(variants);
    float *a = uniform_new((size_t)M * KC, 4), *b = uniform_new((size_t)KC * SB_GEMM_NRN, 5);
    float *c0 = uniform_new((size_t)M * LDC, 6), *c = malloc((size_t)M * LDC * sizeof(float));
    float *bias = uniform_new(M, 7);
    sb_matview av = sb_matview_rows(a, KC), bv = sb_matview_rows(b, SB_GEMM_NRN);
    const int rows[] = {M, 144, 33, 5, 1};
    for (int v = 0; v < nv; v++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            const int mv = rows[r], pr = variants[v]->wide_mr;
            /* exactly the panels that hold mv rows: a read past them is ASan's */
            float *panels = malloc((size_t)((mv + pr - 1) / pr * pr) * KC * sizeof(float));
            for (int i0 = 0; i0 < mv; i0 += pr)
                for (int p = 0; p < KC; p++)
                    for (int i = 0; i < pr; i++)
                        panels[(ptrdiff_t)i0 * KC + p * pr + i] =
                            i0 + i < mv ? a[(i0 + i) * KC + p] : 0.0f;
            /* mode 0 accumulates, 1 overwrites, 2 onto a row bias, 3 a column one */
            for (int cols = 1; cols <= SB_GEMM_NRP; cols++)
                for (int mode = 0; mode <= 3; mode++) {
                    memcpy(c, c0, (size_t)M * LDC * sizeof(float));
                    variants[v]->rest(c, panels, KC, mv, b, LDC, cols, mode > 0,
                                      (sb_gemm_bias){mode >= 2 ? bias : NULL, mode == 3});
                    for (int i = 0; i < M; i++)
                        for (int j = 0; j < LDC; j++) {
                            float want = c0[i * LDC + j];
                            if (i < mv && j < cols) {
                                float sum = det_definition(av, bv, i, j, KC, 0.0f, false);
                                want = mode == 0   ? want + sum
                                       : mode == 1 ? sum
                                                   : bias[mode == 3 ? j : i] + sum;
                            }
                            if (!same_bits(want, c[i * LDC + j]))
                                ck_abort_msg("variant %d rows %d cols %d mode %d: [%d][%d]", v,
                                             mv, cols, mode, i, j);
                        }
                }
            free(panels);
        }
    free(a), free(b), free(c0), free(c), free(bias);
}
END_TEST

/* The direct path (A in place, B packed chunk by chunk, the narrow or tall
 * tile for n <= 16, the short one for k <= 12), which small products and
 * the conv kernels take: the definition, and the same bits as the general
 * path (sb_gemm_det_serial) on the same product. Its variant on B by rows,
 * sb_gemm_det_direct_b_rows: the definition too, B read in place where A
 * lies by columns and B by rows a whole number of lines apart with n a
 * multiple of 16 (the cases of 12 x 32, 100 x 64 and 50 x 112: edge rows,
 * a last panel of 16 columns, two and three chunks, accumulating), packed
 * in the others. */
START_TEST(test_det_direct_is_the_general_path)
{
    for (size_t ci = 0; ci < N_CASES; ci++) {
        gemm_case g = cases[ci];
        gemm_data d = data_new(g);
        float *direct = c_copy(&d, g), *general = c_copy(&d, g);
        float *b_buf = sb_floats_new(sb_gemm_b_buf_floats(g.n, g.k));
        sb_gemm_det_direct(direct, d.av, (sb_gemm_b){sb_gemm_pack_b_view, &d.bv}, b_buf, d.ldc,
                           g.m, g.n, g.k, g.accumulate, SB_GEMM_NO_BIAS);
        long bad = first_mismatch(direct, &d, g);
        ck_assert_msg(bad < 0, "case %zu: element %ld differs from the definition", ci, bad);
        float *b_rows = c_copy(&d, g);
        sb_gemm_det_direct_b_rows(b_rows, d.av, d.bv, b_buf, d.ldc, g.m, g.n, g.k, g.accumulate);
        bad = first_mismatch(b_rows, &d, g);
        ck_assert_msg(bad < 0, "case %zu, B by rows: element %ld differs from the definition", ci,
                      bad);
        free(b_rows);
        sb_gemm_work *w = sb_gemm_work_new(g.m, g.n, g.k);
        ck_assert_ptr_nonnull(w);
        sb_gemm_det_serial(general, d.av, d.bv, w, d.ldc, g.m, g.n, g.k, g.accumulate);
        ck_assert_msg(memcmp(direct, general, (size_t)g.m * d.ldc * sizeof(float)) == 0,
                      "case %zu: the direct and the general path differ", ci);
        sb_gemm_work_free(w);
        free(b_buf), free(direct), free(general);
        data_free(&d);
    }
}
END_TEST

/* C filled with a bias, by rows (bias[i]) or by columns (bias[j]) */
static float *bias_filled(const gemm_data *d, gemm_case g, const float *bias, bool per_column)
{
    float *c = c_copy(d, g);
    for (int i = 0; i < g.m; i++)
        for (int j = 0; j < g.n; j++)
            c[i * d->ldc + j] = bias[per_column ? j : i];
    return c;
}

/* A bias per row or per column on the direct path and on every path of
 * sb_gemm_det (the small products', the split output's, the split chunks',
 * the tall and panel rests) at 1 to 4 threads: the bits of
 * filling C with it and accumulating, over chunks, edges and every tile
 * (and k = 0: C = the bias). */
START_TEST(test_det_bias)
{
    for (size_t ci = 0; ci < N_CASES; ci++) {
        gemm_case g = cases[ci];
        gemm_data d = data_new(g);
        int most = g.m > g.n ? g.m : g.n, least = g.m < g.n ? g.m : g.n;
        float *bias = uniform_new((size_t)most + 1, 8);
        bias[least / 2] = -0.0f;   /* a signed zero among the rows' and the columns' */
        float *b_buf = sb_floats_new(sb_gemm_b_buf_floats(g.n, g.k));
        sb_gemm_b bp = {sb_gemm_pack_b_view, &d.bv};
        for (int per_column = 0; per_column <= 1; per_column++) {
            sb_gemm_bias gb = {bias, per_column};
            float *biased = c_copy(&d, g), *filled = bias_filled(&d, g, bias, per_column);
            sb_gemm_det_direct(biased, d.av, bp, b_buf, d.ldc, g.m, g.n, g.k, false, gb);
            sb_gemm_det_direct(filled, d.av, bp, b_buf, d.ldc, g.m, g.n, g.k, true,
                               SB_GEMM_NO_BIAS);
            ck_assert_msg(memcmp(biased, filled, (size_t)g.m * d.ldc * sizeof(float)) == 0,
                          "case %zu: a bias per %s on the direct path differs from filling "
                          "and accumulating", ci, per_column ? "column" : "row");
            free(biased), free(filled);
        }
        for (int threads = 1; threads <= 4; threads++)
            for (int per_column = 0; per_column <= 1; per_column++) {
                omp_set_num_threads(threads);
                float *biased = c_copy(&d, g), *filled = bias_filled(&d, g, bias, per_column);
                sb_gemm_det_biased(biased, d.av, d.bv, d.ldc, g.m, g.n, g.k,
                                   (sb_gemm_bias){bias, per_column});
                sb_gemm_det(filled, d.av, d.bv, d.ldc, g.m, g.n, g.k, true);
                ck_assert_msg(memcmp(biased, filled, (size_t)g.m * d.ldc * sizeof(float)) == 0,
                              "case %zu, %d threads: a bias per %s differs from filling and "
                              "accumulating", ci, threads, per_column ? "column" : "row");
                free(biased), free(filled);
            }
        omp_set_num_threads(1);
        free(b_buf), free(bias);
        data_free(&d);
    }
}
END_TEST

/* loose: a different order, so within 2 gamma(k+1) sum|terms| of det (the
 * +1 counts C's old value as a term); and for k = 9216 its bits move with
 * the thread count. */
START_TEST(test_loose_within_bound)
{
    const gemm_case g = {9, 40, 9216, false, false, true, 0};
    gemm_data d = data_new(g);
    float *det = c_copy(&d, g);
    omp_set_num_threads(1);
    sb_gemm_det(det, d.av, d.bv, d.ldc, g.m, g.n, g.k, true);
    int differing = 0;
    for (int threads = 1; threads <= 5; threads++) {
        omp_set_num_threads(threads);
        float *c = c_copy(&d, g);
        sb_gemm_loose(c, d.av, d.bv, d.ldc, g.m, g.n, g.k, true);
        for (int i = 0; i < g.m; i++)
            for (int j = 0; j < g.n; j++) {
                double sum = fabs((double)d.c0[i * d.ldc + j]);
                for (int p = 0; p < g.k; p++)
                    sum += fabs((double)at(d.av, i, p) * (double)at(d.bv, p, j));
                float bound = sb_dot_bound(g.k + 1.0, sum);
                float x = c[i * d.ldc + j], y = det[i * d.ldc + j];
                if (!isfinite(x) || !(fabsf(x - y) <= bound))
                    ck_abort_msg("%d threads [%d][%d]: %a vs det %a, bound %a", threads, i, j,
                                 (double)x, (double)y, (double)bound);
            }
        differing += memcmp(c, det, (size_t)g.m * d.ldc * sizeof(float)) != 0;
        free(c);
    }
    ck_assert_msg(differing > 0, "loose split-K gave det's bits at every thread count");
    free(det);
    data_free(&d);
}
END_TEST

/* loose over a batch, on a tall product (2048 rows or more), splits rows,
 * each over all of K: at every thread count a row has the bits it has in a
 * short product at one thread, where split-K is one part; at 2 threads the
 * short product splits K and its rows part from the tall one's: the bits
 * follow the rows, that is the batch. */
START_TEST(test_loose_tall_splits_rows)
{
    const gemm_case g = {2050, 40, 600, false, false, true, 0};
    const int short_m = 8;
    gemm_data d = data_new(g);
    const size_t short_bytes = (size_t)short_m * d.ldc * sizeof(float);
    float *short1 = c_copy(&d, g), *short2 = c_copy(&d, g), *tall1 = NULL;
    omp_set_num_threads(1);
    sb_gemm_loose_batch(short1, d.av, d.bv, d.ldc, short_m, g.n, g.k, true);
    omp_set_num_threads(2);
    sb_gemm_loose_batch(short2, d.av, d.bv, d.ldc, short_m, g.n, g.k, true);
    ck_assert_msg(memcmp(short1, short2, short_bytes) != 0,
                  "a short loose product gave the same bits at 1 and 2 threads");
    for (int threads = 1; threads <= 4; threads++) {
        omp_set_num_threads(threads);
        float *c = c_copy(&d, g);
        sb_gemm_loose_batch(c, d.av, d.bv, d.ldc, g.m, g.n, g.k, true);
        ck_assert_msg(memcmp(c, short1, short_bytes) == 0,
                      "%d threads: a tall product's first rows differ from a short one's at "
                      "1 thread", threads);
        if (tall1) {
            ck_assert_msg(memcmp(c, tall1, (size_t)g.m * d.ldc * sizeof(float)) == 0,
                          "%d threads: the tall product differs from 1 thread's", threads);
            free(c);
        } else {
            tall1 = c;
        }
    }
    free(tall1), free(short1), free(short2);
    data_free(&d);
}
END_TEST

START_TEST(test_sum_det)
{
    const size_t n = 1000;
    float *x = uniform_new(2 * n, 7);
    float want = 0.5f;
    for (size_t i0 = 0; i0 < n; i0 += SB_GEMM_KC) {
        float s = 0.0f;
        for (size_t i = i0; i < n && i < i0 + SB_GEMM_KC; i++)
            s += x[2 * i];
        want += s;
    }
    float got = sb_sum_det(x, 2, n, 0.5f);
    ck_assert(same_bits(got, want));
    ck_assert(same_bits(sb_sum_det(x, 1, 0, 0.25f), 0.25f));
    x[2 * 700] = NAN;
    ck_assert(isnan(sb_sum_det(x, 2, n, 0.0f)));
    x[2 * 700] = INFINITY;
    ck_assert(isinf(sb_sum_det(x, 2, n, 0.0f)));
    free(x);
}
END_TEST

/* sb_sum_det_rows is sb_sum_det row after row: whole and partial blocks of
 * rows, one and several chunks, rows too long for the blocked path, and a
 * NaN in one row. */
START_TEST(test_sum_det_rows)
{
    const int rows_list[] = {0, 1, 7, 8, 9, 17};
    const size_t n_list[] = {0, 1, 255, 256, 257, 676, 2048, 2049, 2100};
    const ptrdiff_t ld = 2200;
    float *x = uniform_new((size_t)17 * ld, 9);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            x[10 * ld + 300] = NAN;
        for (size_t a = 0; a < sizeof rows_list / sizeof rows_list[0]; a++)
            for (size_t b = 0; b < sizeof n_list / sizeof n_list[0]; b++) {
                int rows = rows_list[a];
                size_t n = n_list[b];
                float want = 0.75f;
                for (int r = 0; r < rows; r++)
                    want = sb_sum_det(x + r * ld, 1, n, want);
                float got = sb_sum_det_rows(x, ld, rows, n, 0.75f);
                ck_assert_msg(same_bits(got, want), "rows %d n %zu pass %d: %a vs %a", rows,
                              n, pass, (double)got, (double)want);
            }
    }
    free(x);
}
END_TEST

/* sb_sum_det_cols is sb_sum_det down each column: whole and partial blocks
 * of columns, one and several chunks, at 1 to 3 threads, a NaN and an
 * infinity in one column each, and a column of -0 (each sum starts from +0). */
START_TEST(test_sum_det_cols)
{
    const int cols_list[] = {1, 10, 63, 64, 65, 98, 130};
    const size_t rows_list[] = {0, 1, 255, 256, 257, 1024, 1100};
    const ptrdiff_t ld = 137;
    float *x = uniform_new(1100 * (size_t)ld, 10), out[130];
    for (size_t i = 0; i < 1100; i++)
        x[(ptrdiff_t)i * ld + 5] = -0.0f;   /* a column of -0: its sums are +0 */
    x[700 * ld + 66] = NAN;
    x[3 * ld + 97] = INFINITY;
    for (int threads = 1; threads <= 3; threads++) {
        omp_set_num_threads(threads);
        for (size_t a = 0; a < sizeof cols_list / sizeof cols_list[0]; a++)
            for (size_t b = 0; b < sizeof rows_list / sizeof rows_list[0]; b++) {
                int cols = cols_list[a];
                size_t rows = rows_list[b];
                sb_sum_det_cols(out, x, ld, rows, cols);
                for (int j = 0; j < cols; j++) {
                    float want = sb_sum_det(x + j, ld, rows, 0.0f);
                    ck_assert_msg(same_bits(out[j], want),
                                  "cols %d rows %zu column %d, %d threads: %a vs %a", cols,
                                  rows, j, threads, (double)out[j], (double)want);
                }
            }
    }
    free(x);
}
END_TEST

/* The bound is 2 gamma(n) S rounded up to the nearest float at or above it. */
START_TEST(test_dot_bound_rounding)
{
    ck_assert(same_bits(sb_dot_bound(10.0, 0.0), 0.0f));
    const double ns[] = {1, 3, 9, 129, 9217, 73728};
    const double sums[] = {1.0, 0.1, 3e-7, 12345.678};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) {
            double exact = 2.0 * sb_gamma(ns[i]) * sums[j];
            float b = sb_dot_bound(ns[i], sums[j]);
            ck_assert_msg((double)b >= exact, "n %g sum %g: %a below %a", ns[i], sums[j],
                          (double)b, exact);
            ck_assert_msg((double)nextafterf(b, 0.0f) < exact, "n %g sum %g: not the nearest",
                          ns[i], sums[j]);
        }
    ck_assert(isinf(sb_dot_bound(4.0, (double)INFINITY)));
}
END_TEST

Suite *make_gemm_suite(void)
{
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("gemm");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_det_serial_is_the_definition, 0, (int)N_CASES);
    tcase_add_loop_test(tc, test_det_parallel_is_the_definition, 0, (int)N_CASES);
    tcase_add_loop_test(tc, test_det_c_rows_an_l1_way_apart, 0, 2);
    tcase_add_test(tc, test_det_split_chunks_concurrent_callers);
    tcase_add_test(tc, test_tile_variants_agree);
    tcase_add_test(tc, test_rest_variants_agree);
    tcase_add_test(tc, test_det_bias);
    tcase_add_test(tc, test_det_direct_is_the_general_path);
    tcase_add_test(tc, test_loose_within_bound);
    tcase_add_test(tc, test_loose_tall_splits_rows);
    tcase_add_test(tc, test_sum_det);
    tcase_add_test(tc, test_sum_det_rows);
    tcase_add_test(tc, test_sum_det_cols);
    tcase_add_test(tc, test_dot_bound_rounding);
    tcase_add_test(tc, test_isa_levels);
    tcase_add_loop_test(tc, test_isa_cap_picks_the_tiles, SB_ISA_BASELINE, SB_ISA_AVX512);
    suite_add_tcase(s, tc);
    return s;
}
