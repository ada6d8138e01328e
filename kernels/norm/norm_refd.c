/* Layer norm and RMSNorm in double, from the float inputs the op read, with
 * the forward error bound of the float row arithmetic of norm.h and
 * rmsnorm.h for the blocked pairwise order of their row sums that every
 * family runs (sb_norm_sum_path): the running error analyses of
 * norm_error.h and rmsnorm_error.h. Gamma's gradient sums the n rows'
 * dy * xhat, each term carrying its xhat's error; the sum's rounding is
 * gamma(n - 1) times the terms' magnitudes (any order). */
#include <stdlib.h>

#include "norm_error.h"
#include "rmsnorm_error.h"
#include "refd_sums.h"

typedef enum row_op { LN_FWD, LN_BWD, RMS_FWD, RMS_BWD } row_op;

static void rows_of(double *value, double *bound, const sb_op_call *c, row_op op)
{
    const sb_norm_shape *s = &c->norm;
    const size_t w = (size_t)s->c;
    sb_err *row = malloc(w * sizeof *row);
    SB_ASSERT(row != NULL);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        switch (op) {
        case LN_FWD:
            sb_err_layernorm_row(row, SB_REFD_IN(c, 0) + i * w, SB_REFD_IN(c, 1),
                                 SB_REFD_IN(c, 2), w, s->eps, sb_norm_sum_path(w));
            break;
        case LN_BWD:
            sb_err_layernorm_row_bwd(row, SB_REFD_IN(c, 0) + i * w, SB_REFD_IN(c, 1) + i * w,
                                     SB_REFD_IN(c, 2), w, s->eps, sb_norm_sum_path(w));
            break;
        case RMS_FWD:
            sb_err_rmsnorm_row(row, SB_REFD_IN(c, 0) + i * w, SB_REFD_IN(c, 1), w, s->eps,
                               sb_norm_sum_path(w));
            break;
        case RMS_BWD:
            sb_err_rmsnorm_row_bwd(row, SB_REFD_IN(c, 0) + i * w, SB_REFD_IN(c, 1) + i * w,
                                   SB_REFD_IN(c, 2), w, s->eps, sb_norm_sum_path(w));
            break;
        }
        for (size_t j = 0; j < w; j++) {
            value[i * w + j] = row[j].v;
            bound[i * w + j] = row[j].e * SB_ERR_SLACK;
        }
    }
    free(row);
}

void sb_layernorm_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    rows_of(value, bound, c, LN_FWD);
}

void sb_layernorm_bwd_data_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    rows_of(value, bound, c, LN_BWD);
}

/* gamma's gradient of layer norm or RMSNorm (rms), with its error */
static void gamma_of(double *value, double *bound, const sb_op_call *c, bool rms)
{
    const sb_norm_shape *s = &c->norm;
    const size_t w = (size_t)s->c;
    const float *dy = SB_REFD_IN(c, 0), *x = SB_REFD_IN(c, 1);
    sb_err_sum *sum = calloc(w, sizeof *sum);
    SB_ASSERT(sum != NULL);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const float *xi = x + i * w;
        const sb_err_stats st = rms ? (sb_err_stats){sb_err_exact(0.0), sb_err_rms_rstd(
                                          xi, w, s->eps, sb_norm_sum_path(w))}
                                    : sb_err_row_stats(xi, w, s->eps, sb_norm_sum_path(w));
        for (size_t j = 0; j < w; j++)
            sb_err_sum_add(&sum[j], sb_err_mul(sb_err_exact((double)dy[i * w + j]),
                                               sb_err_xhat(xi[j], &st)));
    }
    for (size_t j = 0; j < w; j++) {
        const sb_err g = sb_err_sum_end(&sum[j], (size_t)s->n);
        value[j] = g.v;
        bound[j] = g.e * SB_ERR_SLACK;
    }
    free(sum);
}

void sb_layernorm_bwd_gamma_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    gamma_of(value, bound, c, false);
}

void sb_rmsnorm_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    rows_of(value, bound, c, RMS_FWD);
}

void sb_rmsnorm_bwd_data_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    rows_of(value, bound, c, RMS_BWD);
}

void sb_rmsnorm_bwd_gamma_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    gamma_of(value, bound, c, true);
}

/* a row's mean or rstd with its error, for the blocked pairwise order */
static void stats_of(double *value, double *bound, const sb_op_call *c, bool rstd)
{
    const sb_norm_shape *s = &c->norm;
    const size_t w = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const sb_err_stats st =
            sb_err_row_stats(SB_REFD_IN(c, 0) + i * w, w, s->eps, sb_norm_sum_path(w));
        const sb_err e = rstd ? st.rstd : st.mean;
        value[i] = e.v;
        bound[i] = e.e * SB_ERR_SLACK;
    }
}

void sb_layernorm_mean_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    stats_of(value, bound, c, false);
}

void sb_layernorm_rstd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    stats_of(value, bound, c, true);
}
