/* Reordering bound of grad_norm. The sum S = sum_i g_i^2 of n nonnegative
 * terms, each square rounded once and every partial sum once, in any order
 * and bracketing (ref's one chain, det's lanes and blocks, a reduction's
 * partials: no term passes through more than n roundings), gives
 * S^ = S (1 + theta), |theta| <= gamma(n) (Higham 3.1; gamma(path) for an
 * order whose longest path of roundings is known to be shorter), plus at most
 * n 2^-150 from squares that underflow. The square root rounds once more:
 * norm^ = sqrt(S^)(1 + beta), |beta| <= u. So each order lies within
 *   E = sqrt(S) (1 - sqrt(1 - gamma(n)) (1 - u)) + sqrt(n 2^-150)
 * of sqrt(S) (the lower side is the wider one, sqrt being concave), and two
 * orders differ by at most 2E, taken with a factor 1 + 2^-30 for evaluating
 * it in double and rounded up. A non-finite gradient gives 0: no order
 * explains a difference there. */
#include <math.h>

#include "grad_norm.h"
#include "refd_sums.h"

double sb_grad_norm_error(double sumsq, size_t n, double path)
{
    const double g = sb_gamma(path);
    return sqrt(sumsq) * (1.0 - sqrt(1.0 - g) * (1.0 - SB_REFD_U)) +
           sqrt((double)n * SB_REFD_UNDERFLOW);
}

double sb_grad_norm_sumsq(const float *g, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)g[i] * (double)g[i];
    return s;
}

void sb_grad_norm_bound(float *bound,          /* [1] */
                        const float *g,        /* [n] */
                        size_t n)
{
    const double s = sb_grad_norm_sumsq(g, n);
    const double b = 2.0 * sb_grad_norm_error(s, n, (double)n) * (1.0 + 0x1p-30);
    float f = (float)b;
    if ((double)f < b)
        f = nextafterf(f, INFINITY);
    *bound = isfinite(b) ? f : 0.0f;
}
