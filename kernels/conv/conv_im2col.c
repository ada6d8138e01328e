/* im2col / col2im for one image: see conv_im2col.h. */
#include "conv_im2col.h"

void sb_im2col(float *col, const float *x, const sb_conv_shape *s,
               ptrdiff_t rs, ptrdiff_t cs)
{
    for (int c = 0; c < s->c; c++)
        for (int r = 0; r < s->r; r++)
            for (int t = 0; t < s->s; t++) {
                ptrdiff_t tap = ((ptrdiff_t)c * s->r + r) * s->s + t;
                float *row = col + tap * rs;
                const float *xc = x + (ptrdiff_t)c * s->h * s->w;
                for (int p = 0; p < s->p; p++) {
                    int ih = p * s->stride - s->pad + r;
                    for (int q = 0; q < s->q; q++) {
                        int iw = q * s->stride - s->pad + t;
                        bool inside = ih >= 0 && ih < s->h && iw >= 0 && iw < s->w;
                        row[((ptrdiff_t)p * s->q + q) * cs] =
                            inside ? xc[(ptrdiff_t)ih * s->w + iw] : 0.0f;
                    }
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
