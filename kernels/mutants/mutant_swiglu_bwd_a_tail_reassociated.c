/* FAULT: a separately written path for the last thread's share of the
 * elements (an unfused "tail" that composes SiLU's backward with the
 * product) computes silu'(a) dy first and multiplies by b after, where det
 * (and ref) apply silu' to dy b: the same product of three factors,
 * associated otherwise, so the tail's results differ in their last bits.
 * On one thread there is no tail: det's bits. */
#include "elementwise/elementwise.h"
#include "mutants.h"
#include "tail_paths.h"

static float grad_a(const float *const *in, size_t i)
{
    return sb_swiglu_grad_a(in[0][i], in[1][i], in[2][i]);
}

/* silu'(a) dy, then times b */
static float grad_a_reassociated(const float *const *in, size_t i)
{
    return sb_silu_grad(in[0][i], in[1][i]) * in[2][i];
}

void sb_mutant_swiglu_bwd_a_tail_reassociated(float *da,          /* [n] */
                                              const float *dy,    /* [n] */
                                              const float *a,     /* [n] */
                                              const float *b,     /* [n] */
                                              size_t n)
{
    sb_mutant_elements_with_tail(da, (const float *const[]){dy, a, b}, n, grad_a,
                                 grad_a_reassociated);
}
