/* Gamma's gradient of layer norm and RMSNorm, loose family: threads take
 * equal slices of the rows and accumulate private partial sums, added in
 * thread order (sb_partials_sum): the bits follow the thread count. */
#include <omp.h>
#include <stdlib.h>

#include "rmsnorm.h"

static void gamma_loose(float *dgamma, const float *dy, const float *x, const sb_norm_shape *s,
                        sb_norm_stats_fn *stats)
{
    const size_t c = (size_t)s->c;
    const int threads = omp_get_max_threads();
    float *part = calloc(c * (size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float *mine = part + c * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++) {
            const float *xi = x + (size_t)i * c, *dyi = dy + (size_t)i * c;
            const sb_norm_stats st = stats(xi, c, s->eps);
            for (size_t j = 0; j < c; j++)
                mine[j] += dyi[j] * sb_norm_xhat(xi[j], st);
        }
    }
    sb_partials_sum(dgamma, part, c, threads);
    free(part);
}

void sb_layernorm_bwd_gamma_loose(float *dgamma, const float *dy, const float *x,
                                  const sb_norm_shape *s)
{
    gamma_loose(dgamma, dy, x, s, sb_norm_row_stats);
}

void sb_rmsnorm_bwd_gamma_loose(float *dgamma, const float *dy, const float *x,
                                const sb_norm_shape *s)
{
    gamma_loose(dgamma, dy, x, s, sb_rms_row_stats);
}
