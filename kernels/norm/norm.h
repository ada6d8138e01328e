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
 * Sums run in index order from +0; each operation rounds once (the kernels
 * build with -ffp-contract=off). */
#ifndef SB_NORM_H
#define SB_NORM_H

#include <math.h>
#include <stddef.h>

#include "op_kernels.h"

/* Columns of one det task of gamma's gradient (a cache line of floats); its
 * rows come in chunks of SB_GEMM_KC (norm_det.c). */
#define SB_NORM_COLS 16

typedef struct sb_norm_stats {
    float mean, rstd;
} sb_norm_stats;

static inline sb_norm_stats sb_norm_row_stats(const float *x, size_t c, float eps)
{
    float sum = 0.0f;
    for (size_t j = 0; j < c; j++)
        sum += x[j];
    const float mean = sum / (float)c;
    float sq = 0.0f;
    for (size_t j = 0; j < c; j++) {
        const float d = x[j] - mean;
        sq += d * d;
    }
    const float var = sq / (float)c;
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
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (size_t j = 0; j < c; j++) {
        const float g = gamma[j] * dy[j];
        sum_g += g;
        sum_gx += g * sb_norm_xhat(x[j], st);
    }
    sb_layernorm_row_bwd_apply(dx, dy, x, gamma, c, st, sum_g, sum_gx);
}

/* The same arithmetic for a group of SB_NORM_GROUP consecutive rows: their
 * sums' chains run side by side, each row's the chain of the one-row
 * functions above (index order from +0), so every row has their bits. One
 * chain waits out the adder's latency at every step; eight keep it busy
 * (a row's stats alone were most of the layer norms' time). */
#define SB_NORM_GROUP 8

static inline void sb_norm_group_stats(sb_norm_stats st[SB_NORM_GROUP], const float *x,
                                       size_t c, float eps)
{
    float sum[SB_NORM_GROUP] = {0}, sq[SB_NORM_GROUP] = {0}, mean[SB_NORM_GROUP];
    for (size_t j = 0; j < c; j++)
        for (int r = 0; r < SB_NORM_GROUP; r++)
            sum[r] += x[r * c + j];
    for (int r = 0; r < SB_NORM_GROUP; r++)
        mean[r] = sum[r] / (float)c;
    for (size_t j = 0; j < c; j++)
        for (int r = 0; r < SB_NORM_GROUP; r++) {
            const float d = x[r * c + j] - mean[r];
            sq[r] += d * d;
        }
    for (int r = 0; r < SB_NORM_GROUP; r++) {
        const float var = sq[r] / (float)c;
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
    float sum_g[SB_NORM_GROUP] = {0}, sum_gx[SB_NORM_GROUP] = {0};
    for (size_t j = 0; j < c; j++)
        for (int r = 0; r < SB_NORM_GROUP; r++) {
            const float g = gamma[j] * dy[r * c + j];
            sum_g[r] += g;
            sum_gx[r] += g * sb_norm_xhat(x[r * c + j], st[r]);
        }
    for (int r = 0; r < SB_NORM_GROUP; r++)
        sb_layernorm_row_bwd_apply(dx + r * c, dy + r * c, x + r * c, gamma, c, st[r], sum_g[r],
                                   sum_gx[r]);
}

#endif
