/* FAULT: a separately written path for the last thread's share of the rows
 * (a "tail" loop kept apart from the main one) computes the variance in one
 * pass, E[x^2] - mean^2, instead of det's two passes. The two agree to
 * rounding when a row's mean is small against its spread; when it is not,
 * the subtraction cancels (the one-pass error grows as (mean/std)^2, the
 * two-pass one as mean/std), and it can even go negative. On one thread
 * there is no tail (the one thread runs the main loop): det's bits. */
#include "mutants.h"
#include "norm/norm.h"
#include "tail_paths.h"

static sb_norm_stats one_pass_stats(const float *x, size_t c, float eps)
{
    float sum = 0.0f, sq = 0.0f;
    for (size_t j = 0; j < c; j++) {
        sum += x[j];
        sq += x[j] * x[j];
    }
    const float mean = sum / (float)c;
    const float var = sq / (float)c - mean * mean;
    return (sb_norm_stats){mean, 1.0f / sqrtf(var + eps)};
}

void sb_mutant_layernorm_one_pass_tail(float *y,              /* [n][c] */
                                       const float *x,        /* [n][c] */
                                       const float *gamma,    /* [c] */
                                       const float *beta,     /* [c] */
                                       const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel
    {
        const bool tail = sb_mutant_in_tail();
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++) {
            const float *xi = x + (size_t)i * c;
            float *yi = y + (size_t)i * c;
            if (!tail) {
                sb_layernorm_row(yi, xi, gamma, beta, c, s->eps);
                continue;
            }
            const sb_norm_stats st = one_pass_stats(xi, c, s->eps);
            for (size_t j = 0; j < c; j++)
                yi[j] = sb_norm_xhat(xi[j], st) * gamma[j] + beta[j];
        }
    }
}
