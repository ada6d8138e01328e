/* FAULT: a separately written path for the last thread's share of the
 * elements (a vector "tail" loop kept apart from the scalar one, as fast
 * paths with no vector erf have) computes GELU in its tanh approximation,
 * not the erf form the op is: they differ by up to 1.5e-4 on [-1, 1).
 * On one thread there is no tail: det's bits. */
#include "elementwise/elementwise.h"
#include "mutants.h"
#include "tail_paths.h"

static float gelu_erf(const float *const *in, size_t i)
{
    return sb_gelu_erf(in[0][i]);
}

static float gelu_tanh(const float *const *in, size_t i)
{
    return sb_gelu(in[0][i]);
}

void sb_mutant_gelu_erf_tail_tanh(float *y,          /* [n] */
                                  const float *x,    /* [n] */
                                  size_t n)
{
    sb_mutant_elements_with_tail(y, (const float *const[]){x}, n, gelu_erf, gelu_tanh);
}
