/* ReLU: y = x where x > 0, else 0; backward dx = dy where x > 0, else 0
 * (x is the forward input).
 *
 * NaN: the forward passes a NaN input through (mapping it to 0 would hide the
 * fault from every probe downstream); the backward follows its definition, so
 * a NaN x gets gradient 0 — the NaN already reached the loss through the
 * forward. -0.0 gives +0.0. The backward selects dy rather than multiplying
 * by a 0/1 mask, so a NaN or Inf dy where x <= 0 does not leak into dx. */
#include <math.h>

#include "elementwise.h"
#include "leaf_blocks.h"

static inline float relu(float v)
{
    return v > 0.0f || isnan(v) ? v : 0.0f;
}

static inline float relu_grad(float dy, float x)
{
    return x > 0.0f ? dy : 0.0f;
}

void sb_relu_fwd_ref(float *y,          /* [n] */
                     const float *x,    /* [n] */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = relu(x[i]);
}

void sb_relu_fwd_par(float *y,          /* [n] */
                     const float *x,    /* [n] */
                     size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = relu(x[i]);
}

void sb_relu_fwd_hashed(float *y,          /* [n] */
                        const float *x,    /* [n] */
                        size_t n, const sb_leaf_request *r)
{
    const int64_t blocks = sb_leaf_blocks(n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
        for (size_t i = lo; i < hi; i++)
            y[i] = relu(x[i]);
        sb_leaf_put(r, r->out[0], b, y, lo, hi);
        sb_leaf_put(r, r->in[0], b, x, lo, hi);
    }
}

void sb_relu_bwd_ref(float *dx,         /* [n] */
                     const float *dy,   /* [n] */
                     const float *x,    /* [n] forward input */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = relu_grad(dy[i], x[i]);
}

void sb_relu_bwd_par(float *dx,         /* [n] */
                     const float *dy,   /* [n] */
                     const float *x,    /* [n] forward input */
                     size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        dx[i] = relu_grad(dy[i], x[i]);
}

void sb_relu_bwd_hashed(float *dx,         /* [n] */
                        const float *dy,   /* [n] */
                        const float *x,    /* [n] forward input */
                        size_t n, const sb_leaf_request *r)
{
    const int64_t blocks = sb_leaf_blocks(n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
        for (size_t i = lo; i < hi; i++)
            dx[i] = relu_grad(dy[i], x[i]);
        sb_leaf_put(r, r->out[0], b, dx, lo, hi);
        sb_leaf_put(r, r->in[0], b, dy, lo, hi);
        sb_leaf_put(r, r->in[1], b, x, lo, hi);
    }
}
