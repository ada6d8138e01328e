/* The ops without a reduction, in double.
 *
 * relu and maxpool only select or zero their inputs: the float result is
 * exact, bound 0 (relu passes a NaN on and its gradient is dy where x > 0;
 * pooling takes the first maximum of a window in scan order, or its first
 * NaN, and routes the gradient there: the ref definitions' rules).
 * dropout multiplies two floats: one correctly rounded product, so
 * |error| <= u*|x*mask| for a normal result and half the smallest subnormal
 * for an underflowed one; the bound is the sum of both. */
#include <math.h>
#include <string.h>

#include "refd.h"

static double relu(float v)
{
    return v > 0.0f || isnan(v) ? (double)v : 0.0;
}

/* index, within x, of the element of window (i, j) that is the max */
static size_t window_best(const float *x, size_t w, size_t i, size_t j)
{
    const size_t top = 2 * i * w + 2 * j;
    const size_t at[4] = {top, top + 1, top + w, top + w + 1};
    size_t best = at[0];
    for (int t = 1; t < 4; t++)
        if (x[at[t]] > x[best] || (isnan(x[at[t]]) && !isnan(x[best])))
            best = at[t];
    return best;
}

static void maxpool(double *value, const sb_op_call *c)
{
    const sb_pool_shape *s = &c->pool;
    const size_t h = (size_t)s->h, w = (size_t)s->w, ph = h / 2, pw = w / 2;
    const size_t planes = (size_t)s->n * (size_t)s->c;
    const bool fwd = c->op == SB_OP_maxpool_fwd;
    const float *x = REFD_IN(c, fwd ? 0 : 1), *dy = fwd ? NULL : REFD_IN(c, 0);
    if (!fwd)
        memset(value, 0, planes * h * w * sizeof *value);
    for (size_t p = 0; p < planes; p++)
        for (size_t i = 0; i < ph; i++)
            for (size_t j = 0; j < pw; j++) {
                const size_t best = window_best(x + p * h * w, w, i, j);
                if (fwd)
                    value[(p * ph + i) * pw + j] = (double)x[p * h * w + best];
                else
                    value[p * h * w + best] = (double)dy[(p * ph + i) * pw + j];
            }
}

void refd_elementwise(double *value, double *bound, const sb_op_call *c)
{
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *a = REFD_IN(c, 0), *b = c->n_in > 1 ? REFD_IN(c, 1) : NULL;
    memset(bound, 0, count * sizeof *bound);
    switch (c->op) {
    case SB_OP_relu_fwd:
        for (size_t e = 0; e < count; e++)
            value[e] = relu(a[e]);
        return;
    case SB_OP_relu_bwd:
        for (size_t e = 0; e < count; e++)
            value[e] = b[e] > 0.0f ? (double)a[e] : 0.0;
        return;
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd:
        maxpool(value, c);
        return;
    case SB_OP_dropout_fwd:
    case SB_OP_dropout_bwd:
        for (size_t e = 0; e < count; e++) {
            value[e] = (double)a[e] * (double)b[e];
            bound[e] = REFD_U * fabs(value[e]) + REFD_UNDERFLOW;
        }
        return;
    default:
        SB_ASSERT(!"not an elementwise op");
    }
}
