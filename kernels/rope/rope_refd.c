/* RoPE in double: each output from its pair with the angle's cosine and sine
 * in double, and the bound of the float algorithm (running_error.h): the
 * table's entries each rounded once from those doubles (u |c|), the two
 * products and the sum each rounding once, and 3 2^-150 for products and a
 * sum that underflow. */
#include "refd_sums.h"
#include "rope.h"
#include "running_error.h"

static void rows_of(double *value, double *bound, const sb_op_call *c, int inverse)
{
    const sb_rope_shape *s = &c->rope;
    const float *x = SB_REFD_IN(c, 0);
    const size_t pairs = (size_t)s->d / 2;
    for (size_t i = 0; i < (size_t)s->n; i++)
        for (size_t j = 0; j < (size_t)s->h; j++)
            for (size_t k = 0; k < pairs; k++) {
                const double a = sb_rope_angle(s, (int)(i % (size_t)s->t), (int)k);
                const sb_err co = sb_err_round(cos(a), 0.0), sn = sb_err_round(sin(a), 0.0);
                const size_t at = (i * (size_t)s->h + j) * (size_t)s->d + 2 * k;
                const sb_err x0 = sb_err_exact((double)x[at]), x1 = sb_err_exact((double)x[at + 1]);
                const sb_err y0 = inverse ? sb_err_add(sb_err_mul(x0, co), sb_err_mul(x1, sn))
                                          : sb_err_sub(sb_err_mul(x0, co), sb_err_mul(x1, sn));
                const sb_err y1 = inverse ? sb_err_sub(sb_err_mul(x1, co), sb_err_mul(x0, sn))
                                          : sb_err_add(sb_err_mul(x0, sn), sb_err_mul(x1, co));
                value[at] = y0.v;
                value[at + 1] = y1.v;
                bound[at] = y0.e * SB_ERR_SLACK + 3.0 * SB_REFD_UNDERFLOW;
                bound[at + 1] = y1.e * SB_ERR_SLACK + 3.0 * SB_REFD_UNDERFLOW;
            }
}

void sb_rope_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    rows_of(value, bound, c, 0);
}

void sb_rope_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    rows_of(value, bound, c, 1);
}
