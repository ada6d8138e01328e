/* FAULT: a separately written tail path (the last thread's rows of x)
 * finds the first window covering row r as (r - k) / stride + 1 clamped to
 * 0, with C's division, which truncates toward zero: right where r >= k or
 * the stride is 1, but where r - k is negative and the stride divides it
 * unevenly the quotient rounds up, so the first window that covers the
 * element is left out and its term never reaches the gradient. On one
 * thread there is no tail: det's bits. */
#include <stdlib.h>

#include "mutants.h"
#include "tail_paths.h"

static void truncated_cover(int r, int k, int st, int len, int *lo, int *hi)
{
    sb_window_cover(r, k, st, len, lo, hi);
    const int first = (r - k) / st + 1; /* truncated toward zero */
    *lo = first > 0 ? first : 0;
}

void sb_mutant_avgpool_bwd_tail_truncated_cover(float *dx,             /* [n][c][h][w] */
                                                const float *dy,       /* [n][c][p][q] */
                                                const sb_window_shape *s)
{
    sb_window_shape_check(s);
    const int64_t rows = (int64_t)s->n * s->c * s->h;
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < rows; row++)
        sb_window_gather_row(dx, dy, NULL, s, (size_t)row,
                             sb_mutant_in_tail() ? truncated_cover : sb_window_cover);
}
