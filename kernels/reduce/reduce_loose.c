/* ReduceMean, loose family: the reduced axis is split over the threads
 * (the usual way for few outputs of long sums), each thread summing its
 * static share of every output into a partial of its own, the partials
 * added in thread order: the bits follow the thread count and repeat from
 * run to run at one count. */
#include <omp.h>
#include <stdlib.h>

#include "reduce.h"

void sb_reduce_mean_loose(float *y, const float *x, const sb_reduce_shape *s)
{
    sb_reduce_shape_check(s);
    const size_t outputs = sb_reduce_outputs(s), inner = (size_t)s->inner;
    const int threads = omp_get_max_threads();
    float *part = calloc(outputs * (size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float *mine = part + outputs * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
        for (int i = 0; i < s->r; i++)
            for (size_t e = 0; e < outputs; e++)
                mine[e] += x[sb_reduce_first(s, e) + (size_t)i * inner];
    }
    for (size_t e = 0; e < outputs; e++) {
        float sum = 0.0f;
        for (int t = 0; t < threads; t++)
            sum += part[outputs * (size_t)t + e];
        y[e] = sum / (float)s->r;
    }
    free(part);
}
