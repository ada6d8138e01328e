/* Average and max pooling, det family: parallel over the planes, each
 * output one writer running its window as ref does (pool.h): ref's bits at
 * every thread count, and loose runs these loops too (kernels.def). Their
 * gradients gather (below): the fixed order ref's scatter adds in, whatever
 * the thread count. */
#include <stdlib.h>

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

int32_t *sb_window_indices_alloc(const float *x, const sb_window_shape *s)
{
    const size_t n = (size_t)s->n * (size_t)s->c * (size_t)sb_window_p(s) * (size_t)sb_window_q(s);
    int32_t *indices = malloc(n * sizeof *indices);
    SB_ASSERT(indices != NULL);
    sb_maxpool_window_indices_det(indices, x, s);
    return indices;
}

/* The gradients by gathering (sb_window_gather_row): one writer per
 * element of x, ref's order of its terms, so ref's bits at every thread
 * count; the rows of all planes are shared among the threads, a plane's
 * too. indices: the max's argmax indices; NULL: the average. */
static void gather_det(float *dx, const float *dy, const int32_t *indices,
                       const sb_window_shape *s)
{
    const int64_t rows = (int64_t)s->n * s->c * s->h;
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < rows; row++)
        sb_window_gather_row(dx, dy, indices, s, (size_t)row, sb_window_cover);
}

void sb_avgpool_bwd_det(float *dx, const float *dy, const sb_window_shape *s)
{
    sb_window_shape_check(s);
    gather_det(dx, dy, NULL, s);
}

void sb_maxpool_window_bwd_det(float *dx, const float *dy, const float *x,
                               const sb_window_shape *s)
{
    sb_window_shape_check(s);
    int32_t *indices = sb_window_indices_alloc(x, s);
    gather_det(dx, dy, indices, s);
    free(indices);
}
