/* The classifier's batch reductions, loose family: an OpenMP reduction
 * clause over rows, so the loss's bits follow the thread count (the count of
 * correct rows is an integer: its bits do not). */
#include "classifier.h"

void sb_xent_loss_loose(float *loss,            /* [1] */
                        const float *logits,    /* [n][k] */
                        const int32_t *labels,  /* [n] in [0, k) */
                        const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
    float sum = 0.0f;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (int i = 0; i < s->n; i++)
        sum += sb_row_loss(logits + (size_t)i * k, labels[i], s->k);
    *loss = sum / (float)s->n;
}

void sb_accuracy_loose(float *acc,              /* [1] */
                       const float *prob,       /* [n][k] */
                       const int32_t *labels,   /* [n] in [0, k) */
                       const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
    int64_t count = 0;
#pragma omp parallel for schedule(static) reduction(+ : count)
    for (int i = 0; i < s->n; i++)
        count += sb_row_correct(prob + (size_t)i * k, labels[i], s->k);
    *acc = sb_accuracy_of(count, s->n);
}
