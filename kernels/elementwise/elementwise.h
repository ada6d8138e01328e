/* The elementwise area's shared pieces, for its own files, its tests and
 * the mutants of its ops (kernels/mutants/): the arithmetic of one element
 * (or one pooling window), which every family runs, so that ref and det
 * differ only in how they loop.
 *
 * None of these ops has a reduction, so one parallel loop over elements (or
 * planes) gives the ref bits for every thread count: the det kernels are the
 * usual parallel loops, and loose runs them too (kernels.def). */
#ifndef SB_ELEMENTWISE_H
#define SB_ELEMENTWISE_H

#include <math.h>

#include "op_kernels.h"
#include "sb_rng.h"
#include "tanh.h"

/* ---- ReLU: y = x where x > 0, else 0; backward dx = dy where x > 0, else 0
 * (x is the forward input).
 *
 * NaN: the forward passes a NaN input through (mapping it to 0 would hide the
 * fault from every probe downstream); the backward follows its definition, so
 * a NaN x gets gradient 0 -- the NaN already reached the loss through the
 * forward. -0.0 gives +0.0. The backward selects dy rather than multiplying
 * by a 0/1 mask, so a NaN or Inf dy where x <= 0 does not leak into dx. */

static inline float sb_relu(float v)
{
    return v > 0.0f || isnan(v) ? v : 0.0f;
}

static inline float sb_relu_grad(float dy, float x)
{
    return x > 0.0f ? dy : 0.0f;
}

/* ---- 2x2 max pooling with stride 2 over NCHW planes. Odd heights and widths
 * are floored: the last row or column of x feeds no window and gets gradient 0.
 *
 * Tie rule: when several elements of a window hold its maximum, the first in
 * scan order (row-major within the window: top-left, top-right, bottom-left,
 * bottom-right) is the argmax: the output has its bits (+0 and -0 tie) and it
 * receives the window's whole gradient; the others get 0.
 *
 * NaN rule: a NaN anywhere in a window makes the window's output NaN (the
 * first NaN in scan order, payload kept), and the backward routes the
 * window's gradient to that NaN element. A max built from `>` alone would
 * drop a NaN silently unless it came first in the window.
 *
 * A max is exact, so no evaluation order can change a bit. */

/* The maximum of the window whose top-left element is row 2i, column 2j of a
 * plane w wide, under the tie and NaN rules: scan order, and a later element
 * wins only if it is larger or the first NaN. */
static inline float sb_window_max(const float *x, size_t w, size_t i, size_t j)
{
    const size_t top = 2 * i * w + 2 * j;
    const size_t at[4] = {top, top + 1, top + w, top + w + 1};
    size_t best = at[0];
    for (int t = 1; t < 4; t++) {
        float v = x[at[t]], b = x[best];
        if (v > b || (isnan(v) && !isnan(b)))
            best = at[t];
    }
    return x[best];
}

/* Whether element v holds the window's maximum m. When m is a number no
 * element of the window is NaN and v >= m means v equals m; when m is NaN the
 * NaNs match. */
static inline int sb_is_max(float v, float m)
{
    return (v >= m) | isnan(v);
}

/* The gradient of window (i, j) of a plane w wide, g, to its argmax: the
 * first element that matches the maximum gets it, the others 0. */
static inline void sb_window_grad(float *dx, const float *x, size_t w, size_t i, size_t j,
                                  float g)
{
    const float m = sb_window_max(x, w, i, j);
    const size_t top = 2 * i * w + 2 * j;
    const int first = sb_is_max(x[top], m);
    const int second = (1 - first) & sb_is_max(x[top + 1], m);
    const int third = (1 - first - second) & sb_is_max(x[top + w], m);
    const int fourth = 1 - first - second - third;
    dx[top] = first ? g : 0.0f;
    dx[top + 1] = second ? g : 0.0f;
    dx[top + w] = third ? g : 0.0f;
    dx[top + w + 1] = fourth ? g : 0.0f;
}

static inline size_t sb_pool_planes(const sb_pool_shape *s)
{
    SB_ASSERT(s->n >= 0 && s->c >= 0 && s->h >= 0 && s->w >= 0);
    return (size_t)s->n * (size_t)s->c;
}

/* ---- inverted dropout. Element i of the mask is kept when
 * sb_rng_uniform(seed, stream, step, i) >= rate, and a kept element carries
 * 1/(1-rate), so the expected activation is unchanged and nothing is rescaled
 * at test time; rate = 0 keeps every element with scale exactly 1. The draw
 * is a pure function of its counter, not of an RNG state, so any thread may
 * compute any element and the mask bits never depend on the thread count.
 *
 * y = x * mask and dx = dy * mask are products, as in the frameworks that
 * multiply by the mask: an Inf or NaN in a dropped element gives NaN. */

static inline float sb_dropout_scale(const sb_dropout_params *d)
{
    SB_ASSERT(d->rate >= 0.0f && d->rate < 1.0f);
    return 1.0f / (1.0f - d->rate);
}

static inline float sb_dropout_element(const sb_dropout_params *d, float scale, size_t i)
{
    return sb_rng_uniform(d->seed, d->stream, d->step, i) >= d->rate ? scale : 0.0f;
}

/* ---- GELU, tanh form (PyTorch's approximate='tanh'):
 *   y = 0.5 x (1 + tanh(k (x + 0.044715 x^3))),  k = sqrt(2/pi)
 *   dy/dx = 0.5 (1 + th) + 0.5 x (1 - th^2) k (1 + 3 * 0.044715 x^2),
 *   th = tanh(k (x + 0.044715 x^3))
 * each operation in float, in the order written, tanh by sb_tanhf (tanh.h:
 * the same bits everywhere, where libm's tanhf differs between libms). A NaN
 * passes through both; tanh saturates, so large |x| give x or 0. */

#define SB_GELU_K 0.7978845608028654f   /* sqrt(2/pi) */
#define SB_GELU_A 0.044715f

static inline float sb_gelu_inner(float x)
{
    return SB_GELU_K * (x + SB_GELU_A * (x * x * x));
}

static inline float sb_gelu(float x)
{
    return 0.5f * x * (1.0f + sb_tanhf(sb_gelu_inner(x)));
}

static inline float sb_gelu_grad(float dy, float x)
{
    const float th = sb_tanhf(sb_gelu_inner(x));
    const float left = 0.5f * (1.0f + th);
    const float right = 0.5f * x * (1.0f - th * th) * (SB_GELU_K * (1.0f + 3.0f * SB_GELU_A * (x * x)));
    return dy * (left + right);
}

/* ---- GELU, erf form (PyTorch's default, ONNX's Gelu):
 *   y = (x 0.5) (1 + erf(x sqrt(1/2)))
 *   dy/dx = cdf + x pdf,  cdf = 0.5 (1 + erf(x sqrt(1/2))),
 *           pdf = (1/sqrt(2 pi)) exp((x x) (-0.5))
 * each operation in float, in the order PyTorch's CPU kernels write it,
 * erff and expf from libm (each within 1 ulp in glibc; no vector variant
 * is called, the loop is scalar). A NaN passes through; erf saturates, so
 * large |x| give x or -0, and the slope 1 or 0. */

#define SB_GELU_ERF_ALPHA 0.70710678118654752f   /* sqrt(1/2) */
#define SB_GELU_ERF_BETA 0.39894228040143268f    /* 1/sqrt(2 pi) */

static inline float sb_gelu_erf(float x)
{
    return (x * 0.5f) * (1.0f + erff(x * SB_GELU_ERF_ALPHA));
}

static inline float sb_gelu_erf_grad(float dy, float x)
{
    const float cdf = 0.5f * (1.0f + erff(x * SB_GELU_ERF_ALPHA));
    const float pdf = SB_GELU_ERF_BETA * expf((x * x) * -0.5f);
    return dy * (cdf + x * pdf);
}

/* ---- SiLU and the SwiGLU product:
 *   silu(x) = x sigmoid(x) = (x / 2) (1 + t),  t = tanh(x / 2)
 *   silu'(x) = s + x s (1 - s),  s = (1 + t) / 2,  1 - s = (1 - t) / 2
 *   swiglu(a, b) = silu(a) b; its gradients da = silu'(a) (dy b), db = dy silu(a)
 * each operation in float, in the order written, tanh by sb_tanhf (so every
 * vector width and libm gives the same bits); halving is exact above the
 * subnormals. A NaN passes through; for large |x| t saturates to +-1, so
 * silu gives x or 0 (-0 for x < 0) and silu' 1 or 0. */

static inline float sb_silu(float x)
{
    const float half = 0.5f * x;
    return half * (1.0f + sb_tanhf(half));
}

static inline float sb_silu_grad(float dy, float x)
{
    const float t = sb_tanhf(0.5f * x);
    const float s = 0.5f * (1.0f + t), rest = 0.5f * (1.0f - t);
    return dy * (s + x * (s * rest));
}

static inline float sb_swiglu(float a, float b)
{
    return sb_silu(a) * b;
}

static inline float sb_swiglu_grad_a(float dy, float a, float b)
{
    return sb_silu_grad(dy * b, a);
}

static inline float sb_swiglu_grad_b(float dy, float a)
{
    return dy * sb_silu(a);
}

#endif
