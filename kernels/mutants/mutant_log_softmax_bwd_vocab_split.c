/* FAULT: vocabulary-parallel log-softmax gradient (as tensor-parallel
 * cross-entropy splits the classes over devices): each row's sum of the
 * incoming gradient is cut into one contiguous run of classes per thread,
 * the partial sums added in thread order, and each thread writes its own
 * classes' gradients from that total. One thread's one run is det's sum;
 * more threads bracket it otherwise, so every gradient of a row follows
 * the thread count through its sum. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "classifier/classifier.h"
#include "mutants.h"

void sb_mutant_log_softmax_bwd_vocab_split(float *dlogits,         /* [n][k] or [n][k][d] */
                                           const float *dlogprob,  /* [n][k] or [n][k][d] */
                                           const float *logprob,   /* [n][k] or [n][k][d] */
                                           const sb_class_shape *s)
{
    sb_class_shape_check(s, 0);
    const size_t k = (size_t)s->k, stride = sb_class_stride(s);
    const int threads = omp_get_max_threads();
    float *part = calloc((size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        const int me = omp_get_thread_num(), team = omp_get_num_threads();
        const size_t lo = k * (size_t)me / (size_t)team, hi = k * (size_t)(me + 1) / (size_t)team;
        for (size_t e = 0; e < sb_class_rows(s); e++) {
            const size_t at = sb_class_row_at(s, e);
            float sum = 0.0f;
            for (size_t j = lo; j < hi; j++)
                sum += dlogprob[at + j * stride];
            part[me] = sum;
#pragma omp barrier
            float total = 0.0f;
            for (int t = 0; t < team; t++)
                total += part[t];
            for (size_t j = lo; j < hi; j++)
                dlogits[at + j * stride] =
                    dlogprob[at + j * stride] - expf(logprob[at + j * stride]) * total;
#pragma omp barrier
        }
    }
    free(part);
}
