/* Categorical cross-entropy from the logits, and its gradient.
 *
 * loss = (1/n) sum_i l_i with l_i = logsumexp(z_i) - z_i[y_i], computed as
 * log(sum_j exp(z_ij - m_i)) + (m_i - z_i[y_i]): both terms are >= 0 (the sum
 * is >= 1), nothing overflows, and no probability is ever rounded to 0 and
 * then logged, so a confident wrong prediction gives a large finite loss.
 *
 * dlogits = (prob - onehot(y)) / n, the gradient of the mean loss; it is
 * elementwise on prob, so det and loose share one loop.
 *
 * The batch mean is the reduction whose order the families choose: ref adds
 * the rows in order; det adds fixed row blocks (classifier.h); loose uses an
 * OpenMP reduction clause, so its bits follow the thread count. */
#include <math.h>

#include "classifier.h"

static float row_loss(const float *z, int32_t label, int k)
{
    SB_ASSERT(label >= 0 && label < k);
    const float m = sb_row_max(z, k);
    return logf(sb_row_expsum(z, m, k)) + (m - z[label]);
}

static void check_shape(const sb_class_shape *s)
{
    SB_ASSERT(s->n > 0 && s->k > 0);
}

void sb_xent_loss_ref(float *loss,              /* [1] */
                      const float *logits,      /* [n][k] */
                      const int32_t *labels,    /* [n] in [0, k) */
                      const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    float sum = 0.0f;
    for (int i = 0; i < s->n; i++)
        sum += row_loss(logits + (size_t)i * k, labels[i], s->k);
    *loss = sum / (float)s->n;
}

void sb_xent_loss_det(float *loss,              /* [1] */
                      const float *logits,      /* [n][k] */
                      const int32_t *labels,    /* [n] in [0, k) */
                      const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    float part[SB_ROW_BLOCKS];
#pragma omp parallel for schedule(static)
    for (int b = 0; b < SB_ROW_BLOCKS; b++) {
        const int end = sb_row_block_begin(s->n, b + 1);
        float sum = 0.0f;
        for (int i = sb_row_block_begin(s->n, b); i < end; i++)
            sum += row_loss(logits + (size_t)i * k, labels[i], s->k);
        part[b] = sum;
    }
    float sum = 0.0f;
    for (int b = 0; b < SB_ROW_BLOCKS; b++)
        sum += part[b];
    *loss = sum / (float)s->n;
}

void sb_xent_loss_loose(float *loss,            /* [1] */
                        const float *logits,    /* [n][k] */
                        const int32_t *labels,  /* [n] in [0, k) */
                        const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    float sum = 0.0f;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (int i = 0; i < s->n; i++)
        sum += row_loss(logits + (size_t)i * k, labels[i], s->k);
    *loss = sum / (float)s->n;
}

static void grad_row(float *d, const float *p, int32_t label, int k, float n)
{
    SB_ASSERT(label >= 0 && label < k);
    for (int j = 0; j < k; j++)
        d[j] = (p[j] - (j == label ? 1.0f : 0.0f)) / n;
}

void sb_softmax_xent_bwd_ref(float *dlogits,            /* [n][k] */
                             const float *prob,         /* [n][k] softmax of the logits */
                             const int32_t *labels,     /* [n] in [0, k) */
                             const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    for (int i = 0; i < s->n; i++)
        grad_row(dlogits + (size_t)i * k, prob + (size_t)i * k, labels[i], s->k, (float)s->n);
}

void sb_softmax_xent_bwd_par(float *dlogits,            /* [n][k] */
                             const float *prob,         /* [n][k] softmax of the logits */
                             const int32_t *labels,     /* [n] in [0, k) */
                             const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        grad_row(dlogits + (size_t)i * k, prob + (size_t)i * k, labels[i], s->k, (float)s->n);
}
