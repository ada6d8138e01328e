/* Layer-norm and RMSNorm reordering bounds.
 *   fwd, bwd_data  each element depends on its row's sums of c terms
 *                  (mean, variance; and the two of the backward) through
 *                  divisions and a square root, so the bound is not one
 *                  dot bound: the running error analysis of norm_error.h
 *                  bounds |float - exact| for any order of those sums, and
 *                  two orders differ by at most twice that
 *   bwd_gamma      dgamma[j] = sum over the n rows of t_i = dy * xhat, the
 *                  terms computed by every family with the same row
 *                  arithmetic: 2 gamma(n) sum |t_i| (sb_dot_bound)
 * Both norms' rows are analysed with row sums in any order (paths of c - 1
 * additions), which covers the blocked orders every family runs.
 * Evaluated in double, one writer per element, rounded up to float. */
#include <math.h>
#include <stdlib.h>

#include "norm_error.h"
#include "rmsnorm_error.h"

/* twice the running error bound of each element: dy NULL for the forward
 * pass (y from x, gamma, beta), else the data gradient (dx from dy, x, gamma);
 * rms for RMSNorm's (no beta) */
static void rows_bound(float *bound, const float *dy, const float *x, const float *gamma,
                       const float *beta, const sb_norm_shape *s, bool rms)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel
    {
        sb_err *row = malloc(c * sizeof *row);
        SB_ASSERT(row != NULL);
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++) {
            const size_t at = (size_t)i * c;
            if (rms && dy)
                sb_err_rmsnorm_row_bwd(row, dy + at, x + at, gamma, c, s->eps, c - 1);
            else if (rms)
                sb_err_rmsnorm_row(row, x + at, gamma, c, s->eps, c - 1);
            else if (dy)
                sb_err_layernorm_row_bwd(row, dy + at, x + at, gamma, c, s->eps, c - 1);
            else
                sb_err_layernorm_row(row, x + at, gamma, beta, c, s->eps, c - 1);
            for (size_t j = 0; j < c; j++)
                bound[at + j] = sb_err_bound_float(row[j].e, 2.0);
        }
        free(row);
    }
}

void sb_layernorm_fwd_bound(float *y, const float *x, const float *gamma, const float *beta,
                            const sb_norm_shape *s)
{
    rows_bound(y, NULL, x, gamma, beta, s, false);
}

void sb_layernorm_bwd_data_bound(float *dx, const float *dy, const float *x,
                                 const float *gamma, const sb_norm_shape *s)
{
    rows_bound(dx, dy, x, gamma, NULL, s, false);
}

static void gamma_bound(float *dgamma, const float *dy, const float *x, const sb_norm_shape *s,
                        sb_norm_stats_fn *stats)
{
    const size_t c = (size_t)s->c;
    double *abs_sum = calloc(c, sizeof *abs_sum);
    SB_ASSERT(abs_sum != NULL);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const sb_norm_stats st = stats(x + i * c, c, s->eps);
        for (size_t j = 0; j < c; j++)
            abs_sum[j] += fabs((double)(dy[i * c + j] * sb_norm_xhat(x[i * c + j], st)));
    }
    for (size_t j = 0; j < c; j++)
        dgamma[j] = sb_dot_bound((double)s->n, abs_sum[j]);
    free(abs_sum);
}

void sb_layernorm_bwd_gamma_bound(float *dgamma, const float *dy, const float *x,
                                  const sb_norm_shape *s)
{
    gamma_bound(dgamma, dy, x, s, sb_norm_row_stats);
}

void sb_rmsnorm_fwd_bound(float *y, const float *x, const float *gamma, const sb_norm_shape *s)
{
    rows_bound(y, NULL, x, gamma, NULL, s, true);
}

void sb_rmsnorm_bwd_data_bound(float *dx, const float *dy, const float *x, const float *gamma,
                               const sb_norm_shape *s)
{
    rows_bound(dx, dy, x, gamma, NULL, s, true);
}

void sb_rmsnorm_bwd_gamma_bound(float *dgamma, const float *dy, const float *x,
                                const sb_norm_shape *s)
{
    gamma_bound(dgamma, dy, x, s, sb_rms_row_stats);
}

/* a row's mean or rstd: twice its running error bound, row sums in any order */
static void stats_bound(float *bound, const float *x, const sb_norm_shape *s, bool rstd)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++) {
        const sb_err_stats st = sb_err_row_stats(x + (size_t)i * c, c, s->eps, c - 1);
        bound[i] = sb_err_bound_float(rstd ? st.rstd.e : st.mean.e, 2.0);
    }
}

void sb_layernorm_mean_bound(float *mean, const float *x, const sb_norm_shape *s)
{
    stats_bound(mean, x, s, false);
}

void sb_layernorm_rstd_bound(float *rstd, const float *x, const sb_norm_shape *s)
{
    stats_bound(rstd, x, s, true);
}
