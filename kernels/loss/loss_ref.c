/* The negative log-likelihood and its gradients, the readable definitions:
 * positions in order, one accumulator for each sum, rows in order (nll.h). */
#include "nll.h"

void sb_nll_loss_mean_ref(float *loss,             /* [1] */
                          const float *logprob,    /* [n][k][d] */
                          const int32_t *labels,   /* [n][d] */
                          const float *weight,     /* [k] */
                          const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    float num = 0.0f, den = 0.0f;
    for (size_t e = 0; e < sb_nll_count(s); e++) {
        num += sb_nll_term(logprob, labels, weight, s, e);
        den += sb_nll_weight(weight, labels, s, e);
    }
    *loss = num / den;
}

void sb_nll_loss_sum_ref(float *loss,             /* [1] */
                         const float *logprob,    /* [n][k][d] */
                         const int32_t *labels,   /* [n][d] */
                         const float *weight,     /* [k] */
                         const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    float num = 0.0f;
    for (size_t e = 0; e < sb_nll_count(s); e++)
        num += sb_nll_term(logprob, labels, weight, s, e);
    *loss = num;
}

void sb_nll_loss_none_ref(float *loss,             /* [n][d] */
                          const float *logprob,    /* [n][k][d] */
                          const int32_t *labels,   /* [n][d] */
                          const float *weight,     /* [k] */
                          const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    for (size_t e = 0; e < sb_nll_count(s); e++)
        loss[e] = sb_nll_term(logprob, labels, weight, s, e);
}

static void grad_ref(float *dlogprob, const float *q, bool per_position, const int32_t *labels,
                     const float *weight, const sb_nll_shape *s)
{
    for (size_t i = 0; i < (size_t)s->n; i++)
        sb_nll_grad_row(dlogprob, q, per_position, labels, weight, s, i);
}

void sb_nll_loss_mean_bwd_ref(float *dlogprob,         /* [n][k][d] */
                              const float *dloss,      /* [1] */
                              const int32_t *labels,   /* [n][d] */
                              const float *weight,     /* [k] */
                              const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    float den = 0.0f;
    for (size_t e = 0; e < sb_nll_count(s); e++)
        den += sb_nll_weight(weight, labels, s, e);
    const float q = *dloss / den;
    grad_ref(dlogprob, &q, false, labels, weight, s);
}

void sb_nll_loss_sum_bwd_ref(float *dlogprob,         /* [n][k][d] */
                             const float *dloss,      /* [1] */
                             const int32_t *labels,   /* [n][d] */
                             const float *weight,     /* [k] */
                             const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    grad_ref(dlogprob, dloss, false, labels, weight, s);
}

void sb_nll_loss_none_bwd_ref(float *dlogprob,         /* [n][k][d] */
                              const float *dloss,      /* [n][d] */
                              const int32_t *labels,   /* [n][d] */
                              const float *weight,     /* [k] */
                              const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    grad_ref(dlogprob, dloss, true, labels, weight, s);
}
