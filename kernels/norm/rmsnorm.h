/* RMSNorm's row arithmetic, which every family runs (ref, det, loose and the
 * mutants of its ops): the families differ only in how they loop over rows
 * and, for gamma's gradient, how they sum over them.
 *
 * Per row of c (no mean, no beta):
 *   ss = sum x^2 (blocked, below), rstd = 1 / sqrtf(ss / c + eps)
 *   xhat = x * rstd
 *   fwd        y = xhat * gamma
 *   bwd_data   g = gamma * dy, b = (sum g * xhat) / c, dx = rstd * (g - xhat * b)
 *              (d rstd / d x_k = -rstd^3 x_k / c)
 *   bwd_gamma  dgamma[j] = sum over rows of dy * xhat
 * A row's sums run in blocks of SB_RMS_BLOCK elements, each block from +0 in
 * index order, the block sums added in block order from +0: one fixed order,
 * whose longest rounding path is (SB_RMS_BLOCK - 1) + (blocks - 1) additions
 * instead of c - 1. Each operation rounds once (-ffp-contract=off). */
#ifndef SB_RMSNORM_H
#define SB_RMSNORM_H

#include <math.h>
#include <stddef.h>

#include "norm.h"

#define SB_RMS_BLOCK 32

/* additions on the longest rounding path of a row sum of c terms */
static inline size_t sb_rms_sum_path(size_t c)
{
    const size_t blocks = (c + SB_RMS_BLOCK - 1) / SB_RMS_BLOCK;
    return (c < SB_RMS_BLOCK ? c : SB_RMS_BLOCK) - 1 + (blocks > 0 ? blocks - 1 : 0);
}

static inline float sb_rms_rstd(const float *x, size_t c, float eps)
{
    float ss = 0.0f;
    for (size_t j0 = 0; j0 < c; j0 += SB_RMS_BLOCK) {
        const size_t j1 = j0 + SB_RMS_BLOCK < c ? j0 + SB_RMS_BLOCK : c;
        float block = 0.0f;
        for (size_t j = j0; j < j1; j++)
            block += x[j] * x[j];
        ss += block;
    }
    return 1.0f / sqrtf(ss / (float)c + eps);
}

/* a row's stats as layer norm's gamma gradient reads them: xhat = (x - 0) *
 * rstd, x * rstd to the bit */
static inline sb_norm_stats sb_rms_row_stats(const float *x, size_t c, float eps)
{
    return (sb_norm_stats){0.0f, sb_rms_rstd(x, c, eps)};
}

static inline void sb_rmsnorm_row(float *y, const float *x, const float *gamma, size_t c,
                                  float eps)
{
    const float rstd = sb_rms_rstd(x, c, eps);
    for (size_t j = 0; j < c; j++)
        y[j] = (x[j] * rstd) * gamma[j];
}

static inline void sb_rmsnorm_row_bwd(float *dx, const float *dy, const float *x,
                                      const float *gamma, size_t c, float eps)
{
    const float rstd = sb_rms_rstd(x, c, eps);
    float sum = 0.0f;
    for (size_t j0 = 0; j0 < c; j0 += SB_RMS_BLOCK) {
        const size_t j1 = j0 + SB_RMS_BLOCK < c ? j0 + SB_RMS_BLOCK : c;
        float block = 0.0f;
        for (size_t j = j0; j < j1; j++)
            block += (gamma[j] * dy[j]) * (x[j] * rstd);
        sum += block;
    }
    const float b = sum / (float)c;
    for (size_t j = 0; j < c; j++)
        dx[j] = rstd * (gamma[j] * dy[j] - (x[j] * rstd) * b);
}

#endif
