/* FAULT: a separately written path for the last thread's share of the
 * planes (a "tail" loop kept apart from the main one) scans each window's
 * columns up to kw - 1, an off-by-one edge: a window's last column is never
 * looked at, so where the maximum lies there the output is a smaller
 * element. On one thread there is no tail: det's bits. */
#include <math.h>
#include <omp.h>

#include "mutants.h"
#include "pool/pool.h"

/* sb_window_maximum's scan, its last column left out */
static float short_window_maximum(const float *top, const sb_window_shape *s)
{
    float best = top[0];
    for (int a = 0; a < s->kh; a++)
        for (int b = 0; b < s->kw - 1; b++) {
            const float v = top[(size_t)a * (size_t)s->w + (size_t)b];
            if (v > best || (isnan(v) && !isnan(best)))
                best = v;
        }
    return best;
}

void sb_mutant_maxpool_window_short_edge(float *y,          /* [n][c][p][q] */
                                         const float *x,    /* [n][c][h][w] */
                                         const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const int64_t planes = (int64_t)s->n * s->c;
#pragma omp parallel
    {
        const bool tail = omp_get_num_threads() > 1 &&
                          omp_get_thread_num() == omp_get_num_threads() - 1;
#pragma omp for schedule(static)
        for (int64_t plane = 0; plane < planes; plane++) {
            const float *xp = x + (size_t)plane * (size_t)s->h * (size_t)s->w;
            float *yp = y + (size_t)plane * (size_t)p * (size_t)q;
            for (int i = 0; i < p; i++)
                for (int j = 0; j < q; j++) {
                    const float *top = sb_window_at(xp, s, i, j);
                    yp[(size_t)i * (size_t)q + (size_t)j] =
                        tail ? short_window_maximum(top, s) : sb_window_maximum(top, s);
                }
        }
    }
}
