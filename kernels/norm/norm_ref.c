/* Layer norm and RMSNorm, the readable definitions: rows in order, the row
 * arithmetic of norm.h and rmsnorm.h; gamma's gradient sums the rows in order
 * from +0. */
#include <string.h>

#include "rmsnorm.h"

void sb_layernorm_fwd_ref(float *y,              /* [n][c] */
                          const float *x,        /* [n][c] */
                          const float *gamma,    /* [c] */
                          const float *beta,     /* [c] */
                          const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++)
        sb_layernorm_row(y + i * c, x + i * c, gamma, beta, c, s->eps);
}

void sb_layernorm_bwd_data_ref(float *dx,            /* [n][c] */
                               const float *dy,      /* [n][c] */
                               const float *x,       /* [n][c] forward input */
                               const float *gamma,   /* [c] */
                               const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++)
        sb_layernorm_row_bwd(dx + i * c, dy + i * c, x + i * c, gamma, c, s->eps);
}

static void gamma_ref(float *dgamma, const float *dy, const float *x, const sb_norm_shape *s,
                      sb_norm_stats_fn *stats)
{
    const size_t c = (size_t)s->c;
    memset(dgamma, 0, c * sizeof *dgamma);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const sb_norm_stats st = stats(x + i * c, c, s->eps);
        for (size_t j = 0; j < c; j++)
            dgamma[j] += dy[i * c + j] * sb_norm_xhat(x[i * c + j], st);
    }
}

void sb_layernorm_bwd_gamma_ref(float *dgamma,        /* [c] */
                                const float *dy,      /* [n][c] */
                                const float *x,       /* [n][c] forward input */
                                const sb_norm_shape *s)
{
    gamma_ref(dgamma, dy, x, s, sb_norm_row_stats);
}

void sb_rmsnorm_fwd_ref(float *y,              /* [n][c] */
                        const float *x,        /* [n][c] */
                        const float *gamma,    /* [c] */
                        const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++)
        sb_rmsnorm_row(y + i * c, x + i * c, gamma, c, s->eps);
}

void sb_rmsnorm_bwd_data_ref(float *dx,            /* [n][c] */
                             const float *dy,      /* [n][c] */
                             const float *x,       /* [n][c] forward input */
                             const float *gamma,   /* [c] */
                             const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++)
        sb_rmsnorm_row_bwd(dx + i * c, dy + i * c, x + i * c, gamma, c, s->eps);
}

void sb_rmsnorm_bwd_gamma_ref(float *dgamma,        /* [c] */
                              const float *dy,      /* [n][c] */
                              const float *x,       /* [n][c] forward input */
                              const sb_norm_shape *s)
{
    gamma_ref(dgamma, dy, x, s, sb_rms_row_stats);
}

/* a row's mean or rstd (the stats ONNX's LayerNormalization also outputs),
 * rows in order */
void sb_layernorm_mean_ref(float *mean,         /* [n] */
                           const float *x,      /* [n][c] */
                           const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++)
        mean[i] = sb_norm_row_stats(x + i * c, c, s->eps).mean;
}

void sb_layernorm_rstd_ref(float *rstd,         /* [n] */
                           const float *x,      /* [n][c] */
                           const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++)
        rstd[i] = sb_norm_row_stats(x + i * c, c, s->eps).rstd;
}
