/* ReduceMean in double, from the float inputs the op read, with the forward
 * error bound of the family's order: the sum's bound (sb_refd_sum_bound, its
 * longest path m for ref and loose, det's chunks through sb_sum_det), then
 * the division's rounding. */
#include <math.h>

#include "gemm/sb_gemm.h"
#include "reduce.h"
#include "refd_sums.h"

void sb_reduce_mean_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    const sb_reduce_shape *s = &c->reduce;
    const double r = (double)s->r;
    const double chunks = ceil(r / SB_GEMM_KC);
    for (size_t e = 0; e < sb_reduce_outputs(s); e++) {
        const float *t = SB_REFD_IN(c, 0) + sb_reduce_first(s, e);
        double sum = 0.0, a = 0.0;
        for (size_t i = 0; i < (size_t)s->r; i++) {
            sum += (double)t[i * (size_t)s->inner];
            a += fabs((double)t[i * (size_t)s->inner]);
        }
        const double e0 = sb_refd_sum_bound(a, r, sb_refd_sum_path(f, r, chunks)) / r;
        value[e] = sum / r;
        bound[e] = e0 + SB_REFD_U * (fabs(value[e]) + e0) + SB_REFD_UNDERFLOW;
    }
}
