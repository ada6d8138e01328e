/* The FMA peak loop, one copy per instruction set as the GEMM tiles are
 * (kernels/gemm/gemm_tile_body.h): ROWS x width accumulators, each one fmaf
 * chain, where width is one vector's floats, so that ROWS chains per
 * register file cover the FMA latency of two FMA units (4 to 5 cycles, 8 to
 * 10 in flight) and ROWS vectors plus the two operands fit in 16 registers. */
#include <math.h>

#include "sb_common.h"
#include "bench_stats.h"
#include "fma_peak.h"

#define ROWS 12

/* Iterations of one timed run: about 20 ms at 100 GFLOP/s on 16 lanes. */
#define ITERS 5000000L
#define TRIES 5

/* acc = acc * a + b converges to b / (1 - a) = 0.5, far from overflow and
 * from subnormals, whatever the iteration count. The sum keeps the chains
 * live. */
#define PEAK_LOOP(name, attr, width)                                                 \
    attr static float name(long iters)                                               \
    {                                                                                \
        float acc[ROWS][width];                                                      \
        for (int i = 0; i < ROWS; i++)                                               \
            for (int j = 0; j < (width); j++)                                        \
                acc[i][j] = (float)(i * (width) + j) * 0x1p-10f;                     \
        const float a = 1.0f - 0x1p-10f, b = 0x1p-11f;                               \
        for (long it = 0; it < iters; it++) {                                        \
            _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++)                  \
                for (int j = 0; j < (width); j++)                                    \
                    acc[i][j] = fmaf(acc[i][j], a, b);                               \
        }                                                                            \
        float s = 0.0f;                                                              \
        for (int i = 0; i < ROWS; i++)                                               \
            for (int j = 0; j < (width); j++)                                        \
                s += acc[i][j];                                                      \
        return s;                                                                    \
    }

PEAK_LOOP(peak_generic, , 1)
#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(SB_WITHOUT_AVX512)
PEAK_LOOP(peak_avx512, __attribute__((target("avx512f,fma"))), 16)
#endif
PEAK_LOOP(peak_avx2, __attribute__((target("avx2,fma"))), 8)
#endif

typedef float peak_fn(long iters);

/* the loop of the best instruction set, its width and name */
static peak_fn *peak_select(int *width, const char **isa)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
#if !defined(SB_WITHOUT_AVX512)
    if (sb_isa_allows(SB_ISA_AVX512)) {
        *width = 16, *isa = "AVX-512";
        return peak_avx512;
    }
#endif
    if (sb_isa_allows(SB_ISA_AVX2)) {
        *width = 8, *isa = "AVX2+FMA";
        return peak_avx2;
    }
#endif
    *width = 1, *isa = "baseline";
    return peak_generic;
}

/* written by every thread so that no run's result is dropped as unused */
static volatile float peak_sink;

double bench_fma_peak(int threads, bool cpu, const char **isa)
{
    int width;
    peak_fn *loop = peak_select(&width, isa);
    /* the baseline's fmaf is a library call: fewer iterations */
    long iters = width > 1 ? ITERS : ITERS / 100;
    double best = 0.0;
    for (int t = 0; t <= TRIES; t++) {   /* try 0 warms up */
        double t0 = bench_clock(cpu, threads);
#pragma omp parallel num_threads(threads)
        peak_sink = loop(iters);
        double gflops = 2.0 * ROWS * width * (double)iters * threads /
                        (bench_clock(cpu, threads) - t0) * 1e-9;
        if (t > 0 && gflops > best)
            best = gflops;
    }
    return best;
}
