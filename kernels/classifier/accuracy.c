/* Accuracy: the fraction of rows whose predicted class, the first maximum of
 * the row (ties go to the lowest class), equals the label. A row holding a NaN
 * has no prediction and counts as wrong.
 *
 * The count is an integer, exact in any order; still, det keeps to the det
 * recipe (fixed row blocks combined in block order) and loose uses the usual
 * reduction clause. Both give the ref bits. */
#include <math.h>

#include "classifier.h"

static int row_correct(const float *p, int32_t label, int k)
{
    SB_ASSERT(label >= 0 && label < k);
    int best = 0;
    for (int j = 0; j < k; j++) {
        if (isnan(p[j]))
            return 0;
        if (p[j] > p[best])
            best = j;
    }
    return best == label;
}

static void check_shape(const sb_class_shape *s)
{
    SB_ASSERT(s->n > 0 && s->k > 0);
}

/* count <= n < 2^31; both convert to float exactly below 2^24, and the one
 * rounding of the division is the same in every family */
static float fraction(int64_t count, int n)
{
    return (float)count / (float)n;
}

void sb_accuracy_ref(float *acc,                /* [1] */
                     const float *prob,         /* [n][k] */
                     const int32_t *labels,     /* [n] in [0, k) */
                     const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    int64_t count = 0;
    for (int i = 0; i < s->n; i++)
        count += row_correct(prob + (size_t)i * k, labels[i], s->k);
    *acc = fraction(count, s->n);
}

void sb_accuracy_det(float *acc,                /* [1] */
                     const float *prob,         /* [n][k] */
                     const int32_t *labels,     /* [n] in [0, k) */
                     const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    int64_t part[SB_ROW_BLOCKS];
#pragma omp parallel for schedule(static)
    for (int b = 0; b < SB_ROW_BLOCKS; b++) {
        const int end = sb_row_block_begin(s->n, b + 1);
        int64_t count = 0;
        for (int i = sb_row_block_begin(s->n, b); i < end; i++)
            count += row_correct(prob + (size_t)i * k, labels[i], s->k);
        part[b] = count;
    }
    int64_t count = 0;
    for (int b = 0; b < SB_ROW_BLOCKS; b++)
        count += part[b];
    *acc = fraction(count, s->n);
}

void sb_accuracy_loose(float *acc,              /* [1] */
                       const float *prob,       /* [n][k] */
                       const int32_t *labels,   /* [n] in [0, k) */
                       const sb_class_shape *s)
{
    check_shape(s);
    const size_t k = (size_t)s->k;
    int64_t count = 0;
#pragma omp parallel for schedule(static) reduction(+ : count)
    for (int i = 0; i < s->n; i++)
        count += row_correct(prob + (size_t)i * k, labels[i], s->k);
    *acc = fraction(count, s->n);
}
