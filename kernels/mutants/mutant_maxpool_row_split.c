/* FAULT: the window rows of all planes are cut by hand into one block of
 * floor(rows / T) rows per thread, and the rows left over when T does not
 * divide them are never pooled: the end of the output keeps what the buffer
 * held. Where T divides the rows every window is written once, by
 * sb_window_max, and the output is det's. */
#include <omp.h>

#include "elementwise/elementwise.h"
#include "mutants.h"

void sb_mutant_maxpool_row_split(float *y,               /* [n][c][h/2][w/2] */
                                 const float *x,         /* [n][c][h][w] */
                                 const sb_pool_shape *s)
{
    const size_t planes = sb_pool_planes(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t ph = h / 2, pw = w / 2, rows = planes * ph;
#pragma omp parallel
    {
        const size_t t = (size_t)omp_get_thread_num(), per = rows / (size_t)omp_get_num_threads();
        for (size_t r = t * per; r < (t + 1) * per; r++) {
            const size_t p = r / ph, i = r % ph;
            for (size_t j = 0; j < pw; j++)
                y[(p * ph + i) * pw + j] = sb_window_max(x + p * h * w, w, i, j);
        }
    }
}
