/* The classifier ops, the readable definitions: rows in order, one
 * accumulator for the batch reductions (the per-row steps of classifier.h). */
#include "classifier.h"

void sb_softmax_fwd_ref(float *prob,            /* [n][k] */
                        const float *logits,    /* [n][k] */
                        const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    const size_t k = (size_t)s->k;
    for (int i = 0; i < s->n; i++)
        sb_softmax_row(prob + (size_t)i * k, logits + (size_t)i * k, s->k);
}

void sb_log_softmax_fwd_ref(float *logprob,         /* [n][k] or [n][k][d] */
                            const float *logits,    /* [n][k] or [n][k][d] */
                            const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    for (size_t e = 0; e < sb_class_rows(s); e++) {
        const size_t at = sb_class_row_at(s, e);
        sb_log_softmax_row(logprob + at, logits + at, s->k, sb_class_stride(s));
    }
}

void sb_log_softmax_bwd_ref(float *dlogits,         /* [n][k] or [n][k][d] */
                            const float *dlogprob,  /* [n][k] or [n][k][d] */
                            const float *logprob,   /* [n][k] or [n][k][d] */
                            const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    for (size_t e = 0; e < sb_class_rows(s); e++) {
        const size_t at = sb_class_row_at(s, e);
        sb_log_softmax_grad_row(dlogits + at, dlogprob + at, logprob + at, s->k,
                                sb_class_stride(s));
    }
}

void sb_xent_loss_ref(float *loss,              /* [1] */
                      const float *logits,      /* [n][k] */
                      const int32_t *labels,    /* [n] in [0, k) */
                      const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
    float sum = 0.0f;
    for (int i = 0; i < s->n; i++)
        sum += sb_row_loss(logits + (size_t)i * k, labels[i], s->k);
    *loss = sum / (float)s->n;
}

void sb_softmax_xent_bwd_ref(float *dlogits,            /* [n][k] */
                             const float *prob,         /* [n][k] softmax of the logits */
                             const int32_t *labels,     /* [n] in [0, k) */
                             const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
    for (int i = 0; i < s->n; i++)
        sb_xent_grad_row(dlogits + (size_t)i * k, prob + (size_t)i * k, labels[i], s->k,
                         sb_class_mean_over(s));
}

void sb_accuracy_ref(float *acc,                /* [1] */
                     const float *prob,         /* [n][k] */
                     const int32_t *labels,     /* [n] in [0, k) */
                     const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
    int64_t count = 0;
    for (int i = 0; i < s->n; i++)
        count += sb_row_correct(prob + (size_t)i * k, labels[i], s->k);
    *acc = sb_accuracy_of(count, s->n);
}
