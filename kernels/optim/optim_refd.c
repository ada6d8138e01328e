/* The global gradient norm in double: sqrt of the sum of the squares of the
 * float gradient, each square exact in double and the sum's relative error
 * about n 2^-53; the bound is the forward error E of optim_bound.c, which
 * holds for every family's order (det's path is shorter than n, the others'
 * at most n), with a factor 1 + 2^-30 for the double evaluation. */
#include <math.h>

#include "grad_norm.h"
#include "refd_sums.h"

void sb_grad_norm_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const double s = sb_grad_norm_sumsq(SB_REFD_IN(c, 0), c->n);
    *value = sqrt(s);
    *bound = sb_grad_norm_error(s, c->n) * (1.0 + 0x1p-30);
}
