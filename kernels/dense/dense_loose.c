/* dense, loose family: the long reductions split over the threads the usual
 * way: split-K for the forward pass (K = in; its rows, the batch, split
 * instead in a tall product: sb_gemm_loose_batch) and for the weight
 * gradient (K = batch), per-thread partial sums added in thread order for the bias
 * gradient (not a reduction clause, whose partials libgomp combines in the
 * order the threads arrive, so that its bits change from run to run). (The data gradient,
 * K = out, short, is split over outputs as usual, which is det's code:
 * kernels.def.) */
#include <omp.h>
#include <stdlib.h>

#include "dense.h"
#include "gemm/sb_gemm.h"

void sb_dense_fwd_loose(float *y, const float *x, const float *w, const float *b,
                        const sb_dense_shape *s)
{
    sb_dense_fill_bias(y, b, s);
    sb_gemm_loose_batch(y, sb_matview_rows(x, s->in), sb_matview_rows(w, s->out), s->out,
                  s->n, s->out, s->in, true);
}

void sb_dense_bwd_weights_loose(float *dw, const float *dy, const float *x,
                                const sb_dense_shape *s)
{
    sb_gemm_loose(dw, sb_matview_trans(x, s->in), sb_matview_rows(dy, s->out), s->out,
                  s->in, s->out, s->n, false);
}

void sb_dense_bwd_bias_loose(float *db, const float *dy, const sb_dense_shape *s)
{
    int out = s->out, threads = omp_get_max_threads();
    float *part = calloc((size_t)out * (size_t)threads, sizeof(float));
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float *mine = part + (size_t)out * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++)
            for (int o = 0; o < out; o++)
                mine[o] += dy[(size_t)i * out + o];
    }
    sb_partials_sum(db, part, (size_t)out, threads);
    free(part);
}
