/* RoPE, the readable definition: rows in order (rope.h). */
#include <stdlib.h>

#include "rope.h"

static void rows(float *y, const float *x, const sb_rope_shape *s, int inverse)
{
    float *cs = sb_rope_table_new(s);
    const size_t w = (size_t)s->h * (size_t)s->d, pairs = (size_t)s->d / 2;
    for (size_t i = 0; i < (size_t)s->n; i++)
        sb_rope_row(y + i * w, x + i * w, cs + 2 * pairs * (i % (size_t)s->t), s, inverse);
    free(cs);
}

void sb_rope_fwd_ref(float *y,         /* [n][h d] */
                     const float *x,   /* [n][h d] */
                     const sb_rope_shape *s)
{
    rows(y, x, s, 0);
}

void sb_rope_bwd_ref(float *dx,        /* [n][h d] */
                     const float *dy,  /* [n][h d] */
                     const sb_rope_shape *s)
{
    rows(dx, dy, s, 1);
}
