/* The global gradient norm's shared pieces, for the optimiser area's files,
 * its tests and its mutant: norm = sqrt(sum_i g_i^2) over one contiguous
 * buffer holding every gradient.
 *
 * det sums fixed blocks of SB_NORM_BLOCK elements (each block in
 * SB_NORM_LANES interleaved lanes, lane l taking the elements i = l mod
 * SB_NORM_LANES, the lanes then added in lane order), the blocks in parallel,
 * and adds the block sums in block order: the thread count never enters.
 * ref is one sum in index order; loose an OpenMP reduction. */
#ifndef SB_GRAD_NORM_H
#define SB_GRAD_NORM_H

#include "op_kernels.h"

#define SB_NORM_BLOCK 4096
#define SB_NORM_LANES 16

static inline size_t sb_norm_blocks(size_t n)
{
    return (n + SB_NORM_BLOCK - 1) / SB_NORM_BLOCK;
}

/* The sum of squares of block b of g[0..n), det's way. */
static inline float sb_norm_block_sumsq(const float *g, size_t n, size_t b)
{
    const size_t lo = b * SB_NORM_BLOCK, hi = n - lo < SB_NORM_BLOCK ? n : lo + SB_NORM_BLOCK;
    float lane[SB_NORM_LANES] = {0.0f};
    size_t i = lo;
    for (; i + SB_NORM_LANES <= hi; i += SB_NORM_LANES)
        for (int l = 0; l < SB_NORM_LANES; l++)
            lane[l] += g[i + (size_t)l] * g[i + (size_t)l];
    for (int l = 0; i < hi; i++, l++)
        lane[l] += g[i] * g[i];
    float s = 0.0f;
    for (int l = 0; l < SB_NORM_LANES; l++)
        s += lane[l];
    return s;
}

/* sum_i g_i^2 in double, and the forward error of a float evaluation of the
 * norm from that sum over n terms whose longest path of roundings is `path`
 * (n covers every order; optim_bound.c): what the bound and the double
 * evaluation share. */
double sb_grad_norm_sumsq(const float *g, size_t n);
double sb_grad_norm_error(double sumsq, size_t n, double path);

#endif
