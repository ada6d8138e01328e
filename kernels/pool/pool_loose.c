/* Average and max pooling's gradients, loose family: the scatter as it is
 * usually parallelised, planes in parallel, each plane's windows in
 * row-major order by one thread (pool.h). A window lies inside its plane,
 * so no two threads ever add into one element: race-free, and every
 * element's terms arrive in ref's order, so loose gives ref's bits at every
 * thread count. Splitting a plane's windows over threads would not be:
 * overlapping windows would add into shared elements. */
#include "pool.h"

void sb_avgpool_bwd_loose(float *dx, const float *dy, const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int64_t planes = (int64_t)s->n * s->c;
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes; plane++)
        sb_window_scatter_plane(dx, dy, NULL, s, (size_t)plane);
}

void sb_maxpool_window_bwd_loose(float *dx, const float *dy, const float *x,
                                 const sb_window_shape *s)
{
    sb_window_shape_check(s);
    int32_t *indices = sb_window_indices_alloc(x, s);
    const int64_t planes = (int64_t)s->n * s->c;
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes; plane++)
        sb_window_scatter_plane(dx, dy, indices, s, (size_t)plane);
    free(indices);
}
