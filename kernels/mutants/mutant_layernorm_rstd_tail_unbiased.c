/* FAULT: a separately written path for the last thread's share of the rows
 * (a "tail" loop kept apart from the main one) divides each row's sum of
 * squared deviations by c - 1, the unbiased variance (torch.var's default),
 * where layer norm takes the biased one, over c: its inverse standard
 * deviations are about 1/(2c) too large. On one thread there is no tail:
 * det's bits. */
#include <math.h>

#include "mutants.h"
#include "norm/norm.h"
#include "tail_paths.h"

static float det_rstd(const float *x, size_t c, float eps)
{
    return sb_norm_row_stats(x, c, eps).rstd;
}

static float unbiased_rstd(const float *x, size_t c, float eps)
{
    const float mean = sb_norm_row_stats(x, c, eps).mean;
    float sq = 0.0f;
    for (size_t j = 0; j < c; j++)
        sq += (x[j] - mean) * (x[j] - mean);
    return 1.0f / sqrtf(sq / (float)(c - 1) + eps);
}

void sb_mutant_layernorm_rstd_tail_unbiased(float *rstd,         /* [n] */
                                            const float *x,      /* [n][c] */
                                            const sb_norm_shape *s)
{
    sb_mutant_rows_with_tail(rstd, x, s, det_rstd, unbiased_rstd);
}
