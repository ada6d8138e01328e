/* FAULT: a separately written path for the last thread's share of the
 * elements (a vector "tail" loop kept apart from the scalar one, as fast
 * paths with no vector erf have) computes GELU in its tanh approximation,
 * not the erf form the op is: they differ by up to 1.5e-4 on [-1, 1).
 * On one thread there is no tail: det's bits. */
#include "elementwise/elementwise.h"
#include "mutants.h"
#include "tail_paths.h"

void sb_mutant_gelu_erf_tail_tanh(float *y,          /* [n] */
                                  const float *x,    /* [n] */
                                  size_t n)
{
#pragma omp parallel
    {
        const bool tail = sb_mutant_in_tail();
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; i++)
            y[i] = tail ? sb_gelu(x[i]) : sb_gelu_erf(x[i]);
    }
}
