/* The layer-norm area's shared pieces, for its own files, its tests and
 * the mutants of its ops (kernels/mutants/): the arithmetic of one row,
 * which every family runs, so that the families differ only in how they
 * loop over rows and sum over them.
 *
 * Per row of c (PyTorch's LayerNorm, biased variance):
 *   mean = (sum x) / c, var = (sum (x - mean)^2) / c     two passes
 *   rstd = 1 / sqrtf(var + eps), xhat = (x - mean) * rstd
 *   fwd        y = xhat * gamma + beta, as ((x - mean) * rstd) * gamma + beta
 *   bwd_data   g = gamma * dy, a = (sum g) / c, b = (sum g * xhat) / c,
 *              dx = rstd * ((g - a) - xhat * b)
 *   bwd_gamma  dgamma[j] = sum over rows of dy * xhat
 * A row's sums (sum x, sum (x - mean)^2, sum g, sum g * xhat) run in one
 * fixed order, the same in every family and for every thread count: blocks
 * of SB_NORM_BLOCK elements, each summed in index order from +0, the block
 * sums combined pairwise (sb_norm_pairwise), so that the longest rounding
 * path is sb_norm_sum_path(c) additions, as short as a pairwise sum's up to
 * the block, instead of c - 1. Each operation rounds once (the kernels build
 * with -ffp-contract=off). */
#ifndef SB_NORM_H
#define SB_NORM_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "op_kernels.h"

/* Columns of one det task of gamma's gradient (a cache line of floats); its
 * rows come in chunks of SB_GEMM_KC (norm_det.c). */
#define SB_NORM_COLS 16

typedef struct sb_norm_stats {
    float mean, rstd;
} sb_norm_stats;

#define SB_NORM_BLOCK 32
/* levels of the pairwise tree: 2^48 blocks, far beyond any row */
#define SB_NORM_LEVELS 48

/* The block sums of one row sum, combined pairwise in a tree fixed by their
 * count: as block k arrives it is added (on the right) to the sums of the
 * full subtrees it completes, as a binary counter carries; at the end the
 * partial subtrees are added from the smallest up, each on the left of what
 * follows it. Every block lies at depth at most ceil(log2(blocks)). */
typedef struct sb_norm_pairwise {
    float level[SB_NORM_LEVELS];
    size_t blocks;
} sb_norm_pairwise;

static inline void sb_norm_pairwise_add(sb_norm_pairwise *p, float block)
{
    size_t l = 0;
    for (size_t k = p->blocks; k & 1; k >>= 1, l++)
        block = p->level[l] + block;
    p->level[l] = block;
    p->blocks++;
}

static inline float sb_norm_pairwise_end(const sb_norm_pairwise *p)
{
    float acc = 0.0f;
    bool first = true;
    for (size_t l = 0, k = p->blocks; k != 0; k >>= 1, l++)
        if (k & 1) {
            acc = first ? p->level[l] : p->level[l] + acc;
            first = false;
        }
    return acc;
}

/* the end of the block that starts at j0 in a row of c */
static inline size_t sb_norm_block_end(size_t j0, size_t c)
{
    return j0 + SB_NORM_BLOCK < c ? j0 + SB_NORM_BLOCK : c;
}

/* additions on the longest rounding path of a row sum of c terms:
 * min(c, SB_NORM_BLOCK) - 1 in a block, ceil(log2(blocks)) in the tree */
static inline size_t sb_norm_sum_path(size_t c)
{
    const size_t blocks = (c + SB_NORM_BLOCK - 1) / SB_NORM_BLOCK;
    size_t depth = 0;
    while (((size_t)1 << depth) < blocks)
        depth++;
    return (c < SB_NORM_BLOCK ? c : SB_NORM_BLOCK) - (c > 0) + depth;
}

static inline sb_norm_stats sb_norm_row_stats(const float *x, size_t c, float eps)
{
    sb_norm_pairwise sum = {.blocks = 0}, sq = {.blocks = 0};
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float block = 0.0f;
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++)
            block += x[j];
        sb_norm_pairwise_add(&sum, block);
    }
    const float mean = sb_norm_pairwise_end(&sum) / (float)c;
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float block = 0.0f;
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++) {
            const float d = x[j] - mean;
            block += d * d;
        }
        sb_norm_pairwise_add(&sq, block);
    }
    const float var = sb_norm_pairwise_end(&sq) / (float)c;
    return (sb_norm_stats){mean, 1.0f / sqrtf(var + eps)};
}

/* a row's stats: sb_norm_row_stats, or RMSNorm's sb_rms_row_stats (rmsnorm.h),
 * whose mean is 0; the gamma gradients of both norms read rows through one */
typedef sb_norm_stats sb_norm_stats_fn(const float *x, size_t c, float eps);

static inline float sb_norm_xhat(float x, sb_norm_stats st)
{
    return (x - st.mean) * st.rstd;
}

/* y = xhat * gamma + beta for one row whose stats are st. */
static inline void sb_layernorm_row_apply(float *y, const float *x, const float *gamma,
                                          const float *beta, size_t c, sb_norm_stats st)
{
    for (size_t j = 0; j < c; j++)
        y[j] = sb_norm_xhat(x[j], st) * gamma[j] + beta[j];
}

static inline void sb_layernorm_row(float *y, const float *x, const float *gamma,
                                    const float *beta, size_t c, float eps)
{
    sb_layernorm_row_apply(y, x, gamma, beta, c, sb_norm_row_stats(x, c, eps));
}

/* dx of one row from its stats and its two sums (sum g, sum g * xhat). */
static inline void sb_layernorm_row_bwd_apply(float *dx, const float *dy, const float *x,
                                              const float *gamma, size_t c, sb_norm_stats st,
                                              float sum_g, float sum_gx)
{
    const float a = sum_g / (float)c, b = sum_gx / (float)c;
    for (size_t j = 0; j < c; j++) {
        const float g = gamma[j] * dy[j];
        dx[j] = st.rstd * ((g - a) - sb_norm_xhat(x[j], st) * b);
    }
}

static inline void sb_layernorm_row_bwd(float *dx, const float *dy, const float *x,
                                        const float *gamma, size_t c, float eps)
{
    const sb_norm_stats st = sb_norm_row_stats(x, c, eps);
    sb_norm_pairwise sum_g = {.blocks = 0}, sum_gx = {.blocks = 0};
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float bg = 0.0f, bgx = 0.0f;
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++) {
            const float g = gamma[j] * dy[j];
            bg += g;
            bgx += g * sb_norm_xhat(x[j], st);
        }
        sb_norm_pairwise_add(&sum_g, bg);
        sb_norm_pairwise_add(&sum_gx, bgx);
    }
    sb_layernorm_row_bwd_apply(dx, dy, x, gamma, c, st, sb_norm_pairwise_end(&sum_g),
                               sb_norm_pairwise_end(&sum_gx));
}

/* The same arithmetic for a group of SB_NORM_GROUP consecutive rows: their
 * sums' chains run side by side, each row's the order of the one-row
 * functions above, so every row has their bits. One chain waits out the
 * adder's latency at every step; eight keep it busy (a row's stats alone
 * were most of the layer norms' time). */
#define SB_NORM_GROUP 8

static inline void sb_norm_group_stats(sb_norm_stats st[SB_NORM_GROUP], const float *x,
                                       size_t c, float eps)
{
    sb_norm_pairwise sum[SB_NORM_GROUP], sq[SB_NORM_GROUP];
    float mean[SB_NORM_GROUP];
    for (int r = 0; r < SB_NORM_GROUP; r++)
        sum[r].blocks = sq[r].blocks = 0;
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float block[SB_NORM_GROUP] = {0};
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++)
            for (int r = 0; r < SB_NORM_GROUP; r++)
                block[r] += x[r * c + j];
        for (int r = 0; r < SB_NORM_GROUP; r++)
            sb_norm_pairwise_add(&sum[r], block[r]);
    }
    for (int r = 0; r < SB_NORM_GROUP; r++)
        mean[r] = sb_norm_pairwise_end(&sum[r]) / (float)c;
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float block[SB_NORM_GROUP] = {0};
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++)
            for (int r = 0; r < SB_NORM_GROUP; r++) {
                const float d = x[r * c + j] - mean[r];
                block[r] += d * d;
            }
        for (int r = 0; r < SB_NORM_GROUP; r++)
            sb_norm_pairwise_add(&sq[r], block[r]);
    }
    for (int r = 0; r < SB_NORM_GROUP; r++) {
        const float var = sb_norm_pairwise_end(&sq[r]) / (float)c;
        st[r] = (sb_norm_stats){mean[r], 1.0f / sqrtf(var + eps)};
    }
}

static inline void sb_layernorm_group(float *y, const float *x, const float *gamma,
                                      const float *beta, size_t c, float eps)
{
    sb_norm_stats st[SB_NORM_GROUP];
    sb_norm_group_stats(st, x, c, eps);
    for (int r = 0; r < SB_NORM_GROUP; r++)
        sb_layernorm_row_apply(y + r * c, x + r * c, gamma, beta, c, st[r]);
}

static inline void sb_layernorm_group_bwd(float *dx, const float *dy, const float *x,
                                          const float *gamma, size_t c, float eps)
{
    sb_norm_stats st[SB_NORM_GROUP];
    sb_norm_group_stats(st, x, c, eps);
    sb_norm_pairwise sum_g[SB_NORM_GROUP], sum_gx[SB_NORM_GROUP];
    for (int r = 0; r < SB_NORM_GROUP; r++)
        sum_g[r].blocks = sum_gx[r].blocks = 0;
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float bg[SB_NORM_GROUP] = {0}, bgx[SB_NORM_GROUP] = {0};
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++)
            for (int r = 0; r < SB_NORM_GROUP; r++) {
                const float g = gamma[j] * dy[r * c + j];
                bg[r] += g;
                bgx[r] += g * sb_norm_xhat(x[r * c + j], st[r]);
            }
        for (int r = 0; r < SB_NORM_GROUP; r++) {
            sb_norm_pairwise_add(&sum_g[r], bg[r]);
            sb_norm_pairwise_add(&sum_gx[r], bgx[r]);
        }
    }
    for (int r = 0; r < SB_NORM_GROUP; r++)
        sb_layernorm_row_bwd_apply(dx + r * c, dy + r * c, x + r * c, gamma, c, st[r],
                                   sb_norm_pairwise_end(&sum_g[r]),
                                   sb_norm_pairwise_end(&sum_gx[r]));
}

#endif
