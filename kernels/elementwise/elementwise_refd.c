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

#include "elementwise.h"
#include "refd_sums.h"
#include "running_error.h"

/* index, within the plane x (w wide), of the element of window (i, j) that
 * is the max: the first in scan order that sb_window_max's rules pick */
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

static void maxpool(double *value, double *bound, const sb_op_call *c, bool fwd)
{
    const sb_pool_shape *s = &c->pool;
    const size_t h = (size_t)s->h, w = (size_t)s->w, ph = h / 2, pw = w / 2;
    const size_t planes = (size_t)s->n * (size_t)s->c;
    const float *x = SB_REFD_IN(c, fwd ? 0 : 1), *dy = fwd ? NULL : SB_REFD_IN(c, 0);
    memset(bound, 0, sb_tensor_count(&c->out[0]) * sizeof *bound);
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

/* relu selects or zeroes its input: exact */
void sb_relu_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *x = SB_REFD_IN(c, 0);
    memset(bound, 0, count * sizeof *bound);
    for (size_t e = 0; e < count; e++)
        value[e] = (double)sb_relu(x[e]);
}

void sb_relu_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *dy = SB_REFD_IN(c, 0), *x = SB_REFD_IN(c, 1);
    memset(bound, 0, count * sizeof *bound);
    for (size_t e = 0; e < count; e++)
        value[e] = x[e] > 0.0f ? (double)dy[e] : 0.0;
}

void sb_maxpool_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    maxpool(value, bound, c, true);
}

void sb_maxpool_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    maxpool(value, bound, c, false);
}

/* one correctly rounded product: u |x * mask| for a normal result, half the
 * smallest subnormal for one that underflows */
static void times_mask(double *value, double *bound, const sb_op_call *c)
{
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *a = SB_REFD_IN(c, 0), *mask = SB_REFD_IN(c, 1);
    for (size_t e = 0; e < count; e++) {
        value[e] = (double)a[e] * (double)mask[e];
        bound[e] = SB_REFD_U * fabs(value[e]) + SB_REFD_UNDERFLOW;
    }
}

void sb_dropout_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    times_mask(value, bound, c);
}

void sb_dropout_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    times_mask(value, bound, c);
}

void sb_residual_add_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *a = SB_REFD_IN(c, 0), *b = SB_REFD_IN(c, 1);
    for (size_t e = 0; e < count; e++) {
        value[e] = (double)a[e] + (double)b[e];
        bound[e] = SB_REFD_U * fabs(value[e]) + SB_REFD_UNDERFLOW;
    }
}

static sb_err gelu_tanh(float x)
{
    const sb_err xe = sb_err_exact((double)x);
    const sb_err cube = sb_err_mul(sb_err_mul(xe, xe), xe);
    const sb_err sum = sb_err_add(xe, sb_err_mul(sb_err_exact((double)SB_GELU_A), cube));
    return sb_err_tanh(sb_err_mul(sb_err_exact((double)SB_GELU_K), sum));
}

static sb_err gelu(float x)
{
    const sb_err half_x = sb_err_mul(sb_err_exact(0.5), sb_err_exact((double)x));
    return sb_err_mul(half_x, sb_err_add(sb_err_exact(1.0), gelu_tanh(x)));
}

static sb_err gelu_grad(float dy, float x)
{
    const sb_err xe = sb_err_exact((double)x), one = sb_err_exact(1.0);
    const sb_err th = gelu_tanh(x);
    const sb_err left = sb_err_mul(sb_err_exact(0.5), sb_err_add(one, th));
    const sb_err slope = sb_err_mul(sb_err_mul(sb_err_exact(0.5), xe),
                                    sb_err_sub(one, sb_err_mul(th, th)));
    /* 3 * 0.044715 folded to a float at compile time: one rounding */
    const sb_err a3 = sb_err_mul(sb_err_exact(3.0), sb_err_exact((double)SB_GELU_A));
    const sb_err inner = sb_err_mul(sb_err_exact((double)SB_GELU_K),
                                    sb_err_add(one, sb_err_mul(a3, sb_err_mul(xe, xe))));
    const sb_err right = sb_err_mul(slope, inner);
    return sb_err_mul(sb_err_exact((double)dy), sb_err_add(left, right));
}

void sb_gelu_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *x = SB_REFD_IN(c, 0);
    for (size_t e = 0; e < count; e++) {
        const sb_err y = gelu(x[e]);
        value[e] = y.v;
        bound[e] = y.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW;
    }
}

void sb_gelu_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *dy = SB_REFD_IN(c, 0), *x = SB_REFD_IN(c, 1);
    for (size_t e = 0; e < count; e++) {
        const sb_err d = gelu_grad(dy[e], x[e]);
        value[e] = d.v;
        bound[e] = d.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW;
    }
}

/* GELU's erf form, the float operations of elementwise.h in order. erf is
 * Lipschitz with constant 2/sqrt(pi) and exp's error grows as exp(a.e) - 1
 * relative; libm's erff and expf each add at most SB_ERR_LIBM_ULPS ulps
 * (2u |v| each, glibc documents 1), and a result near 0 one subnormal. */

#define SB_ERR_LIBM_ULPS 2.0

static sb_err err_erf(sb_err a)
{
    const double v = erf(a.v);
    return (sb_err){v, 1.1283791670955126 * a.e + SB_ERR_LIBM_ULPS * 2.0 * SB_ERR_U * fabs(v) +
                           0x1p-149};
}

static sb_err err_exp(sb_err a)
{
    const double v = exp(a.v);
    return (sb_err){v, v * expm1(a.e) * (1.0 + SB_ERR_LIBM_ULPS * 2.0 * SB_ERR_U) +
                           SB_ERR_LIBM_ULPS * 2.0 * SB_ERR_U * v + 0x1p-149};
}

static sb_err gelu_erf_of(sb_err x)
{
    return err_erf(sb_err_mul(x, sb_err_exact((double)SB_GELU_ERF_ALPHA)));
}

static sb_err gelu_erf(float x)
{
    const sb_err xe = sb_err_exact((double)x);
    const sb_err half_x = sb_err_mul(xe, sb_err_exact(0.5));
    return sb_err_mul(half_x, sb_err_add(sb_err_exact(1.0), gelu_erf_of(xe)));
}

static sb_err gelu_erf_grad(float dy, float x)
{
    const sb_err xe = sb_err_exact((double)x);
    const sb_err cdf = sb_err_mul(sb_err_exact(0.5), sb_err_add(sb_err_exact(1.0), gelu_erf_of(xe)));
    const sb_err sq = sb_err_mul(sb_err_mul(xe, xe), sb_err_exact(-0.5));
    const sb_err pdf = sb_err_mul(sb_err_exact((double)SB_GELU_ERF_BETA), err_exp(sq));
    return sb_err_mul(sb_err_exact((double)dy), sb_err_add(cdf, sb_err_mul(xe, pdf)));
}

void sb_gelu_erf_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *x = SB_REFD_IN(c, 0);
    for (size_t e = 0; e < count; e++) {
        const sb_err y = gelu_erf(x[e]);
        value[e] = y.v;
        bound[e] = y.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW;
    }
}

void sb_gelu_erf_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *dy = SB_REFD_IN(c, 0), *x = SB_REFD_IN(c, 1);
    for (size_t e = 0; e < count; e++) {
        const sb_err d = gelu_erf_grad(dy[e], x[e]);
        value[e] = d.v;
        bound[e] = d.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW;
    }
}

/* SiLU and the SwiGLU product, the float operations of elementwise.h in
 * order, through the running error analysis as GELU's. Each result goes
 * through at most four rounded products, each of which may underflow. */

#define SILU_UNDERFLOW (4.0 * SB_REFD_UNDERFLOW)

static sb_err silu(float x)
{
    const sb_err half = sb_err_mul(sb_err_exact(0.5), sb_err_exact((double)x));
    return sb_err_mul(half, sb_err_add(sb_err_exact(1.0), sb_err_tanh(half)));
}

static sb_err silu_grad(sb_err dy, float x)
{
    const sb_err xe = sb_err_exact((double)x), one = sb_err_exact(1.0), half = sb_err_exact(0.5);
    const sb_err t = sb_err_tanh(sb_err_mul(half, xe));
    const sb_err s = sb_err_mul(half, sb_err_add(one, t));
    const sb_err rest = sb_err_mul(half, sb_err_sub(one, t));
    return sb_err_mul(dy, sb_err_add(s, sb_err_mul(xe, sb_err_mul(s, rest))));
}

/* output element e of the call c from its inputs' element e */
static sb_err silu_element(const sb_op_call *c, size_t e)
{
    const float *in0 = SB_REFD_IN(c, 0), *in1 = c->n_in > 1 ? SB_REFD_IN(c, 1) : NULL;
    switch (c->op) {
    case SB_OP_silu_fwd:
        return silu(in0[e]);
    case SB_OP_silu_bwd:
        return silu_grad(sb_err_exact((double)in0[e]), in1[e]);
    case SB_OP_swiglu_fwd:
        return sb_err_mul(silu(in0[e]), sb_err_exact((double)in1[e]));
    case SB_OP_swiglu_bwd_a:
        return silu_grad(sb_err_mul(sb_err_exact((double)in0[e]),
                                    sb_err_exact((double)SB_REFD_IN(c, 2)[e])), in1[e]);
    default: /* SB_OP_swiglu_bwd_b */
        return sb_err_mul(sb_err_exact((double)in0[e]), silu(in1[e]));
    }
}

static void silu_all(double *value, double *bound, const sb_op_call *c)
{
    const size_t count = sb_tensor_count(&c->out[0]);
    for (size_t e = 0; e < count; e++) {
        const sb_err y = silu_element(c, e);
        value[e] = y.v;
        bound[e] = y.e * SB_ERR_SLACK + SILU_UNDERFLOW;
    }
}

void sb_silu_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    silu_all(value, bound, c);
}

void sb_silu_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    silu_all(value, bound, c);
}

void sb_swiglu_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    silu_all(value, bound, c);
}

void sb_swiglu_bwd_a_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    silu_all(value, bound, c);
}

void sb_swiglu_bwd_b_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    silu_all(value, bound, c);
}
