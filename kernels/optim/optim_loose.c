/* The global gradient norm, loose family: an OpenMP reduction, whose
 * per-thread partial sums (and the order libgomp adds them in) follow the
 * thread count. */
#include <math.h>

#include "grad_norm.h"

void sb_grad_norm_loose(float *norm, const float *g, size_t n)
{
    float s = 0.0f;
#pragma omp parallel for schedule(static) reduction(+ : s) if (n >= SB_NORM_BLOCK)
    for (int64_t i = 0; i < (int64_t)n; i++)
        s += g[i] * g[i];
    *norm = sqrtf(s);
}
