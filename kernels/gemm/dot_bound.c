/* See sb_dot_bound.h. */
#include <math.h>

#include "gemm/sb_dot_bound.h"
#include "sb_kernels.h"

float sb_dot_bound(double nterms, double abs_sum)
{
    double d = 2.0 * sb_gamma(nterms) * abs_sum;
    float f = (float)d;
    if ((double)f < d)
        f = nextafterf(f, INFINITY);
    return f;
}
