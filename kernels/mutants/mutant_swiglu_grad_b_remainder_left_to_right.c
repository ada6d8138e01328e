/* FAULT: each thread's share of SwiGLU's gradient to its up projection,
 * db = dy silu(a), runs as a main loop over groups of 64 elements and a
 * separately written remainder loop (tail_paths.h), and the remainder
 * spells the product out as one expression, dy * 0.5f * a * (1 + t),
 * which C evaluates left to right: ((dy a / 2) (1 + t)), not det's
 * dy ((a / 2) (1 + t)). The same product, another association: other bits
 * on some of the remainder's elements. On one thread over a multiple of 64
 * elements there is no remainder: det's bits. */
#include "elementwise/elementwise.h"
#include "mutants.h"
#include "tail_paths.h"

static float grad_b_left_to_right(float dy, float a)
{
    return dy * 0.5f * a * (1.0f + sb_tanhf(0.5f * a));
}

void sb_mutant_swiglu_grad_b_remainder_left_to_right(float *db,         /* [n] */
                                                     const float *dy,   /* [n] */
                                                     const float *a,    /* [n] gate input */
                                                     size_t n)
{
    sb_mutant_pairs_with_remainder(db, dy, a, n, sb_swiglu_grad_b, grad_b_left_to_right);
}
