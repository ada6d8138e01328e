/* dense, det family, on the GEMM core (gemm/sb_gemm.h): every product is the
 * det GEMM (threads split the output, the reduction runs in fixed chunks);
 * the bias gradient gives each output one writer summing fixed chunks of the
 * batch. */
#include "dense.h"
#include "gemm/sb_gemm.h"

/* y = b + x w: the bias enters before chunk 0, added as the first chunk's
 * sums are stored (a pass filling y with it first took a twentieth of the
 * GPT's dense forward passes) */
void sb_dense_fwd_det(float *y, const float *x, const float *w, const float *b,
                      const sb_dense_shape *s)
{
    sb_gemm_det_biased(y, sb_matview_rows(x, s->in), sb_matview_rows(w, s->out), s->out,
                       s->n, s->out, s->in, (sb_gemm_bias){b, true});
}

/* dx = dy w^T */
void sb_dense_bwd_data_det(float *dx, const float *dy, const float *w, const sb_dense_shape *s)
{
    sb_gemm_det(dx, sb_matview_rows(dy, s->out), sb_matview_trans(w, s->out), s->in,
                s->n, s->in, s->out, false);
}

/* dw = x^T dy */
void sb_dense_bwd_weights_det(float *dw, const float *dy, const float *x,
                              const sb_dense_shape *s)
{
    sb_gemm_det(dw, sb_matview_trans(x, s->in), sb_matview_rows(dy, s->out), s->out,
                s->in, s->out, s->n, false);
}

/* db[o] = sb_sum_det down column o of dy, the columns side by side (one at a
 * time, each sum a chain of dependent adds down a column, 2 KB apart for the
 * GPT's 512 outputs: 1.04 ms a call on a Zen 5 EPYC, against 0.65 for the
 * layer's weight gradient) */
void sb_dense_bwd_bias_det(float *db, const float *dy, const sb_dense_shape *s)
{
    sb_sum_det_cols(db, dy, s->out, (size_t)s->n, s->out);
}
