/* ReduceMean, the readable definition: each output's sum from +0 in index
 * order, then the division. */
#include "reduce.h"

void sb_reduce_mean_ref(float *y,              /* [outer][inner] */
                        const float *x,        /* [outer][r][inner] */
                        const sb_reduce_shape *s)
{
    sb_reduce_shape_check(s);
    for (size_t e = 0; e < sb_reduce_outputs(s); e++) {
        const float *t = x + sb_reduce_first(s, e);
        float sum = 0.0f;
        for (size_t i = 0; i < (size_t)s->r; i++)
            sum += t[i * (size_t)s->inner];
        y[e] = sum / (float)s->r;
    }
}
