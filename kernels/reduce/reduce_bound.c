/* ReduceMean's reordering bound. Two orders of an output's sum of r terms
 * differ by at most 2 gamma(r - 1) A, A = sum |x|; each order's division by
 * r rounds once, u (|S| + gamma(r - 1) A) <= u (1 + gamma(r - 1)) A, so the
 * two means differ by at most (2 gamma(r - 1) + 2u (1 + gamma(r - 1))) A / r
 * <= 2 gamma(r + 1) A / r (gamma grows by at least u a term). In double,
 * rounded up to float. */
#include <math.h>

#include "reduce.h"
#include "running_error.h"

void sb_reduce_mean_bound(float *bound, const float *x, const sb_reduce_shape *s)
{
    sb_reduce_shape_check(s);
    for (size_t e = 0; e < sb_reduce_outputs(s); e++) {
        const float *t = x + sb_reduce_first(s, e);
        double a = 0.0;
        for (size_t i = 0; i < (size_t)s->r; i++)
            a += fabs((double)t[i * (size_t)s->inner]);
        bound[e] = sb_err_bound_float(2.0 * sb_gamma((double)s->r + 1.0) * a / (double)s->r, 1.0);
    }
}
