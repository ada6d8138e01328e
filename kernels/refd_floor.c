/* The precision test's three tensors of one op call (sb_refd_floor.h). */
#include <math.h>
#include <stdlib.h>

#include "sb_refd.h"
#include "sb_refd_floor.h"

double sb_refd_error(float got, double v)
{
    const double g = (double)got;
    if (isnan(g) || isnan(v))
        return isnan(g) && isnan(v) ? 0.0 : (double)INFINITY;
    if (isinf(g) || isinf(v))
        return isinf(g) && isinf(v) && signbit(g) == signbit(v) ? 0.0 : (double)INFINITY;
    return fabs(g - v);
}

static float round_up(double d)
{
    float f = (float)d;
    if ((double)f < d)
        f = nextafterf(f, INFINITY);
    return f;
}

bool sb_refd_precision_eval(float *err, float *seq_err, float *floor, const sb_op_call *c,
                            const float *got)
{
    if (!sb_refd_supported(c->op) || c->n_out != 1)
        return false;
    const size_t n = sb_tensor_count(&c->out[0]);
    double *value = malloc((n ? n : 1) * sizeof *value);
    double *bound = malloc((n ? n : 1) * sizeof *bound);
    float *seq = malloc((n ? n : 1) * sizeof *seq);
    bool ok = value && bound && seq;
    if (ok) {
        const double was = sb_gamma_lambda_set(SB_PRECISION_LAMBDA);
        sb_refd_eval(value, bound, c, 0, SB_FAMILY_LOOSE);
        sb_gamma_lambda_set(was);
        /* the serial definition on the same inputs: the plain loop order,
         * whose rounding errors follow any regularity of the data (a sum of
         * equal terms), which the random model of the floor does not see */
        sb_op_call r = *c;
        r.out[0].data = seq;
        sb_op_call_run(sb_kernels(SB_FAMILY_REF), &r);
        for (size_t i = 0; i < n; i++) {
            err[i] = round_up(sb_refd_error(got[i], value[i]));
            seq_err[i] = round_up(sb_refd_error(seq[i], value[i]));
            floor[i] = round_up(bound[i]);
        }
    }
    free(value);
    free(bound);
    free(seq);
    return ok;
}
