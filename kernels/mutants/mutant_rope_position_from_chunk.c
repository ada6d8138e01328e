/* FAULT: each thread rotates its share of the rows by positions counted
 * from the first row of its share, (i - first) % t, not from the first row
 * of the batch, i % t: the offset of a shard forgotten, as in a
 * sequence-parallel RoPE whose shards all start at position 0. The first
 * thread's share starts at row 0, so one thread gives det's bits; from two,
 * a later thread whose share does not start on a sequence boundary turns
 * its rows by the wrong angles. */
#include <omp.h>
#include <stdlib.h>

#include "mutants.h"
#include "rope/rope.h"

void sb_mutant_rope_position_from_chunk(float *y,          /* [n][h][d] */
                                        const float *x,    /* [n][h][d] */
                                        const sb_rope_shape *s)
{
    float *cs = sb_rope_table_new(s);
    const size_t w = (size_t)s->h * (size_t)s->d, pairs = (size_t)s->d / 2;
    const size_t n = (size_t)s->n, t = (size_t)s->t;
#pragma omp parallel
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        const size_t first = n * me / team, end = n * (me + 1) / team;
        for (size_t i = first; i < end; i++)
            sb_rope_row(y + i * w, x + i * w, cs + 2 * pairs * ((i - first) % t), s, 0);
    }
    free(cs);
}
