/* The helpers every reordering bound uses (sb_kernels.h). */
#include <math.h>

#include "sb_kernels.h"
#include "sb_refd_floor.h"

/* 0: gamma is the worst case; lambda > 0: the probabilistic gamma of
 * sb_refd_floor.h, set only around one evaluation (refd_floor.c) */
static double gamma_lambda;

double sb_gamma(double n)
{
    const double u = 0x1p-24;
    SB_ASSERT(n * u < 1.0);
    const double worst = n * u / (1.0 - n * u);
    if (!(gamma_lambda > 0.0) || !(n > 0.0))
        return worst;
    /* Higham & Mary (2019), Theorem 2.4: |theta_n| <= exp(lambda sqrt(n) u
     * + n u^2 / (1 - u)) - 1, with probability at least
     * 1 - 2 exp(-lambda^2 (1 - u)^2 / 2); the worst case holds always */
    const double probable = expm1(gamma_lambda * sqrt(n) * u + n * u * u / (1.0 - u));
    return fmin(worst, probable);
}

double sb_gamma_lambda_set(double lambda)
{
    const double was = gamma_lambda;
    gamma_lambda = lambda;
    return was;
}

float sb_dot_bound(double nterms, double abs_sum)
{
    double d = 2.0 * sb_gamma(nterms) * abs_sum;
    float f = (float)d;
    if ((double)f < d)
        f = nextafterf(f, INFINITY);
    return f;
}
