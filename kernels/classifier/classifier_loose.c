/* The classifier's batch reductions, loose family: each thread sums the
 * rows the static schedule gives it and the partial sums are added in thread
 * order, so the loss's bits follow the thread count but repeat from run to
 * run at one count. (A reduction clause would combine the partials in the
 * order the threads arrive: libgomp's does, and its bits then change from run
 * to run from 3 threads on.) The count of correct rows is an integer, exact
 * in any order: a reduction clause. */
#include <omp.h>
#include <stdlib.h>

#include "classifier.h"

void sb_xent_loss_loose(float *loss,            /* [1] */
                        const float *logits,    /* [n][k] */
                        const int32_t *labels,  /* [n] in [0, k) */
                        const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const size_t k = (size_t)s->k;
    const int threads = omp_get_max_threads();
    float *part = calloc((size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float mine = 0.0f;
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++)
            mine += sb_row_loss(logits + (size_t)i * k, labels[i], s->k);
        part[omp_get_thread_num()] = mine;
    }
    float sum = 0.0f;
    for (int t = 0; t < threads; t++)
        sum += part[t];
    free(part);
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
