/* FAULT: the rows are cut into one equal block per thread, and rather than
 * handle a remainder the code asserts that the thread count divides the
 * rows: the process aborts when it does not. Where it does, the blocks'
 * counts are integers added exactly, and the accuracy is det's. */
#include <omp.h>

#include "classifier/classifier.h"
#include "mutants.h"

void sb_mutant_accuracy_even_split(float *acc,                /* [1] */
                                   const float *prob,         /* [n][k] */
                                   const int32_t *labels,     /* [n] in [0, k) */
                                   const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    const int threads = omp_get_max_threads();
    SB_ASSERT(s->n % threads == 0);
    const int rows = s->n / threads;
    int64_t count = 0;
#pragma omp parallel for schedule(static) reduction(+ : count)
    for (int t = 0; t < threads; t++)
        for (int i = t * rows; i < (t + 1) * rows; i++)
            count += sb_row_correct(prob + (size_t)i * (size_t)s->k, labels[i], s->k);
    *acc = sb_accuracy_of(count, s->n);
}
