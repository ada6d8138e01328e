/* The loops of the tail-path mutants (tail_paths.h). */
#include "tail_paths.h"

void sb_mutant_pool_with_tail(float *y, const float *x, const sb_window_shape *s,
                              sb_window_fn *main, sb_window_fn *tail)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const int64_t planes = (int64_t)s->n * s->c;
#pragma omp parallel
    {
        sb_window_fn *window = sb_mutant_in_tail() ? tail : main;
#pragma omp for schedule(static)
        for (int64_t plane = 0; plane < planes; plane++) {
            const float *xp = x + (size_t)plane * (size_t)s->h * (size_t)s->w;
            float *yp = y + (size_t)plane * (size_t)p * (size_t)q;
            for (int i = 0; i < p; i++)
                for (int j = 0; j < q; j++)
                    yp[(size_t)i * (size_t)q + (size_t)j] = window(sb_window_at(xp, s, i, j), s);
        }
    }
}

void sb_mutant_rows_with_tail(float *out, const float *x, const sb_norm_shape *s,
                              sb_mutant_row_fn *main, sb_mutant_row_fn *tail)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel
    {
        sb_mutant_row_fn *row = sb_mutant_in_tail() ? tail : main;
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++)
            out[i] = row(x + (size_t)i * c, c, s->eps);
    }
}

void sb_mutant_elements_with_tail(float *y, const float *const *in, size_t n,
                                  sb_mutant_element_fn *main, sb_mutant_element_fn *tail)
{
#pragma omp parallel
    {
        sb_mutant_element_fn *element = sb_mutant_in_tail() ? tail : main;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; i++)
            y[i] = element(in, (size_t)i);
    }
}
