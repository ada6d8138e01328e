/* FAULT: vocabulary-parallel log-softmax (as tensor-parallel cross-entropy
 * splits the classes over devices): each row's classes are cut into one
 * contiguous run per thread, every thread takes the row's max (exact, the
 * same whatever the split) and the sum of exp(z - max) over its own run,
 * and the threads' partial sums are added in thread order. One thread's
 * one run is det's sum; more threads bracket it otherwise, so each row's
 * log of the sum, and so every log-probability, follows the thread count. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "classifier/classifier.h"
#include "mutants.h"

void sb_mutant_log_softmax_vocab_split(float *logprob,         /* [n][k] */
                                       const float *logits,    /* [n][k] */
                                       const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    SB_ASSERT(s->d <= 1); /* rows of k contiguous classes */
    const size_t k = (size_t)s->k;
    const int threads = omp_get_max_threads();
    float *part = calloc((size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        const int me = omp_get_thread_num(), team = omp_get_num_threads();
        const size_t lo = k * (size_t)me / (size_t)team, hi = k * (size_t)(me + 1) / (size_t)team;
        for (int i = 0; i < s->n; i++) {
            const float *z = logits + (size_t)i * k;
            const float m = sb_row_max(z, s->k);
            float sum = 0.0f;
            for (size_t j = lo; j < hi; j++)
                sum += expf(z[j] - m);
            part[me] = sum;
#pragma omp barrier
            float total = 0.0f;
            for (int t = 0; t < team; t++)
                total += part[t];
            const float ls = logf(total);
            for (size_t j = lo; j < hi; j++)
                logprob[(size_t)i * k + j] = (z[j] - m) - ls;
#pragma omp barrier
        }
    }
    free(part);
}
