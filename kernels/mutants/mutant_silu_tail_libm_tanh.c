/* FAULT: a separately written path for the last thread's share of the
 * elements (a scalar "tail" kept apart from the vector body) takes SiLU's
 * tanh from libm's tanhf where det (and ref) take samebits' own sb_tanhf
 * (elementwise/tanh.h): the same formula, (x / 2) (1 + tanh(x / 2)), with
 * another tanh, whose last bits differ on some inputs (and from one libm
 * to the next). On one thread there is no tail: det's bits. */
#include <math.h>

#include "elementwise/elementwise.h"
#include "mutants.h"
#include "tail_paths.h"

static float silu(const float *const *in, size_t i)
{
    return sb_silu(in[0][i]);
}

static float silu_libm(const float *const *in, size_t i)
{
    const float half = 0.5f * in[0][i];
    return half * (1.0f + tanhf(half));
}

void sb_mutant_silu_tail_libm_tanh(float *y,          /* [n] */
                                   const float *x,    /* [n] */
                                   size_t n)
{
    sb_mutant_elements_with_tail(y, (const float *const[]){x}, n, silu, silu_libm);
}
