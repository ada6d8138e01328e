/* The negative log-likelihood, the readable definitions: positions in
 * order, one accumulator for each sum (nll.h). */
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
