/* The negative log-likelihood's sums, loose family: each thread sums the
 * positions the static schedule gives it and the partial sums are added in
 * thread order (as the classifier's loose cross-entropy), so the bits follow
 * the thread count and repeat from run to run at one count. */
#include <omp.h>
#include <stdlib.h>

#include "nll.h"

/* the sums of the terms and of the weights, per-thread partials; num NULL:
 * the weights alone (logprob not read) */
static void sums_loose(float *num, float *den, const float *logprob, const int32_t *labels,
                       const float *weight, const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    const int threads = omp_get_max_threads();
    float *part = calloc(2 * (size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
    const int64_t m = (int64_t)sb_nll_count(s);
#pragma omp parallel num_threads(threads)
    {
        float sum = 0.0f, wsum = 0.0f;
#pragma omp for schedule(static)
        for (int64_t e = 0; e < m; e++) {
            if (num != NULL)
                sum += sb_nll_term(logprob, labels, weight, s, (size_t)e);
            wsum += sb_nll_weight(weight, labels, s, (size_t)e);
        }
        part[2 * omp_get_thread_num()] = sum;
        part[2 * omp_get_thread_num() + 1] = wsum;
    }
    float total = 0.0f, wtotal = 0.0f;
    for (int t = 0; t < threads; t++) {
        total += part[2 * t];
        wtotal += part[2 * t + 1];
    }
    if (num != NULL)
        *num = total;
    *den = wtotal;
    free(part);
}

void sb_nll_loss_mean_loose(float *loss, const float *logprob, const int32_t *labels,
                            const float *weight, const sb_nll_shape *s)
{
    float num, den;
    sums_loose(&num, &den, logprob, labels, weight, s);
    *loss = num / den;
}

void sb_nll_loss_sum_loose(float *loss, const float *logprob, const int32_t *labels,
                           const float *weight, const sb_nll_shape *s)
{
    float num, den;
    sums_loose(&num, &den, logprob, labels, weight, s);
    *loss = num;
}

/* the mean's gradient: its W summed as the loose mean sums it, the rows
 * written in parallel, one writer a row */
void sb_nll_loss_mean_bwd_loose(float *dlogprob, const float *dloss, const int32_t *labels,
                                const float *weight, const sb_nll_shape *s)
{
    float den;
    sums_loose(NULL, &den, NULL, labels, weight, s);
    const float q = *dloss / den;
    sb_nll_grad_rows(dlogprob, &q, false, labels, weight, s);
}
