/* conv2d, the readable definition: serial loops, float accumulators, terms
 * added in the natural loop order, taps in the padding skipped. */
#include <string.h>

#include "conv.h"

/* x [n][c][h][w] at (img, ch, ih, iw), or 0 in the padding */
static float x_at(const float *x, const sb_conv_shape *s, int img, int ch, int ih,
                  int iw, bool *inside)
{
    *inside = ih >= 0 && ih < s->h && iw >= 0 && iw < s->w;
    if (!*inside)
        return 0.0f;
    return x[(((size_t)img * s->c + ch) * s->h + ih) * s->w + iw];
}

void sb_conv2d_fwd_ref(float *y,             /* [n][k][p][q] */
                       const float *x,       /* [n][c][h][w] */
                       const float *w,       /* [k][c][r][s] */
                       const float *b,       /* [k] */
                       const sb_conv_shape *s)
{
    for (int img = 0; img < s->n; img++)
        for (int f = 0; f < s->k; f++)
            for (int p = 0; p < s->p; p++)
                for (int q = 0; q < s->q; q++) {
                    float acc = 0.0f;
                    for (int ch = 0; ch < s->c; ch++)
                        for (int r = 0; r < s->r; r++)
                            for (int t = 0; t < s->s; t++) {
                                bool inside;
                                float xv = x_at(x, s, img, ch, p * s->stride - s->pad + r,
                                                q * s->stride - s->pad + t, &inside);
                                if (inside)
                                    acc += xv * w[(((size_t)f * s->c + ch) * s->r + r) * s->s + t];
                            }
                    y[(((size_t)img * s->k + f) * s->p + p) * s->q + q] = acc + b[f];
                }
}

void sb_conv2d_bwd_data_ref(float *dx,       /* [n][c][h][w] */
                            const float *dy, /* [n][k][p][q] */
                            const float *w,  /* [k][c][r][s] */
                            const sb_conv_shape *s)
{
    memset(dx, 0, (size_t)s->n * s->c * s->h * s->w * sizeof(float));
    for (int img = 0; img < s->n; img++)
        for (int f = 0; f < s->k; f++)
            for (int p = 0; p < s->p; p++)
                for (int q = 0; q < s->q; q++) {
                    float g = dy[(((size_t)img * s->k + f) * s->p + p) * s->q + q];
                    for (int ch = 0; ch < s->c; ch++)
                        for (int r = 0; r < s->r; r++)
                            for (int t = 0; t < s->s; t++) {
                                int ih = p * s->stride - s->pad + r;
                                int iw = q * s->stride - s->pad + t;
                                if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
                                    continue;
                                dx[(((size_t)img * s->c + ch) * s->h + ih) * s->w + iw] +=
                                    g * w[(((size_t)f * s->c + ch) * s->r + r) * s->s + t];
                            }
                }
}

void sb_conv2d_bwd_filter_ref(float *dw,       /* [k][c][r][s] */
                              const float *dy, /* [n][k][p][q] */
                              const float *x,  /* [n][c][h][w] */
                              const sb_conv_shape *s)
{
    for (int f = 0; f < s->k; f++)
        for (int ch = 0; ch < s->c; ch++)
            for (int r = 0; r < s->r; r++)
                for (int t = 0; t < s->s; t++) {
                    float acc = 0.0f;
                    for (int img = 0; img < s->n; img++)
                        for (int p = 0; p < s->p; p++)
                            for (int q = 0; q < s->q; q++) {
                                bool inside;
                                float xv = x_at(x, s, img, ch, p * s->stride - s->pad + r,
                                                q * s->stride - s->pad + t, &inside);
                                if (inside)
                                    acc += dy[(((size_t)img * s->k + f) * s->p + p) * s->q + q] * xv;
                            }
                    dw[(((size_t)f * s->c + ch) * s->r + r) * s->s + t] = acc;
                }
}

void sb_conv2d_bwd_bias_ref(float *db,       /* [k] */
                            const float *dy, /* [n][k][p][q] */
                            const sb_conv_shape *s)
{
    size_t pq = (size_t)s->p * s->q;
    for (int f = 0; f < s->k; f++) {
        float acc = 0.0f;
        for (int img = 0; img < s->n; img++)
            for (size_t i = 0; i < pq; i++)
                acc += dy[((size_t)img * s->k + f) * pq + i];
        db[f] = acc;
    }
}
