/* FAULT: a separately written path for the last thread's share of the rows
 * (a "tail" loop kept apart from the main one) sums each row for its mean
 * in one sequential chain over the columns, the order the kernel had
 * before its row sums were blocked, instead of det's blocks of
 * SB_NORM_BLOCK added pairwise. On one thread there is no tail: det's
 * bits; from two threads the tail's means are another rounding. */
#include "mutants.h"
#include "norm/norm.h"
#include "tail_paths.h"

static float det_mean(const float *x, size_t c, float eps)
{
    return sb_norm_row_stats(x, c, eps).mean;
}

static float sequential_mean(const float *x, size_t c, float eps)
{
    (void)eps;
    float sum = 0.0f;
    for (size_t j = 0; j < c; j++)
        sum += x[j];
    return sum / (float)c;
}

void sb_mutant_layernorm_mean_sequential_tail(float *mean,          /* [n] */
                                              const float *x,       /* [n][c] */
                                              const sb_norm_shape *s)
{
    sb_mutant_rows_with_tail(mean, x, s, det_mean, sequential_mean);
}
