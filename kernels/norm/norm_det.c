/* Layer norm and RMSNorm, det family. The forward pass and the data gradient are
 * parallel over groups of rows (SB_NORM_GROUP, the last few rows one by one),
 * each row the ref arithmetic (norm.h): ref's bits for every thread count;
 * loose runs these loops too (kernels.def). Gamma's gradient, a column sum
 * over rows, first computes every row's mean and rstd (parallel over groups
 * of rows), then runs tasks of (chunk of SB_GEMM_KC rows, block of
 * SB_NORM_COLS columns), each summing its chunk's rows in order from +0; the
 * chunk sums are added in chunk order: a fixed blocking, nothing the thread
 * count decides. RMSNorm's ops are the same loops over its rows (rmsnorm.h). */
#include <stdlib.h>
#include <string.h>

#include "gemm/sb_gemm.h"
#include "rmsnorm.h"

void sb_layernorm_fwd_det(float *y, const float *x, const float *gamma, const float *beta,
                          const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    const int groups = (s->n + SB_NORM_GROUP - 1) / SB_NORM_GROUP;
#pragma omp parallel for schedule(static)
    for (int g = 0; g < groups; g++) {
        const size_t i0 = (size_t)g * SB_NORM_GROUP;
        if (i0 + SB_NORM_GROUP <= (size_t)s->n) {
            sb_layernorm_group(y + i0 * c, x + i0 * c, gamma, beta, c, s->eps);
            continue;
        }
        for (size_t i = i0; i < (size_t)s->n; i++)
            sb_layernorm_row(y + i * c, x + i * c, gamma, beta, c, s->eps);
    }
}

void sb_layernorm_bwd_data_det(float *dx, const float *dy, const float *x, const float *gamma,
                               const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
    const int groups = (s->n + SB_NORM_GROUP - 1) / SB_NORM_GROUP;
#pragma omp parallel for schedule(static)
    for (int g = 0; g < groups; g++) {
        const size_t i0 = (size_t)g * SB_NORM_GROUP;
        if (i0 + SB_NORM_GROUP <= (size_t)s->n) {
            sb_layernorm_group_bwd(dx + i0 * c, dy + i0 * c, x + i0 * c, gamma, c, s->eps);
            continue;
        }
        for (size_t i = i0; i < (size_t)s->n; i++)
            sb_layernorm_row_bwd(dx + i * c, dy + i * c, x + i * c, gamma, c, s->eps);
    }
}

/* the stats of the rows of group g (SB_NORM_GROUP rows from g * SB_NORM_GROUP,
 * fewer in the last) */
typedef void group_stats_fn(sb_norm_stats *st, const float *x, size_t g, const sb_norm_shape *s);

static void layernorm_group_stats(sb_norm_stats *st, const float *x, size_t g,
                                  const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c, n = (size_t)s->n, i0 = g * SB_NORM_GROUP;
    if (i0 + SB_NORM_GROUP <= n) {
        sb_norm_group_stats(st + i0, x + i0 * c, c, s->eps);
        return;
    }
    for (size_t i = i0; i < n; i++)
        st[i] = sb_norm_row_stats(x + i * c, c, s->eps);
}

static void rms_group_stats(sb_norm_stats *st, const float *x, size_t g, const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c, n = (size_t)s->n, i0 = g * SB_NORM_GROUP;
    for (size_t i = i0; i < i0 + SB_NORM_GROUP && i < n; i++)
        st[i] = sb_rms_row_stats(x + i * c, c, s->eps);
}

static void gamma_det(float *dgamma, const float *dy, const float *x, const sb_norm_shape *s,
                      group_stats_fn *group_stats)
{
    const size_t c = (size_t)s->c, n = (size_t)s->n;
    const size_t chunks = (n + SB_GEMM_KC - 1) / SB_GEMM_KC;
    const int col_blocks = (s->c + SB_NORM_COLS - 1) / SB_NORM_COLS;
    const int tasks = (int)chunks * col_blocks;
    sb_norm_stats *st = malloc(n * sizeof *st);
    float *part = sb_floats_new(chunks * c);
    SB_ASSERT(st != NULL);
    const int groups = (s->n + SB_NORM_GROUP - 1) / SB_NORM_GROUP;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int g = 0; g < groups; g++)
            group_stats(st, x, (size_t)g, s);
#pragma omp for schedule(static)
        for (int task = 0; task < tasks; task++) {
            const size_t k = (size_t)(task / col_blocks);
            const size_t j0 = (size_t)(task % col_blocks) * SB_NORM_COLS;
            const size_t j1 = j0 + SB_NORM_COLS < c ? j0 + SB_NORM_COLS : c;
            const size_t i1 = (k + 1) * SB_GEMM_KC < n ? (k + 1) * SB_GEMM_KC : n;
            float *sum = part + k * c;
            memset(sum + j0, 0, (j1 - j0) * sizeof *sum);
            for (size_t i = k * SB_GEMM_KC; i < i1; i++)
                for (size_t j = j0; j < j1; j++)
                    sum[j] += dy[i * c + j] * sb_norm_xhat(x[i * c + j], st[i]);
        }
    }
    memset(dgamma, 0, c * sizeof *dgamma);
    for (size_t k = 0; k < chunks; k++)
        for (size_t j = 0; j < c; j++)
            dgamma[j] += part[k * c + j];
    free(st);
    free(part);
}

void sb_layernorm_bwd_gamma_det(float *dgamma, const float *dy, const float *x,
                                const sb_norm_shape *s)
{
    gamma_det(dgamma, dy, x, s, layernorm_group_stats);
}

void sb_rmsnorm_fwd_det(float *y, const float *x, const float *gamma, const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        sb_rmsnorm_row(y + (size_t)i * c, x + (size_t)i * c, gamma, c, s->eps);
}

void sb_rmsnorm_bwd_data_det(float *dx, const float *dy, const float *x, const float *gamma,
                             const sb_norm_shape *s)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++) {
        const size_t at = (size_t)i * c;
        sb_rmsnorm_row_bwd(dx + at, dy + at, x + at, gamma, c, s->eps);
    }
}

void sb_rmsnorm_bwd_gamma_det(float *dgamma, const float *dy, const float *x,
                              const sb_norm_shape *s)
{
    gamma_det(dgamma, dy, x, s, rms_group_stats);
}

/* A row's mean or rstd: rows in parallel, each the ref arithmetic. */
static void stats_det(float *out, const float *x, const sb_norm_shape *s, bool rstd)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++) {
        const sb_norm_stats st = sb_norm_row_stats(x + (size_t)i * c, c, s->eps);
        out[i] = rstd ? st.rstd : st.mean;
    }
}

void sb_layernorm_mean_det(float *mean, const float *x, const sb_norm_shape *s)
{
    stats_det(mean, x, s, false);
}

void sb_layernorm_rstd_det(float *rstd, const float *x, const sb_norm_shape *s)
{
    stats_det(rstd, x, s, true);
}
