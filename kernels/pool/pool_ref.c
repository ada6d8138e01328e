/* Average and max pooling and their gradients, the readable definitions:
 * planes, then output rows and columns in order, each window as pool.h
 * computes it, each gradient its scatter (pool.h). */
#include <stdlib.h>

#include "pool.h"

static void pool_ref(float *y, const float *x, const sb_window_shape *s, sb_window_fn *window)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    for (size_t plane = 0; plane < (size_t)s->n * (size_t)s->c; plane++)
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++)
                y[(plane * (size_t)p + (size_t)i) * (size_t)q + (size_t)j] =
                    window(sb_window_at(x + plane * (size_t)s->h * (size_t)s->w, s, i, j), s);
}

void sb_avgpool_fwd_ref(float *y,              /* [n][c][p][q] */
                        const float *x,        /* [n][c][h][w] */
                        const sb_window_shape *s)
{
    pool_ref(y, x, s, sb_window_mean);
}

void sb_maxpool_window_indices_ref(int32_t *indices,     /* [n][c][p][q] into x */
                                   const float *x,       /* [n][c][h][w] */
                                   const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    for (size_t plane = 0; plane < (size_t)s->n * (size_t)s->c; plane++)
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++)
                indices[(plane * (size_t)p + (size_t)i) * (size_t)q + (size_t)j] =
                    sb_window_index(x, s, plane, i, j);
}

void sb_maxpool_window_fwd_ref(float *y,              /* [n][c][p][q] */
                               const float *x,        /* [n][c][h][w] */
                               const sb_window_shape *s)
{
    pool_ref(y, x, s, sb_window_maximum);
}

void sb_avgpool_bwd_ref(float *dx,              /* [n][c][h][w] */
                        const float *dy,        /* [n][c][p][q] */
                        const sb_window_shape *s)
{
    sb_window_shape_check(s);
    for (size_t plane = 0; plane < (size_t)s->n * (size_t)s->c; plane++)
        sb_window_scatter_plane(dx, dy, NULL, s, plane);
}

void sb_maxpool_window_bwd_ref(float *dx,              /* [n][c][h][w] */
                               const float *dy,        /* [n][c][p][q] */
                               const float *x,         /* [n][c][h][w] */
                               const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const size_t p = (size_t)sb_window_p(s), q = (size_t)sb_window_q(s);
    const size_t planes = (size_t)s->n * (size_t)s->c;
    int32_t *indices = malloc(planes * p * q * sizeof *indices);
    SB_ASSERT(indices != NULL);
    sb_maxpool_window_indices_ref(indices, x, s);
    for (size_t plane = 0; plane < planes; plane++)
        sb_window_scatter_plane(dx, dy, indices, s, plane);
    free(indices);
}
