/* The GEMM tile's ceiling: GFLOP/s of the register tile the det and loose
 * GEMMs spend their time in, on panels that never leave the core's caches.
 * Between it and the FMA peak lies what the tile's own loop costs (its
 * loads and broadcasts beside the FMAs, its stores); between a product's
 * GFLOP/s and it, what the product costs around the tile: packing, and
 * bringing its panels in from memory (tools/bench/README.md). */
#ifndef BENCH_TILE_PEAK_H
#define BENCH_TILE_PEAK_H

#include <stdbool.h>

/* The tile measured: rows x cols of C over steps reduction steps. */
typedef struct bench_tile {
    int rows, cols, steps;
} bench_tile;

/* The best GFLOP/s over a few tries of `threads` threads each calling the
 * wide tile of the variant this CPU and build run (gemm_tile.h) again and
 * again on panels of its own: one whole tile over one whole chunk of steps,
 * its size in *shape. Each thread is timed on its wall clock, or with cpu
 * on its own CPU time, as the FMA peak. */
double bench_tile_peak(int threads, bool cpu, bench_tile *shape);

#endif
