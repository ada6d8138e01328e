/* The elementwise ops, the readable definitions: one serial loop each, the
 * element arithmetic of elementwise.h. */
#include <string.h>

#include "elementwise.h"

void sb_relu_fwd_ref(float *y,          /* [n] */
                     const float *x,    /* [n] */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = sb_relu(x[i]);
}

void sb_relu_bwd_ref(float *dx,         /* [n] */
                     const float *dy,   /* [n] */
                     const float *x,    /* [n] forward input */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = sb_relu_grad(dy[i], x[i]);
}

void sb_maxpool_fwd_ref(float *y,               /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] */
                        const sb_pool_shape *s)
{
    const size_t planes = sb_pool_planes(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t ph = h / 2, pw = w / 2;
    for (size_t p = 0; p < planes; p++)
        for (size_t i = 0; i < ph; i++)
            for (size_t j = 0; j < pw; j++)
                y[(p * ph + i) * pw + j] = sb_window_max(x + p * h * w, w, i, j);
}

/* Every element of dx is written: the four of each window, and zeros where
 * an odd size leaves a row or column out of every window. */
void sb_maxpool_bwd_ref(float *dx,              /* [n][c][h][w] */
                        const float *dy,        /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] forward input */
                        const sb_pool_shape *s)
{
    const size_t planes = sb_pool_planes(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t ph = h / 2, pw = w / 2;
    memset(dx, 0, planes * h * w * sizeof *dx);
    for (size_t p = 0; p < planes; p++)
        for (size_t i = 0; i < ph; i++)
            for (size_t j = 0; j < pw; j++)
                sb_window_grad(dx + p * h * w, x + p * h * w, w, i, j,
                               dy[(p * ph + i) * pw + j]);
}

/* One draw per element: the definition the det kernel's runs of draws must
 * match. */
void sb_dropout_mask_ref(float *mask,                   /* [n] */
                         const sb_dropout_params *d,
                         size_t n)
{
    const float scale = sb_dropout_scale(d);
    for (size_t i = 0; i < n; i++)
        mask[i] = sb_dropout_element(d, scale, i);
}

void sb_dropout_fwd_ref(float *y,               /* [n] */
                        const float *x,         /* [n] */
                        const float *mask,      /* [n] */
                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] * mask[i];
}

void sb_dropout_bwd_ref(float *dx,              /* [n] */
                        const float *dy,        /* [n] */
                        const float *mask,      /* [n] the forward's mask */
                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = dy[i] * mask[i];
}

void sb_gelu_fwd_ref(float *y,          /* [n] */
                     const float *x,    /* [n] */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = sb_gelu(x[i]);
}

void sb_gelu_bwd_ref(float *dx,         /* [n] */
                     const float *dy,   /* [n] */
                     const float *x,    /* [n] forward input */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = sb_gelu_grad(dy[i], x[i]);
}

void sb_gelu_erf_fwd_ref(float *y,          /* [n] */
                         const float *x,    /* [n] */
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = sb_gelu_erf(x[i]);
}

void sb_gelu_erf_bwd_ref(float *dx,         /* [n] */
                         const float *dy,   /* [n] */
                         const float *x,    /* [n] forward input */
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = sb_gelu_erf_grad(dy[i], x[i]);
}

/* y may be a (the residual stream updated in place) */
void sb_residual_add_ref(float *y,       /* [n] */
                         const float *a, /* [n] */
                         const float *b, /* [n] */
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

void sb_silu_fwd_ref(float *y,          /* [n] */
                     const float *x,    /* [n] */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = sb_silu(x[i]);
}

void sb_silu_bwd_ref(float *dx,         /* [n] */
                     const float *dy,   /* [n] */
                     const float *x,    /* [n] forward input */
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = sb_silu_grad(dy[i], x[i]);
}

void sb_swiglu_fwd_ref(float *y,        /* [n] */
                       const float *a,  /* [n] gate */
                       const float *b,  /* [n] */
                       size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = sb_swiglu(a[i], b[i]);
}

void sb_swiglu_bwd_a_ref(float *da,       /* [n] */
                         const float *dy, /* [n] */
                         const float *a,  /* [n] forward gate */
                         const float *b,  /* [n] forward input */
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        da[i] = sb_swiglu_grad_a(dy[i], a[i], b[i]);
}

void sb_swiglu_bwd_b_ref(float *db,       /* [n] */
                         const float *dy, /* [n] */
                         const float *a,  /* [n] forward gate */
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        db[i] = sb_swiglu_grad_b(dy[i], a[i]);
}
