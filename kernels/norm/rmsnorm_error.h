/* Running error analysis (running_error.h) of RMSNorm's row arithmetic
 * (rmsnorm.h): each value with a bound on |float - exact| when every row sum
 * has rounding paths of at most `path` additions: c - 1 covers any order of
 * the c terms (doubled, the reordering bounds, norm_bound.c), and
 * sb_norm_sum_path(c) the blocked pairwise order every family runs (the
 * forward error of the double evaluations, norm_refd.c). */
#ifndef SB_RMSNORM_ERROR_H
#define SB_RMSNORM_ERROR_H

#include "rmsnorm.h"
#include "running_error.h"

static inline sb_err sb_err_rms_rstd(const float *x, size_t c, float eps, size_t path)
{
    sb_err_sum ss = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err v = sb_err_exact((double)x[j]);
        sb_err_sum_add(&ss, sb_err_mul(v, v));
    }
    const sb_err ms = sb_err_div(sb_err_sum_end_path(&ss, path), sb_err_exact((double)c));
    const sb_err root = sb_err_sqrt(sb_err_add(ms, sb_err_exact((double)eps)));
    return sb_err_div(sb_err_exact(1.0), root);
}

static inline sb_err sb_err_rms_xhat(float x, sb_err rstd)
{
    return sb_err_mul(sb_err_exact((double)x), rstd);
}

/* y row: value and error bound of each element */
static inline void sb_err_rmsnorm_row(sb_err *y, const float *x, const float *gamma, size_t c,
                                      float eps, size_t path)
{
    const sb_err rstd = sb_err_rms_rstd(x, c, eps, path);
    for (size_t j = 0; j < c; j++)
        y[j] = sb_err_mul(sb_err_rms_xhat(x[j], rstd), sb_err_exact((double)gamma[j]));
}

/* dx row: value and error bound of each element */
static inline void sb_err_rmsnorm_row_bwd(sb_err *dx, const float *dy, const float *x,
                                          const float *gamma, size_t c, float eps, size_t path)
{
    const sb_err rstd = sb_err_rms_rstd(x, c, eps, path);
    sb_err_sum sum = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        sb_err_sum_add(&sum, sb_err_mul(g, sb_err_rms_xhat(x[j], rstd)));
    }
    const sb_err b = sb_err_div(sb_err_sum_end_path(&sum, path), sb_err_exact((double)c));
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        dx[j] = sb_err_mul(rstd, sb_err_sub(g, sb_err_mul(sb_err_rms_xhat(x[j], rstd), b)));
    }
}

#endif
