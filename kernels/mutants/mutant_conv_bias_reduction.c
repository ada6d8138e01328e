/* FAULT: the bias gradient is an OpenMP reduction clause over images, so the
 * per-thread partial sums and the order they combine in follow the thread
 * count. On one thread the private sum runs the det order exactly. */
#include <string.h>

#include "gemm/sb_gemm.h"
#include "mutants.h"

void sb_mutant_conv_bias_reduction(float *db,           /* [k] */
                                   const float *dy,     /* [n][k][p][q] */
                                   const sb_conv_shape *s)
{
    const size_t pq = (size_t)s->p * s->q;
    const int k = s->k;
    memset(db, 0, (size_t)k * sizeof *db);
#pragma omp parallel for schedule(static) reduction(+ : db[:k])
    for (int img = 0; img < s->n; img++)
        for (int f = 0; f < k; f++)
            db[f] = sb_sum_det(dy + ((size_t)img * k + f) * pq, 1, pq, db[f]);
}
