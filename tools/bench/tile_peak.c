/* The GEMM tile's ceiling (tile_peak.h): the wide tile as the cache blocks
 * call it, A a packed panel [kc][rows] and B one [kc][SB_GEMM_NR], each
 * thread on panels of its own (24 KiB and 48 KiB on AVX2: in L1 or L2). */
#include <stdlib.h>

#include "gemm/gemm_tile.h"
#include "bench_stats.h"
#include "sb_common.h"
#include "tile_peak.h"

/* How long each thread calls the tile in one try, in seconds. */
#define TRY_SECONDS 0.02
#define TRIES 5

/* written by every thread so that no tile's result is dropped as unused */
static volatile float tile_sink;

/* One thread's GFLOP/s over TRY_SECONDS of calls. The panels hold values
 * near 2^-10 and the first call overwrites C, the others add to it: their
 * sums stay far from overflow and from subnormals. */
static double one_thread(const sb_gemm_tiles *tiles, const float *a, const float *b, float *c,
                         bool cpu)
{
    const int rows = tiles->wide_mr, kc = SB_GEMM_KC, nr = SB_GEMM_NR;
    long calls = 0;
    double t0 = bench_thread_clock(cpu), seconds;
    do {
        for (int q = 0; q < 16; q++, calls++)
            tiles->wide_strided(c, a, rows, true, b, nr, nr, kc, rows, nr, calls == 0,
                                SB_GEMM_NO_BIAS);
        seconds = bench_thread_clock(cpu) - t0;
    } while (seconds < TRY_SECONDS);
    tile_sink = c[0];
    return 2.0 * rows * nr * kc * (double)calls / seconds * 1e-9;
}

double bench_tile_peak(int threads, bool cpu, bench_tile *shape)
{
    const sb_gemm_tiles *tiles = sb_gemm_tiles_select();
    const int mr = tiles->wide_mr, kc = SB_GEMM_KC, nr = SB_GEMM_NR;
    *shape = (bench_tile){mr, nr, kc};
    double best = 0.0;
    for (int t = 0; t <= TRIES; t++) {   /* try 0 warms up */
        double gflops = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : gflops)
        {
            float *a = sb_floats_new((size_t)kc * mr), *b = sb_floats_new((size_t)kc * nr),
                  *c = sb_floats_new((size_t)mr * nr);
            for (int i = 0; i < kc * mr; i++)
                a[i] = (float)(1 + i % 7) * 0x1p-10f;
            for (int i = 0; i < kc * nr; i++)
                b[i] = (float)(1 + i % 5) * 0x1p-10f;
#pragma omp barrier
            gflops += one_thread(tiles, a, b, c, cpu);
            free(a);
            free(b);
            free(c);
        }
        if (t > 0 && gflops > best)
            best = gflops;
    }
    return best;
}
