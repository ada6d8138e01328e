/* im2col / col2im for one image: see conv_im2col.h. */
#include <string.h>

#include "conv_im2col.h"

/* Output columns q whose input column q*stride - pad + t lies in [0, w):
 * [*q0, *q1). */
static void valid_q(const sb_conv_shape *s, int t, int *q0, int *q1)
{
    int lo = s->pad - t;    /* q*stride >= pad - t */
    int hi = s->w + s->pad - t; /* q*stride < w + pad - t */
    *q0 = lo <= 0 ? 0 : (lo + s->stride - 1) / s->stride;
    *q1 = hi <= 0 ? 0 : (hi + s->stride - 1) / s->stride;
    if (*q1 > s->q)
        *q1 = s->q;
    if (*q0 > *q1)
        *q0 = *q1;
}

/* Positions [j0, j0 + nj) of tap (ch, r, t), one output row's run at a
 * time: zeros in the padding, the input row copied in between. */
static void im2col_tap(float *dst, ptrdiff_t ps, const float *x, const sb_conv_shape *s,
                       int ch, int r, int t, int j0, int nj)
{
    const float *xc = x + (ptrdiff_t)ch * s->h * s->w;
    int q0, q1;
    valid_q(s, t, &q0, &q1);
    int oh = j0 / s->q, ow = j0 % s->q;
    for (int done = 0; done < nj; oh++, ow = 0) {
        int len = s->q - ow < nj - done ? s->q - ow : nj - done;
        float *out = dst + (ptrdiff_t)done * ps; /* out[(q - a)*ps]: column q */
        int ih = oh * s->stride - s->pad + r;
        int a = ow, b = ow + len;  /* this run's columns */
        int va = a, vb = a;        /* its columns inside the input */
        if (ih >= 0 && ih < s->h) {
            va = q0 > a ? q0 : a;
            vb = q1 < b ? q1 : b;
            if (va > vb)
                va = vb;
        }
        for (int q = a; q < va; q++)
            out[(q - a) * ps] = 0.0f;
        if (va < vb) {
            /* input column of q is q*stride - pad + t, inside the row here */
            const float *in = xc + (ptrdiff_t)ih * s->w + (va * s->stride - s->pad + t);
            if (ps == 1 && s->stride == 1)
                memcpy(out + (va - a), in, (size_t)(vb - va) * sizeof(float));
            else
                for (int q = va; q < vb; q++)
                    out[(q - a) * ps] = in[(ptrdiff_t)(q - va) * s->stride];
        }
        for (int q = vb; q < b; q++)
            out[(q - a) * ps] = 0.0f;
        done += len;
    }
}

void sb_im2col_block(float *dst, ptrdiff_t ts, ptrdiff_t ps, const float *x,
                     const sb_conv_shape *s, int t0, int nt, int j0, int nj)
{
    for (int tap = t0; tap < t0 + nt; tap++) {
        int ch = tap / (s->r * s->s), r = tap / s->s % s->r, t = tap % s->s;
        im2col_tap(dst + (ptrdiff_t)(tap - t0) * ts, ps, x, s, ch, r, t, j0, nj);
    }
}

void sb_im2col(float *col, const float *x, const sb_conv_shape *s,
               ptrdiff_t rs, ptrdiff_t cs)
{
    sb_im2col_block(col, rs, cs, x, s, 0, s->c * s->r * s->s, 0, s->p * s->q);
}

void sb_col2im_add(float *dx, const float *col, const sb_conv_shape *s)
{
    ptrdiff_t pq = (ptrdiff_t)s->p * s->q;
    for (int c = 0; c < s->c; c++) {
        float *dxc = dx + (ptrdiff_t)c * s->h * s->w;
        for (int r = 0; r < s->r; r++)
            for (int t = 0; t < s->s; t++) {
                const float *row = col + (((ptrdiff_t)c * s->r + r) * s->s + t) * pq;
                for (int p = 0; p < s->p; p++) {
                    int ih = p * s->stride - s->pad + r;
                    if (ih < 0 || ih >= s->h)
                        continue;
                    for (int q = 0; q < s->q; q++) {
                        int iw = q * s->stride - s->pad + t;
                        if (iw >= 0 && iw < s->w)
                            dxc[(ptrdiff_t)ih * s->w + iw] += row[(ptrdiff_t)p * s->q + q];
                    }
                }
            }
    }
}
