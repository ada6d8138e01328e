/* Running error analysis (running_error.h) of the row arithmetic of norm.h:
 * each value with a bound on |float - exact| for ANY order of the row's
 * sums. Doubled, it bounds two orders' difference: the reordering bounds
 * (norm_bound.c); as it is, the forward error of the double evaluations
 * (norm_refd.c). */
#ifndef SB_NORM_ERROR_H
#define SB_NORM_ERROR_H

#include "norm.h"
#include "running_error.h"

/* mean and rstd of a row as norm.h computes them, with their errors */
typedef struct sb_err_stats {
    sb_err mean, rstd;
} sb_err_stats;

static inline sb_err_stats sb_err_row_stats(const float *x, size_t c, float eps)
{
    const sb_err count = sb_err_exact((double)c);
    sb_err_sum sum = {0};
    for (size_t j = 0; j < c; j++)
        sb_err_sum_add(&sum, sb_err_exact((double)x[j]));
    const sb_err mean = sb_err_div(sb_err_sum_end(&sum, c), count);
    sb_err_sum sq = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err d = sb_err_sub(sb_err_exact((double)x[j]), mean);
        sb_err_sum_add(&sq, sb_err_mul(d, d));
    }
    const sb_err var = sb_err_div(sb_err_sum_end(&sq, c), count);
    const sb_err root = sb_err_sqrt(sb_err_add(var, sb_err_exact((double)eps)));
    return (sb_err_stats){mean, sb_err_div(sb_err_exact(1.0), root)};
}

static inline sb_err sb_err_xhat(float x, const sb_err_stats *st)
{
    return sb_err_mul(sb_err_sub(sb_err_exact((double)x), st->mean), st->rstd);
}

/* y row: value and error bound of each element */
static inline void sb_err_layernorm_row(sb_err *y, const float *x, const float *gamma,
                                        const float *beta, size_t c, float eps)
{
    const sb_err_stats st = sb_err_row_stats(x, c, eps);
    for (size_t j = 0; j < c; j++)
        y[j] = sb_err_add(sb_err_mul(sb_err_xhat(x[j], &st), sb_err_exact((double)gamma[j])),
                          sb_err_exact((double)beta[j]));
}

/* dx row: value and error bound of each element */
static inline void sb_err_layernorm_row_bwd(sb_err *dx, const float *dy, const float *x,
                                            const float *gamma, size_t c, float eps)
{
    const sb_err_stats st = sb_err_row_stats(x, c, eps);
    const sb_err count = sb_err_exact((double)c);
    sb_err_sum sum_g = {0}, sum_gx = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        sb_err_sum_add(&sum_g, g);
        sb_err_sum_add(&sum_gx, sb_err_mul(g, sb_err_xhat(x[j], &st)));
    }
    const sb_err a = sb_err_div(sb_err_sum_end(&sum_g, c), count);
    const sb_err b = sb_err_div(sb_err_sum_end(&sum_gx, c), count);
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        dx[j] = sb_err_mul(st.rstd, sb_err_sub(sb_err_sub(g, a), sb_err_mul(sb_err_xhat(x[j], &st), b)));
    }
}

#endif
