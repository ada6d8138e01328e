/* dense, loose family: the long reductions split over the threads the usual
 * way: split-K for the forward pass (K = in) and for the weight gradient
 * (K = batch), a reduction clause for the bias gradient. (The data gradient,
 * K = out, short, is split over outputs as usual, which is det's code:
 * kernels.def.) */
#include <string.h>

#include "dense.h"
#include "gemm/sb_gemm.h"

void sb_dense_fwd_loose(float *y, const float *x, const float *w, const float *b,
                        const sb_dense_shape *s)
{
    sb_dense_fill_bias(y, b, s);
    sb_gemm_loose(y, sb_matview_rows(x, s->in), sb_matview_rows(w, s->out), s->out,
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
    int out = s->out;
    memset(db, 0, (size_t)out * sizeof(float));
#pragma omp parallel for schedule(static) reduction(+ : db[:out])
    for (int i = 0; i < s->n; i++)
        for (int o = 0; o < out; o++)
            db[o] += dy[(size_t)i * out + o];
}
