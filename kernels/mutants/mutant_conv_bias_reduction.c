/* FAULT: the bias gradient is split over images into per-thread partial
 * sums (the images the static schedule gives each thread), added in thread
 * order, so its order follows the thread count. On one thread the partial
 * runs the det order exactly. (Written with a reduction clause it would also
 * change from run to run: libgomp adds the partials in the order the threads
 * arrive; conv_bias_atomic is that fault.) */
#include <omp.h>
#include <stdlib.h>

#include "conv/conv.h"
#include "gemm/sb_gemm.h"
#include "mutants.h"

void sb_mutant_conv_bias_reduction(float *db,           /* [k] */
                                   const float *dy,     /* [n][k][p][q] */
                                   const sb_conv_shape *s)
{
    const size_t pq = (size_t)s->p * s->q;
    const int k = s->k, threads = omp_get_max_threads();
    float *part = calloc((size_t)k * (size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float *mine = part + (size_t)k * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
        for (int img = 0; img < s->n; img++)
            for (int f = 0; f < k; f++)
                mine[f] = sb_sum_det(dy + ((size_t)img * k + f) * pq, 1, pq, mine[f]);
        sb_partials_sum(db, part, (size_t)k, omp_get_num_threads());
    }
    free(part);
}
