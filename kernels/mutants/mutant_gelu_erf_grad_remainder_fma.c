/* FAULT: each thread's share of GELU's erf-form gradient runs as a main
 * loop over groups of 64 elements and a separately written scalar
 * remainder loop (tail_paths.h), and the remainder fuses the slope's
 * cdf + x pdf into one fmaf (a remainder written with fmaf, or compiled
 * with contraction on where the main loop is not): one rounding fewer,
 * other bits on some of the remainder's elements. On one thread over a
 * multiple of 64 elements there is no remainder: det's bits. */
#include <math.h>

#include "elementwise/elementwise.h"
#include "mutants.h"
#include "tail_paths.h"

/* sb_gelu_erf_grad with its sum fused */
static float grad_fused(float dy, float x)
{
    const float cdf = 0.5f * (1.0f + erff(x * SB_GELU_ERF_ALPHA));
    const float pdf = SB_GELU_ERF_BETA * expf((x * x) * -0.5f);
    return dy * fmaf(x, pdf, cdf);
}

void sb_mutant_gelu_erf_grad_remainder_fma(float *dx,         /* [n] */
                                           const float *dy,   /* [n] */
                                           const float *x,    /* [n] forward input */
                                           size_t n)
{
    sb_mutant_pairs_with_remainder(dx, dy, x, n, sb_gelu_erf_grad, grad_fused);
}
