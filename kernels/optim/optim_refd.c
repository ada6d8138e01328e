/* The global gradient norm in double: sqrt of the sum of the squares of the
 * float gradient, each square exact in double and the sum's relative error
 * about n 2^-53; the bound is the forward error E of optim_bound.c with a
 * factor 1 + 2^-30 for the double evaluation. Its path: n for ref's one
 * chain and loose's reduction (whose split is not known here), and det's own
 * for det: a square (1 rounding), at most SB_NORM_BLOCK / SB_NORM_LANES
 * additions into its lane, SB_NORM_LANES adding up the lanes, one per block
 * adding up the blocks. So a det kernel that sums a long gradient in one
 * accumulator is within the naive bound and outside det's. */
#include <math.h>

#include "grad_norm.h"
#include "refd_sums.h"

void sb_grad_norm_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    const double n = (double)c->n;
    const double det_path = 1.0 + SB_NORM_BLOCK / SB_NORM_LANES + SB_NORM_LANES +
                            (double)sb_norm_blocks(c->n);
    const double path = f == SB_FAMILY_DET ? fmin(n, det_path) : n;
    const double s = sb_grad_norm_sumsq(SB_REFD_IN(c, 0), c->n);
    *value = sqrt(s);
    *bound = sb_grad_norm_error(s, c->n, path) * (1.0 + 0x1p-30);
}
