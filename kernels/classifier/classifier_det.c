/* The classifier ops, det family. softmax, log-softmax and the gradients
 * are parallel over rows (log-softmax's over the n d rows of its positions'
 * layout), which is also how they are usually written, so no thread ever
 * splits a row: loose runs them too, and they match ref bit for bit (the
 * softmax bound still covers any other order of a row's sum). The batch
 * reductions (the loss, the correct count) add fixed row blocks in block
 * order (SB_ROW_BLOCKS): the count is an integer, exact in any order, but it
 * keeps to the det recipe all the same. */
#include "classifier.h"

void sb_softmax_fwd_det(float *prob,            /* [n][k] */
                        const float *logits,    /* [n][k] */
                        const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    const size_t k = (size_t)s->k;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        sb_softmax_row(prob + (size_t)i * k, logits + (size_t)i * k, s->k);
}

void sb_log_softmax_fwd_det(float *logprob,         /* [n][k] or [n][k][d] */
                            const float *logits,    /* [n][k] or [n][k][d] */
                            const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    const int64_t rows = (int64_t)sb_class_rows(s);
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < rows; e++) {
        const size_t at = sb_class_row_at(s, (size_t)e);
        sb_log_softmax_row(logprob + at, logits + at, s->k, sb_class_stride(s));
    }
}

void sb_log_softmax_bwd_det(float *dlogits,         /* [n][k] or [n][k][d] */
                            const float *dlogprob,  /* [n][k] or [n][k][d] */
                            const float *logprob,   /* [n][k] or [n][k][d] */
                            const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    const int64_t rows = (int64_t)sb_class_rows(s);
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < rows; e++) {
        const size_t at = sb_class_row_at(s, (size_t)e);
        sb_log_softmax_grad_row(dlogits + at, dlogprob + at, logprob + at, s->k,
                                sb_class_stride(s));
    }
}

void sb_xent_block_sums(float part[SB_ROW_BLOCKS], const float *logits, const int32_t *labels,
                        const sb_class_shape *s)
{
    const size_t k = (size_t)s->k;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < SB_ROW_BLOCKS; b++) {
        const int end = sb_row_block_begin(s->n, b + 1);
        float sum = 0.0f;
        for (int i = sb_row_block_begin(s->n, b); i < end; i++)
            sum += sb_row_loss(logits + (size_t)i * k, labels[i], s->k);
        part[b] = sum;
    }
}

void sb_xent_loss_det(float *loss,              /* [1] */
                      const float *logits,      /* [n][k] */
                      const int32_t *labels,    /* [n] in [0, k) */
                      const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    float part[SB_ROW_BLOCKS];
    sb_xent_block_sums(part, logits, labels, s);
    float sum = 0.0f;
    for (int b = 0; b < SB_ROW_BLOCKS; b++)
        sum += part[b];
    *loss = sum / (float)s->n;
}

void sb_softmax_xent_bwd_det(float *dlogits,            /* [n][k] */
                             const float *prob,         /* [n][k] softmax of the logits */
                             const int32_t *labels,     /* [n] in [0, k) */
                             const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        sb_xent_grad_row(dlogits + (size_t)i * k, prob + (size_t)i * k, labels[i], s->k,
                         sb_class_mean_over(s));
}

void sb_accuracy_det(float *acc,                /* [1] */
                     const float *prob,         /* [n][k] */
                     const int32_t *labels,     /* [n] in [0, k) */
                     const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
    int64_t part[SB_ROW_BLOCKS];
#pragma omp parallel for schedule(static)
    for (int b = 0; b < SB_ROW_BLOCKS; b++) {
        const int end = sb_row_block_begin(s->n, b + 1);
        int64_t count = 0;
        for (int i = sb_row_block_begin(s->n, b); i < end; i++)
            count += sb_row_correct(prob + (size_t)i * k, labels[i], s->k);
        part[b] = count;
    }
    int64_t count = 0;
    for (int b = 0; b < SB_ROW_BLOCKS; b++)
        count += part[b];
    *acc = sb_accuracy_of(count, s->n);
}
