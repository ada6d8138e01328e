/* The helpers every reordering bound uses (sb_kernels.h). */
#include <math.h>

#include "sb_kernels.h"

double sb_gamma(double n)
{
    const double u = 0x1p-24;
    SB_ASSERT(n * u < 1.0);
    return n * u / (1.0 - n * u);
}

float sb_dot_bound(double nterms, double abs_sum)
{
    double d = 2.0 * sb_gamma(nterms) * abs_sum;
    float f = (float)d;
    if ((double)f < d)
        f = nextafterf(f, INFINITY);
    return f;
}
