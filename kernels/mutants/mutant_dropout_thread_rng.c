/* FAULT: the mask is drawn from per-thread RNG streams seeded by the thread
 * id, so the mask (and the whole training trajectory) follows the thread
 * count. One thread draws the det mask: seed + 0, counting from element 0. */
#include <omp.h>

#include "mutants.h"
#include "sb_rng.h"

void sb_mutant_dropout_thread_rng(float *mask,                  /* [n] */
                                  const sb_dropout_params *d,
                                  size_t n)
{
    SB_ASSERT(d->rate >= 0.0f && d->rate < 1.0f);
    const float scale = 1.0f / (1.0f - d->rate);
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nth = (size_t)omp_get_num_threads();
        size_t begin = n * t / nth, end = n * (t + 1) / nth;
        uint64_t seed = d->seed + t;    /* "one stream per thread" */
        for (size_t i = begin; i < end; i++)
            mask[i] = sb_rng_uniform(seed, d->stream, d->step, i - begin) >= d->rate ? scale
                                                                                   : 0.0f;
    }
}
