/* FAULT: a separately written path for the last thread's share of the rows
 * (a "tail" loop kept apart from the main one) sums each row for its mean
 * in one sequential chain over the columns, the order the kernel had
 * before its row sums were blocked, instead of det's blocks of
 * SB_NORM_BLOCK added pairwise. On one thread there is no tail: det's
 * bits; from two threads the tail's means are another rounding. */
#include <omp.h>

#include "mutants.h"
#include "norm/norm.h"

void sb_mutant_layernorm_mean_sequential_tail(float *mean,          /* [n] */
                                              const float *x,       /* [n][c] */
                                              const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel
    {
        const bool tail = omp_get_num_threads() > 1 &&
                          omp_get_thread_num() == omp_get_num_threads() - 1;
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++) {
            const float *xi = x + (size_t)i * c;
            if (!tail) {
                mean[i] = sb_norm_row_stats(xi, c, s->eps).mean;
                continue;
            }
            float sum = 0.0f;
            for (size_t j = 0; j < c; j++)
                sum += xi[j];
            mean[i] = sum / (float)c;
        }
    }
}
