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
 * A row's sums run in layer norm's one fixed order (norm.h): blocks of
 * SB_NORM_BLOCK elements, each from +0 in index order, the block sums
 * combined pairwise (sb_norm_pairwise), whose longest rounding path is
 * sb_norm_sum_path(c) additions instead of c - 1. Each operation rounds
 * once (-ffp-contract=off). */
#ifndef SB_RMSNORM_H
#define SB_RMSNORM_H

#include <math.h>
#include <stddef.h>

#include "norm.h"

/* the sum of the squares of x[0..c) */
static inline float sb_rms_sumsq(const float *x, size_t c)
{
    sb_norm_pairwise ss = {.blocks = 0};
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float block = 0.0f;
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++)
            block += x[j] * x[j];
        sb_norm_pairwise_add(&ss, block);
    }
    return sb_norm_pairwise_end(&ss);
}

/* rstd of a row of c whose squares sum to ss */
static inline float sb_rms_rstd_of(float ss, size_t c, float eps)
{
    return 1.0f / sqrtf(ss / (float)c + eps);
}

static inline float sb_rms_rstd(const float *x, size_t c, float eps)
{
    return sb_rms_rstd_of(sb_rms_sumsq(x, c), c, eps);
}

/* a row's stats as layer norm's gamma gradient reads them: xhat = (x - 0) *
 * rstd, x * rstd to the bit */
static inline sb_norm_stats sb_rms_row_stats(const float *x, size_t c, float eps)
{
    return (sb_norm_stats){0.0f, sb_rms_rstd(x, c, eps)};
}

/* y = xhat * gamma for one row whose rstd is given */
static inline void sb_rmsnorm_row_apply(float *y, const float *x, const float *gamma, size_t c,
                                        float rstd)
{
    for (size_t j = 0; j < c; j++)
        y[j] = (x[j] * rstd) * gamma[j];
}

static inline void sb_rmsnorm_row(float *y, const float *x, const float *gamma, size_t c,
                                  float eps)
{
    sb_rmsnorm_row_apply(y, x, gamma, c, sb_rms_rstd(x, c, eps));
}

static inline void sb_rmsnorm_row_bwd(float *dx, const float *dy, const float *x,
                                      const float *gamma, size_t c, float eps)
{
    const float rstd = sb_rms_rstd(x, c, eps);
    sb_norm_pairwise sum = {.blocks = 0};
    for (size_t j0 = 0; j0 < c; j0 += SB_NORM_BLOCK) {
        float block = 0.0f;
        for (size_t j = j0; j < sb_norm_block_end(j0, c); j++)
            block += (gamma[j] * dy[j]) * (x[j] * rstd);
        sb_norm_pairwise_add(&sum, block);
    }
    const float b = sb_norm_pairwise_end(&sum) / (float)c;
    for (size_t j = 0; j < c; j++)
        dx[j] = rstd * (gamma[j] * dy[j] - (x[j] * rstd) * b);
}

#endif
