/* RoPE, det family: rows in parallel, each the ref arithmetic with the same
 * table (rope.h): ref's bits at every thread count; loose runs it too. */
#include <stdlib.h>

#include "rope.h"

static void rows(float *y, const float *x, const sb_rope_shape *s, int inverse)
{
    float *cs = sb_rope_table_new(s);
    const size_t w = (size_t)s->h * (size_t)s->d, pairs = (size_t)s->d / 2;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++) {
        const size_t at = (size_t)i * w;
        sb_rope_row(y + at, x + at, cs + 2 * pairs * (size_t)(i % s->t), s, inverse);
    }
    free(cs);
}

void sb_rope_fwd_det(float *y, const float *x, const sb_rope_shape *s)
{
    rows(y, x, s, 0);
}

void sb_rope_bwd_det(float *dx, const float *dy, const sb_rope_shape *s)
{
    rows(dx, dy, s, 1);
}
