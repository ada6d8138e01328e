/* FAULT: ReduceMean parallel over the reduced axis, as a kernel does when
 * the outputs are too few to keep the threads busy: each thread sums one
 * contiguous run of the r terms of every output (in det's chunks), and the
 * threads' partial sums are added in thread order before the division by
 * r. One thread's one run is det's sum; more threads bracket it otherwise,
 * so the mean's bits follow the thread count. */
#include <omp.h>
#include <stdlib.h>

#include "gemm/sb_gemm.h"
#include "mutants.h"
#include "reduce/reduce.h"

void sb_mutant_reduce_mean_thread_split(float *y,              /* [outer][inner] */
                                        const float *x,        /* [outer][r][inner] */
                                        const sb_reduce_shape *s)
{
    sb_reduce_shape_check(s);
    const size_t outputs = sb_reduce_outputs(s), r = (size_t)s->r, inner = (size_t)s->inner;
    const int threads = omp_get_max_threads();
    float *part = calloc((size_t)threads * outputs, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        const size_t lo = r * me / team, hi = r * (me + 1) / team;
        for (size_t e = 0; e < outputs; e++)
            part[me * outputs + e] =
                sb_sum_det(x + sb_reduce_first(s, e) + lo * inner, s->inner, hi - lo, 0.0f);
    }
    for (size_t e = 0; e < outputs; e++) {
        float sum = 0.0f;
        for (int t = 0; t < threads; t++)
            sum += part[(size_t)t * outputs + e];
        y[e] = sum / (float)s->r;
    }
    free(part);
}
