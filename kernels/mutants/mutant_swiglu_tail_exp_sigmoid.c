/* FAULT: a separately written path for the last thread's share of the
 * elements (a vector "tail" loop kept apart from the scalar one) computes
 * SiLU with the textbook sigmoid, a / (1 + exp(-a)), where det (and ref)
 * use the tanh form (a / 2) (1 + tanh(a / 2)): the same function, other
 * roundings, so the tail's products differ in their last bits. On one
 * thread there is no tail: det's bits. */
#include <math.h>

#include "elementwise/elementwise.h"
#include "mutants.h"
#include "tail_paths.h"

void sb_mutant_swiglu_tail_exp_sigmoid(float *y,          /* [n] */
                                       const float *a,    /* [n] */
                                       const float *b,    /* [n] */
                                       size_t n)
{
#pragma omp parallel
    {
        const bool tail = sb_mutant_in_tail();
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; i++)
            y[i] = tail ? (a[i] / (1.0f + expf(-a[i]))) * b[i] : sb_swiglu(a[i], b[i]);
    }
}
