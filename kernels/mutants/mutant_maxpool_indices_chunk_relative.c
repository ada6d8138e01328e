/* FAULT: each thread pools its share of the planes through a view of x that
 * starts at its first plane (a sub-tensor handed to a per-thread worker),
 * and takes the argmax indices relative to that view, not to the whole of
 * x. The first thread's view is x itself, so one thread gives det's
 * indices; from two threads every later thread's indices are short by its
 * view's offset. */
#include <omp.h>

#include "mutants.h"
#include "pool/pool.h"

void sb_mutant_maxpool_indices_chunk_relative(int32_t *indices,       /* [n][c][p][q] */
                                              const float *x,         /* [n][c][h][w] */
                                              const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const size_t planes = (size_t)s->n * (size_t)s->c;
#pragma omp parallel
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        const size_t first = planes * me / team, end = planes * (me + 1) / team;
        const float *view = x + first * (size_t)s->h * (size_t)s->w;
        for (size_t plane = first; plane < end; plane++)
            for (int i = 0; i < p; i++)
                for (int j = 0; j < q; j++)
                    indices[(plane * (size_t)p + (size_t)i) * (size_t)q + (size_t)j] =
                        sb_window_index(view, s, plane - first, i, j);
    }
}
