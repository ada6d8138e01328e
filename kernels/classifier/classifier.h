/* The classifier area's shared pieces, for its own files, its tests and the
 * mutants of its ops (kernels/mutants/): the per-row steps every family runs
 * (so that ref, det and loose differ only in how rows are shared and their
 * results combined), and the fixed row blocks of the det reductions.
 *
 * softmax: numerically stable, with m the row maximum,
 * p_j = exp(z_j - m) / sum_i exp(z_i - m). Every exponent is <= 0, so nothing
 * overflows, and the largest term is exp(0) = 1, so the sum is at least 1 and
 * nothing divides by an underflowed 0. Logits of +-1000 give finite
 * probabilities. A NaN logit, an Inf logit or a row of -Inf gives a NaN row
 * (Inf - Inf), which the probe then reports.
 *
 * cross-entropy: loss = (1/n) sum_i l_i with l_i = logsumexp(z_i) - z_i[y_i],
 * computed as log(sum_j exp(z_ij - m_i)) + (m_i - z_i[y_i]): both terms are
 * >= 0 (the sum is >= 1), nothing overflows, and no probability is ever
 * rounded to 0 and then logged, so a confident wrong prediction gives a large
 * finite loss. Its gradient, dlogits = (prob - onehot(y)) / n, is elementwise
 * on prob.
 *
 * log-softmax: lp_j = z_j - log sum_i exp(z_i) over the classes, rows of k
 * or, in the layout (N, C, d1..dk), the middle axis of [n][k][d]; its
 * gradient dz_j = dlp_j - exp(lp_j) sum_i dlp_i per row.
 *
 * accuracy: the fraction of rows whose predicted class, the first maximum of
 * the row (ties go to the lowest class), equals the label. A row holding a NaN
 * has no prediction and counts as wrong. */
#ifndef SB_CLASSIFIER_H
#define SB_CLASSIFIER_H

#include <math.h>

#include "op_kernels.h"

/* A batch of rows: k > 0 classes, at least min_rows rows. */
static inline void sb_class_shape_check(const sb_class_shape *s, int min_rows)
{
    SB_ASSERT(s->n >= min_rows && s->k > 0);
}

/* The divisor of the loss gradient: the rows the mean loss is over. */
static inline float sb_class_mean_over(const sb_class_shape *s)
{
    SB_ASSERT(s->mean_over >= 0);
    return (float)(s->mean_over > 0 ? s->mean_over : s->n);
}

/* The largest logit of a row (NaNs are skipped here; they reach the output
 * through the exponentials). Exact, so its order does not matter. */
static inline float sb_row_max_at(const float *z /* [k] `stride` apart */, int k, size_t stride)
{
    float m = z[0];
    for (int j = 1; j < k; j++)
        if (z[(size_t)j * stride] > m)
            m = z[(size_t)j * stride];
    return m;
}

static inline float sb_row_max(const float *z /* [k] */, int k)
{
    return sb_row_max_at(z, k, 1);
}

/* sum_j exp(z[j] - m) in j order: the one reduction of a softmax row. */
static inline float sb_row_expsum_at(const float *z /* [k] `stride` apart */, float m, int k,
                                     size_t stride)
{
    float s = 0.0f;
    for (int j = 0; j < k; j++)
        s += expf(z[(size_t)j * stride] - m);
    return s;
}

static inline float sb_row_expsum(const float *z /* [k] */, float m, int k)
{
    return sb_row_expsum_at(z, m, k, 1);
}

/* One row of the softmax. */
static inline void sb_softmax_row(float *p, const float *z, int k)
{
    const float m = sb_row_max(z, k);
    const float s = sb_row_expsum(z, m, k);
    for (int j = 0; j < k; j++)
        p[j] = expf(z[j] - m) / s;
}

/* The rows of the log-softmax's layout (N, C, d1..dk): n d rows of k
 * classes, row e = i d + p (sample i, position p) holding z[i][0..k)[p],
 * its classes d apart (d = 1 without positions). */
static inline size_t sb_class_stride(const sb_class_shape *s)
{
    SB_ASSERT(s->d >= 0);
    return s->d > 1 ? (size_t)s->d : 1;
}

static inline size_t sb_class_rows(const sb_class_shape *s)
{
    return (size_t)s->n * sb_class_stride(s);
}

/* the offset of row e's first class */
static inline size_t sb_class_row_at(const sb_class_shape *s, size_t e)
{
    const size_t d = sb_class_stride(s);
    return (e / d) * (size_t)s->k * d + e % d;
}

/* One row of the log-softmax, (z_j - m) - logf(S) (PyTorch's order), its
 * classes `stride` apart. */
static inline void sb_log_softmax_row(float *lp, const float *z, int k, size_t stride)
{
    const float m = sb_row_max_at(z, k, stride);
    const float ls = logf(sb_row_expsum_at(z, m, k, stride));
    for (int j = 0; j < k; j++)
        lp[(size_t)j * stride] = (z[(size_t)j * stride] - m) - ls;
}

/* One row of the log-softmax's gradient (PyTorch's
 * _log_softmax_backward_data), classes `stride` apart: with S = sum_j dlp_j
 * from +0 in j order, dz_j = dlp_j - expf(lp_j) S, the product and the
 * difference each rounded once. */
static inline void sb_log_softmax_grad_row(float *dz, const float *dlp, const float *lp, int k,
                                           size_t stride)
{
    float sum = 0.0f;
    for (int j = 0; j < k; j++)
        sum += dlp[(size_t)j * stride];
    for (int j = 0; j < k; j++) {
        const size_t at = (size_t)j * stride;
        dz[at] = dlp[at] - expf(lp[at]) * sum;
    }
}

/* One row's cross-entropy, l_i. */
static inline float sb_row_loss(const float *z, int32_t label, int k)
{
    SB_ASSERT(label >= 0 && label < k);
    const float m = sb_row_max(z, k);
    return logf(sb_row_expsum(z, m, k)) + (m - z[label]);
}

/* One row of the cross-entropy's gradient over a batch of n rows. */
static inline void sb_xent_grad_row(float *d, const float *p, int32_t label, int k, float n)
{
    SB_ASSERT(label >= 0 && label < k);
    for (int j = 0; j < k; j++)
        d[j] = (p[j] - (j == label ? 1.0f : 0.0f)) / n;
}

/* 1 when the row's prediction is its label. */
static inline int sb_row_correct(const float *p, int32_t label, int k)
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

/* count <= n < 2^31; both convert to float exactly below 2^24, and the one
 * rounding of the division is the same in every family */
static inline float sb_accuracy_of(int64_t count, int n)
{
    return (float)count / (float)n;
}

/* The det reductions over rows split [0, n) into SB_ROW_BLOCKS blocks whose
 * bounds depend on n alone, reduce each block in row order, and combine the
 * block results in block order: the thread count never enters. 64 blocks
 * keep up to 64 threads busy. Part of the det definition. */
#define SB_ROW_BLOCKS 64

static inline int sb_row_block_begin(int n, int b)
{
    return (int)((int64_t)n * b / SB_ROW_BLOCKS);
}

/* Det's loss sums: part[b] is the sum, from +0 in row order, of the losses
 * of row block b (blocks in parallel). */
void sb_xent_block_sums(float part[SB_ROW_BLOCKS],
                        const float *logits,    /* [n][k] */
                        const int32_t *labels,  /* [n] in [0, k) */
                        const sb_class_shape *s);

#endif
