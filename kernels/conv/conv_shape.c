/* The conv shape: the output size from the rest, and what is absurd. */
#include "sb_kernels.h"

sb_status sb_conv_shape_complete(sb_conv_shape *s)
{
    if (s->n <= 0 || s->c <= 0 || s->h <= 0 || s->w <= 0 || s->k <= 0 ||
        s->r <= 0 || s->s <= 0 || s->stride <= 0 || s->pad < 0 ||
        s->pad >= s->r || s->pad >= s->s)
        return SB_ERR_SHAPE;
    int64_t hp = (int64_t)s->h + 2 * s->pad - s->r;
    int64_t wp = (int64_t)s->w + 2 * s->pad - s->s;
    if (hp < 0 || wp < 0)
        return SB_ERR_SHAPE;
    s->p = (int)(hp / s->stride + 1);
    s->q = (int)(wp / s->stride + 1);
    return SB_OK;
}
