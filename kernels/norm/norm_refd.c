/* Layer norm in double, from the float inputs the op read, with the forward
 * error bound of the float row arithmetic of norm.h for any order of its
 * sums: the running error analysis of norm_error.h (every family's order
 * is one of those). Gamma's gradient sums the n rows' dy * xhat, each term
 * carrying its xhat's error; the sum's rounding is gamma(n - 1) times the
 * terms' magnitudes (any order). */
#include <stdlib.h>

#include "norm_error.h"
#include "refd_sums.h"

static void rows_of(double *value, double *bound, const sb_op_call *c, bool fwd)
{
    const sb_norm_shape *s = &c->norm;
    const size_t w = (size_t)s->c;
    sb_err *row = malloc(w * sizeof *row);
    SB_ASSERT(row != NULL);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        if (fwd)
            sb_err_layernorm_row(row, SB_REFD_IN(c, 0) + i * w, SB_REFD_IN(c, 1),
                                 SB_REFD_IN(c, 2), w, s->eps);
        else
            sb_err_layernorm_row_bwd(row, SB_REFD_IN(c, 0) + i * w, SB_REFD_IN(c, 1) + i * w,
                                     SB_REFD_IN(c, 2), w, s->eps);
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
    rows_of(value, bound, c, true);
}

void sb_layernorm_bwd_data_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    rows_of(value, bound, c, false);
}

void sb_layernorm_bwd_gamma_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_norm_shape *s = &c->norm;
    const size_t w = (size_t)s->c;
    const float *dy = SB_REFD_IN(c, 0), *x = SB_REFD_IN(c, 1);
    sb_err_sum *sum = calloc(w, sizeof *sum);
    SB_ASSERT(sum != NULL);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const sb_err_stats st = sb_err_row_stats(x + i * w, w, s->eps);
        for (size_t j = 0; j < w; j++)
            sb_err_sum_add(&sum[j], sb_err_mul(sb_err_exact((double)dy[i * w + j]),
                                               sb_err_xhat(x[i * w + j], &st)));
    }
    for (size_t j = 0; j < w; j++) {
        const sb_err g = sb_err_sum_end(&sum[j], (size_t)s->n);
        value[j] = g.v;
        bound[j] = g.e * SB_ERR_SLACK;
    }
    free(sum);
}
