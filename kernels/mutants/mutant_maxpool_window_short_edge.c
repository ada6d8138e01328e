/* FAULT: a separately written path for the last thread's share of the
 * planes (a "tail" loop kept apart from the main one) scans each window's
 * columns up to kw - 1, an off-by-one edge: a window's last column is never
 * looked at, so where the maximum lies there the output is a smaller
 * element. On one thread there is no tail: det's bits. */
#include <math.h>

#include "mutants.h"
#include "tail_paths.h"

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
    sb_mutant_pool_with_tail(y, x, s, sb_window_maximum, short_window_maximum);
}
