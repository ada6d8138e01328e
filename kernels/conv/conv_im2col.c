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

void sb_im2col(float *col, const float *x, const sb_conv_shape *s,
               ptrdiff_t rs, ptrdiff_t cs)
{
    for (int c = 0; c < s->c; c++)
        for (int r = 0; r < s->r; r++)
            for (int t = 0; t < s->s; t++) {
                ptrdiff_t tap = ((ptrdiff_t)c * s->r + r) * s->s + t;
                float *row = col + tap * rs;
                const float *xc = x + (ptrdiff_t)c * s->h * s->w;
                int q0, q1;
                valid_q(s, t, &q0, &q1);
                for (int p = 0; p < s->p; p++) {
                    int ih = p * s->stride - s->pad + r;
                    float *out = row + (ptrdiff_t)p * s->q * cs;
                    if (ih < 0 || ih >= s->h) {
                        for (int q = 0; q < s->q; q++)
                            out[q * cs] = 0.0f;
                        continue;
                    }
                    /* input column of q0; later columns follow at the stride */
                    const float *in = xc + (ptrdiff_t)ih * s->w + (q0 * s->stride - s->pad + t);
                    for (int q = 0; q < q0; q++)
                        out[q * cs] = 0.0f;
                    if (cs == 1 && s->stride == 1)
                        memcpy(out + q0, in, (size_t)(q1 - q0) * sizeof(float));
                    else
                        for (int q = q0; q < q1; q++)
                            out[q * cs] = in[(ptrdiff_t)(q - q0) * s->stride];
                    for (int q = q1; q < s->q; q++)
                        out[q * cs] = 0.0f;
                }
            }
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
