/* The machine's FMA peak: GFLOP/s of a loop of independent fused
 * multiply-adds whose operands never leave the registers, on each of the
 * given number of threads at once. The ceiling any kernel's GFLOP/s is read
 * against (tools/bench/README.md). */
#ifndef BENCH_FMA_PEAK_H
#define BENCH_FMA_PEAK_H

#include <stdbool.h>

/* The best GFLOP/s over a few tries of `threads` threads each running the
 * loop of the instruction set the kernels take on this CPU and build
 * (AVX-512, AVX2 with FMA, or the baseline's fmaf); *isa names it. Timed
 * on the benchmark's clock (bench_clock: with cpu, the process's CPU time
 * over the threads), so that a kernel's share of it compares one clock's
 * figures. */
double bench_fma_peak(int threads, bool cpu, const char **isa);

#endif
