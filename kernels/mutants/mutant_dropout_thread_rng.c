/* FAULT: the mask is drawn from per-thread RNG streams seeded by the thread
 * id, so the mask (and the whole training trajectory) follows the thread
 * count. One thread draws the det mask: seed + 0, counting from element 0. */
#include <omp.h>

#include "elementwise/elementwise.h"
#include "mutants.h"

void sb_mutant_dropout_thread_rng(float *mask,                  /* [n] */
                                  const sb_dropout_params *d,
                                  size_t n)
{
    const float scale = sb_dropout_scale(d);
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nth = (size_t)omp_get_num_threads();
        size_t begin = n * t / nth, end = n * (t + 1) / nth;
        sb_dropout_params mine = *d;
        mine.seed += t;     /* "one stream per thread" */
        for (size_t i = begin; i < end; i++)
            mask[i] = sb_dropout_element(&mine, scale, i - begin);
    }
}
