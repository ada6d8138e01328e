/* FAULT: a separately written path for the last thread's share of the rows
 * (a "tail" loop kept apart from the main one) divides each row's sum of
 * squared deviations by c - 1, the unbiased variance (torch.var's default),
 * where layer norm takes the biased one, over c: its inverse standard
 * deviations are about 1/(2c) too large. On one thread there is no tail:
 * det's bits. */
#include <math.h>
#include <omp.h>

#include "mutants.h"
#include "norm/norm.h"

void sb_mutant_layernorm_rstd_tail_unbiased(float *rstd,         /* [n] */
                                            const float *x,      /* [n][c] */
                                            const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel
    {
        const bool tail = omp_get_num_threads() > 1 &&
                          omp_get_thread_num() == omp_get_num_threads() - 1;
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++) {
            const float *xi = x + (size_t)i * c;
            const sb_norm_stats st = sb_norm_row_stats(xi, c, s->eps);
            if (!tail) {
                rstd[i] = st.rstd;
                continue;
            }
            float sq = 0.0f;
            for (size_t j = 0; j < c; j++)
                sq += (xi[j] - st.mean) * (xi[j] - st.mean);
            rstd[i] = 1.0f / sqrtf(sq / (float)(c - 1) + s->eps);
        }
    }
}
