/* The conv shape: the output size from the rest, and what is absurd. */
#include <limits.h>

#include "conv.h"

sb_status sb_conv_shape_complete(sb_conv_shape *s)
{
    if (s->n <= 0 || s->c <= 0 || s->h <= 0 || s->w <= 0 || s->k <= 0 ||
        s->r <= 0 || s->s <= 0 || s->stride <= 0 || s->pad < 0 ||
        s->pad >= s->r || s->pad >= s->s)
        return SB_ERR_SHAPE;
    /* In 64 bits: a pad near INT_MAX would overflow 2 * pad in int. */
    int64_t hp = (int64_t)s->h + 2 * (int64_t)s->pad - s->r;
    int64_t wp = (int64_t)s->w + 2 * (int64_t)s->pad - s->s;
    if (hp < 0 || wp < 0 || hp / s->stride + 1 > INT_MAX || wp / s->stride + 1 > INT_MAX)
        return SB_ERR_SHAPE;
    s->p = (int)(hp / s->stride + 1);
    s->q = (int)(wp / s->stride + 1);
    return SB_OK;
}

/* a * b for a, b > 0, or INT64_MAX when that overflows: an absurd size
 * stays absurd. */
static int64_t product(int64_t a, int64_t b)
{
    return a > INT64_MAX / b ? INT64_MAX : a * b;
}

int64_t sb_conv_scratch_floats(const sb_conv_shape *s)
{
    int64_t taps = product(product(s->c, s->r), s->s);
    int64_t groups = (s->n + SB_CONV_GROUP - 1) / SB_CONV_GROUP;
    int64_t partials = product(product(s->k, taps), groups);
    int64_t column = product(taps, product(s->p, s->q));
    return partials > column ? partials : column;
}
