/* FAULT: max pooling's gradient scattered in parallel over each plane's
 * output rows (more parallel work than the planes give), each thread
 * adding its contiguous run of a plane's window rows into a private
 * gradient of its own, zeroed, and the private gradients added in thread
 * order at the end: race-free, but where windows overlap an element that
 * is the argmax of windows in two threads' runs sums each run's terms
 * apart and then the partial sums, not its terms in the windows' order.
 * One thread's one run is ref's scatter, det's bits. */
#include <omp.h>
#include <stdlib.h>

#include "mutants.h"
#include "pool/pool.h"

void sb_mutant_maxpool_window_bwd_row_split(float *dx,             /* [n][c][h][w] */
                                            const float *dy,       /* [n][c][p][q] */
                                            const float *x,        /* [n][c][h][w] */
                                            const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const size_t p = (size_t)sb_window_p(s), q = (size_t)sb_window_q(s);
    const size_t planes = (size_t)s->n * (size_t)s->c;
    const size_t nx = planes * (size_t)s->h * (size_t)s->w;
    int32_t *indices = sb_window_indices_alloc(x, s);
    const int threads = omp_get_max_threads();
    float *part = calloc((size_t)threads * nx, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        float *mine = part + me * nx;
        for (size_t plane = 0; plane < planes; plane++)
            for (size_t i = p * me / team; i < p * (me + 1) / team; i++)
                for (size_t j = 0; j < q; j++) {
                    const size_t o = (plane * p + i) * q + j;
                    mine[indices[o]] += dy[o];
                }
    }
    for (size_t e = 0; e < nx; e++) {
        float sum = 0.0f;
        for (int t = 0; t < threads; t++)
            sum += part[(size_t)t * nx + e];
        dx[e] = sum;
    }
    free(part);
    free(indices);
}
