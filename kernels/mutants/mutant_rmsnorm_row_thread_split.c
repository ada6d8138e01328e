/* FAULT: RMSNorm parallel within each row, as a kernel for decode-sized
 * batches does (a few rows of thousands of columns, too few rows to keep
 * the threads busy): each row's sum of squares is cut into one contiguous
 * run of columns per thread, each run summed in det's blocks added
 * pairwise from its own first column, and the threads' partial sums are
 * added in thread order: the bracketing of every row's sum follows the
 * thread count. On one thread the one run is det's whole row: det's bits. */
#include <omp.h>
#include <stdlib.h>

#include "mutants.h"
#include "norm/rmsnorm.h"

void sb_mutant_rmsnorm_row_thread_split(float *y,              /* [n][c] */
                                        const float *x,        /* [n][c] */
                                        const float *gamma,    /* [c] */
                                        const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c, n = (size_t)s->n;
    const int threads = omp_get_max_threads();
    float *part = malloc(n * (size_t)threads * sizeof *part);
    SB_ASSERT(part != NULL || n == 0);
#pragma omp parallel num_threads(threads)
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        const size_t lo = c * me / team, hi = c * (me + 1) / team;
        for (size_t i = 0; i < n; i++)
            part[i * team + me] = sb_rms_sumsq(x + i * c + lo, hi - lo);
#pragma omp barrier
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; i++) {
            float ss = 0.0f;
            for (size_t t = 0; t < team; t++)
                ss += part[(size_t)i * team + t];
            sb_rmsnorm_row_apply(y + (size_t)i * c, x + (size_t)i * c, gamma, c,
                                 sb_rms_rstd_of(ss, c, s->eps));
        }
    }
    free(part);
}
