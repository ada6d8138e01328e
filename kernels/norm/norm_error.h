/* Running error analysis (running_error.h) of the row arithmetic of norm.h:
 * each value with a bound on |float - exact| when every row sum has rounding
 * paths of at most `path` additions: c - 1 covers ANY order of the row's
 * sums (doubled, it bounds two orders' difference: the reordering bounds,
 * norm_bound.c), and sb_norm_sum_path(c) the blocked pairwise order every
 * family runs (the forward error of the double evaluations, norm_refd.c). */
#ifndef SB_NORM_ERROR_H
#define SB_NORM_ERROR_H

#include "norm.h"
#include "running_error.h"

/* mean and rstd of a row as norm.h computes them, with their errors */
typedef struct sb_err_stats {
    sb_err mean, rstd;
} sb_err_stats;

static inline sb_err_stats sb_err_row_stats(const float *x, size_t c, float eps, size_t path)
{
    const sb_err count = sb_err_exact((double)c);
    sb_err_sum sum = {0};
    for (size_t j = 0; j < c; j++)
        sb_err_sum_add(&sum, sb_err_exact((double)x[j]));
    const sb_err mean = sb_err_div(sb_err_sum_end_path(&sum, path), count);
    sb_err_sum sq = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err d = sb_err_sub(sb_err_exact((double)x[j]), mean);
        sb_err_sum_add(&sq, sb_err_mul(d, d));
    }
    const sb_err var = sb_err_div(sb_err_sum_end_path(&sq, path), count);
    const sb_err root = sb_err_sqrt(sb_err_add(var, sb_err_exact((double)eps)));
    return (sb_err_stats){mean, sb_err_div(sb_err_exact(1.0), root)};
}

static inline sb_err sb_err_xhat(float x, const sb_err_stats *st)
{
    return sb_err_mul(sb_err_sub(sb_err_exact((double)x), st->mean), st->rstd);
}

/* y row: value and error bound of each element */
static inline void sb_err_layernorm_row(sb_err *y, const float *x, const float *gamma,
                                        const float *beta, size_t c, float eps, size_t path)
{
    const sb_err_stats st = sb_err_row_stats(x, c, eps, path);
    for (size_t j = 0; j < c; j++)
        y[j] = sb_err_add(sb_err_mul(sb_err_xhat(x[j], &st), sb_err_exact((double)gamma[j])),
                          sb_err_exact((double)beta[j]));
}

/* dx row: value and error bound of each element */
static inline void sb_err_layernorm_row_bwd(sb_err *dx, const float *dy, const float *x,
                                            const float *gamma, size_t c, float eps,
                                            size_t path)
{
    const sb_err_stats st = sb_err_row_stats(x, c, eps, path);
    const sb_err count = sb_err_exact((double)c);
    sb_err_sum sum_g = {0}, sum_gx = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        sb_err_sum_add(&sum_g, g);
        sb_err_sum_add(&sum_gx, sb_err_mul(g, sb_err_xhat(x[j], &st)));
    }
    const sb_err a = sb_err_div(sb_err_sum_end_path(&sum_g, path), count);
    const sb_err b = sb_err_div(sb_err_sum_end_path(&sum_gx, path), count);
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        dx[j] = sb_err_mul(st.rstd, sb_err_sub(sb_err_sub(g, a), sb_err_mul(sb_err_xhat(x[j], &st), b)));
    }
}

#endif
