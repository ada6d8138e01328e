/* FAULT: RMSNorm's gamma gradient splits its rows into one contiguous run
 * per thread (the static schedule's share), each thread summing its rows
 * into a partial of its own, the partials added in thread order: the
 * bracketing of each column's row sum follows the thread count. Each term
 * dy * xhat is det's (the same row stats, rmsnorm.h). */
#include <omp.h>
#include <stdlib.h>

#include "mutants.h"
#include "norm/rmsnorm.h"

void sb_mutant_rmsnorm_gamma_thread_split(float *dgamma,        /* [c] */
                                          const float *dy,      /* [n][c] */
                                          const float *x,       /* [n][c] forward input */
                                          const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    const int threads = omp_get_max_threads();
    float *part = calloc(c * (size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        const int me = omp_get_thread_num(), nth = omp_get_num_threads();
        const size_t lo = (size_t)s->n * (size_t)me / (size_t)nth;
        const size_t hi = (size_t)s->n * (size_t)(me + 1) / (size_t)nth;
        float *mine = part + c * (size_t)me;
        for (size_t i = lo; i < hi; i++) {
            const sb_norm_stats st = sb_rms_row_stats(x + i * c, c, s->eps);
            for (size_t j = 0; j < c; j++)
                mine[j] += dy[i * c + j] * sb_norm_xhat(x[i * c + j], st);
        }
    }
    for (size_t j = 0; j < c; j++) {
        float sum = 0.0f;
        for (int t = 0; t < threads; t++)
            sum += part[(size_t)t * c + j];
        dgamma[j] = sum;
    }
    free(part);
}
