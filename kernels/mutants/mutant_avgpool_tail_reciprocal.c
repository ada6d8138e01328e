/* FAULT: a separately written path for the last thread's share of the
 * planes (a "tail" loop kept apart from the main one, as vectorised
 * kernels have) multiplies each window's sum by the reciprocal 1/(kh kw)
 * instead of dividing by kh kw: the same value when kh kw is a power of
 * two, another rounding otherwise. On one thread there is no tail: det's
 * bits. */
#include <omp.h>

#include "mutants.h"
#include "pool/pool.h"

/* the window's sum in sb_window_mean's order, times the reciprocal */
static float window_mean_by_reciprocal(const float *top, const sb_window_shape *s, float inverse)
{
    float sum = 0.0f;
    for (int a = 0; a < s->kh; a++)
        for (int b = 0; b < s->kw; b++)
            sum += top[(size_t)a * (size_t)s->w + (size_t)b];
    return sum * inverse;
}

void sb_mutant_avgpool_tail_reciprocal(float *y,          /* [n][c][p][q] */
                                       const float *x,    /* [n][c][h][w] */
                                       const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const int64_t planes = (int64_t)s->n * s->c;
    const float inverse = 1.0f / (float)(s->kh * s->kw);
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
                        tail ? window_mean_by_reciprocal(top, s, inverse) : sb_window_mean(top, s);
                }
        }
    }
}
