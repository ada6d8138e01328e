/* Softmax over the k classes of each row, numerically stable: with m the row
 * maximum, p_j = exp(z_j - m) / sum_i exp(z_i - m). Every exponent is <= 0,
 * so nothing overflows, and the largest term is exp(0) = 1, so the sum is at
 * least 1 and nothing divides by an underflowed 0. Logits of +-1000 give
 * finite probabilities. A NaN logit, an Inf logit or a row of -Inf gives a NaN
 * row (Inf - Inf), which the probe then reports.
 *
 * The only reduction is each row's k-term sum. Softmax is parallelised over
 * rows, which is also how it is usually written, so no thread ever splits a
 * row: det and loose share one loop and match ref bit for bit. The reordering
 * bound (bound.c) still covers any other order of the row sum. */
#include <math.h>

#include "classifier.h"

static void softmax_row(float *p, const float *z, int k)
{
    const float m = sb_row_max(z, k);
    const float s = sb_row_expsum(z, m, k);
    for (int j = 0; j < k; j++)
        p[j] = expf(z[j] - m) / s;
}

static void check_shape(const sb_class_shape *s)
{
    SB_ASSERT(s->n >= 0 && s->k > 0);
}

void sb_softmax_fwd_ref(float *prob,            /* [n][k] */
                        const float *logits,    /* [n][k] */
                        const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    for (int i = 0; i < s->n; i++)
        softmax_row(prob + (size_t)i * k, logits + (size_t)i * k, s->k);
}

void sb_softmax_fwd_par(float *prob,            /* [n][k] */
                        const float *logits,    /* [n][k] */
                        const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        softmax_row(prob + (size_t)i * k, logits + (size_t)i * k, s->k);
}
