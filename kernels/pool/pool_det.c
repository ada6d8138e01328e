/* Average and max pooling, det family: parallel over the planes, each
 * output one writer running its window as ref does (pool.h): ref's bits at
 * every thread count, and loose runs these loops too (kernels.def). */
#include "pool.h"

static void pool_det(float *y, const float *x, const sb_window_shape *s, sb_window_fn *window)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const int64_t planes = (int64_t)s->n * s->c;
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes; plane++) {
        const float *xp = x + (size_t)plane * (size_t)s->h * (size_t)s->w;
        float *yp = y + (size_t)plane * (size_t)p * (size_t)q;
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++)
                yp[(size_t)i * (size_t)q + (size_t)j] = window(sb_window_at(xp, s, i, j), s);
    }
}

void sb_maxpool_window_indices_det(int32_t *indices, const float *x, const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const int64_t planes = (int64_t)s->n * s->c;
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes; plane++)
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++)
                indices[((size_t)plane * (size_t)p + (size_t)i) * (size_t)q + (size_t)j] =
                    sb_window_index(x, s, (size_t)plane, i, j);
}

void sb_avgpool_fwd_det(float *y, const float *x, const sb_window_shape *s)
{
    pool_det(y, x, s, sb_window_mean);
}

void sb_maxpool_window_fwd_det(float *y, const float *x, const sb_window_shape *s)
{
    pool_det(y, x, s, sb_window_maximum);
}
