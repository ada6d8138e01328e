/* FAULT: each thread's share of the rows runs as a main loop over groups
 * of 8 rows and a separately written remainder loop (tail_paths.h) that
 * does not pass the backward's inverse flag down to the row: the
 * remainder's gradients turn by the forward rotation, not its inverse (the
 * sine's sign lost), so they are wrong wherever the angle is not 0. On one
 * thread over a multiple of 8 rows there is no remainder: det's bits. */
#include <stdlib.h>

#include "mutants.h"
#include "rope/rope.h"
#include "tail_paths.h"

/* the rows a step of the main loop turns */
#define ROW_GROUP 8

typedef struct turn {
    float *dx;
    const float *dy, *cs;
    const sb_rope_shape *s;
} turn;

static void rows_span(void *ctx, size_t lo, size_t hi, bool remainder)
{
    const turn *r = ctx;
    const size_t w = (size_t)r->s->h * (size_t)r->s->d, pairs = (size_t)r->s->d / 2;
    for (size_t i = lo; i < hi; i++)
        sb_rope_row(r->dx + i * w, r->dy + i * w, r->cs + 2 * pairs * (i % (size_t)r->s->t), r->s,
                    !remainder);
}

void sb_mutant_rope_bwd_remainder_forward_turn(float *dx,          /* [n][h][d] */
                                               const float *dy,    /* [n][h][d] */
                                               const sb_rope_shape *s)
{
    float *cs = sb_rope_table_new(s);
    turn r = {dx, dy, cs, s};
    sb_mutant_share_with_remainder((size_t)s->n, ROW_GROUP, rows_span, &r);
    free(cs);
}
