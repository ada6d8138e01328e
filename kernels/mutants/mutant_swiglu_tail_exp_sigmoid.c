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

static float swiglu(const float *const *in, size_t i)
{
    return sb_swiglu(in[0][i], in[1][i]);
}

static float swiglu_exp_sigmoid(const float *const *in, size_t i)
{
    const float a = in[0][i];
    return (a / (1.0f + expf(-a))) * in[1][i];
}

void sb_mutant_swiglu_tail_exp_sigmoid(float *y,          /* [n] */
                                       const float *a,    /* [n] */
                                       const float *b,    /* [n] */
                                       size_t n)
{
    sb_mutant_elements_with_tail(y, (const float *const[]){a, b}, n, swiglu, swiglu_exp_sigmoid);
}
