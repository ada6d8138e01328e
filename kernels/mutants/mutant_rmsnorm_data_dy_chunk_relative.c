/* FAULT: each thread hands its share of the rows to a worker as views
 * that start at its first row (a sub-batch, as a per-thread or per-device
 * shard is), but offsets only x and dx: dy is passed from the start of the
 * batch, so the worker's rows take the gradient of the batch's first rows.
 * The first thread's share starts at row 0: one thread gives det's bits;
 * from two, every later share's gradients are another row's. */
#include <omp.h>

#include "mutants.h"
#include "norm/rmsnorm.h"

/* the rows of one share: dx, dy and x each from the share's first row */
static void share_bwd(float *dx, const float *dy, const float *x, const float *gamma,
                      size_t rows, size_t c, float eps)
{
    for (size_t i = 0; i < rows; i++)
        sb_rmsnorm_row_bwd(dx + i * c, dy + i * c, x + i * c, gamma, c, eps);
}

void sb_mutant_rmsnorm_data_dy_chunk_relative(float *dx,            /* [n][c] */
                                              const float *dy,      /* [n][c] */
                                              const float *x,       /* [n][c] forward input */
                                              const float *gamma,   /* [c] */
                                              const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c, n = (size_t)s->n;
#pragma omp parallel
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        const size_t first = n * me / team, end = n * (me + 1) / team;
        share_bwd(dx + first * c, dy, x + first * c, gamma, end - first, c, s->eps);
    }
}
