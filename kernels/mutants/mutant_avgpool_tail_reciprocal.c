/* FAULT: a separately written path for the last thread's share of the
 * planes (a "tail" loop kept apart from the main one, as vectorised
 * kernels have) multiplies each window's sum by the reciprocal 1/(kh kw)
 * instead of dividing by kh kw: the same value when kh kw is a power of
 * two, another rounding otherwise. On one thread there is no tail: det's
 * bits. */
#include "mutants.h"
#include "tail_paths.h"

/* the window's sum in sb_window_mean's order, times the reciprocal */
static float window_mean_by_reciprocal(const float *top, const sb_window_shape *s)
{
    float sum = 0.0f;
    for (int a = 0; a < s->kh; a++)
        for (int b = 0; b < s->kw; b++)
            sum += top[(size_t)a * (size_t)s->w + (size_t)b];
    return sum * (1.0f / (float)(s->kh * s->kw));
}

void sb_mutant_avgpool_tail_reciprocal(float *y,          /* [n][c][p][q] */
                                       const float *x,    /* [n][c][h][w] */
                                       const sb_window_shape *s)
{
    sb_mutant_pool_with_tail(y, x, s, sb_window_mean, window_mean_by_reciprocal);
}
