/* dense, det and loose families on the GEMM core (gemm/sb_gemm.h).
 *
 * det: every product is the det GEMM (threads split the output, the
 * reduction runs in fixed chunks); the bias gradient gives each output one
 * writer summing fixed chunks of the batch.
 * loose: the long reductions are split over the threads the usual way:
 * split-K for the forward pass (K = in) and for the weight gradient
 * (K = batch), a reduction clause for the bias gradient. The data gradient
 * (K = out, short) is split over outputs as usual, which is the det code. */
#include <string.h>

#include "gemm/sb_data_move.h"
#include "gemm/sb_gemm.h"
#include "sb_kernels.h"

/* y's rows = b, without a library call per row: dense2's rows are 10 floats */
static void fill_bias(float *y, const float *b, const sb_dense_shape *s)
{
    for (int i = 0; i < s->n; i++)
        sb_copy_run(y + (size_t)i * s->out, b, s->out);
}

/* y = b + x w: the bias enters before chunk 0 */
static void dense_fwd_det(float *y, const float *x, const float *w, const float *b,
                          const sb_dense_shape *s)
{
    fill_bias(y, b, s);
    sb_gemm_det(y, sb_matview_rows(x, s->in), sb_matview_rows(w, s->out), s->out,
                s->n, s->out, s->in, true);
}

static void dense_fwd_loose(float *y, const float *x, const float *w, const float *b,
                            const sb_dense_shape *s)
{
    fill_bias(y, b, s);
    sb_gemm_loose(y, sb_matview_rows(x, s->in), sb_matview_rows(w, s->out), s->out,
                  s->n, s->out, s->in, true);
}

/* dx = dy w^T */
static void dense_bwd_data_det(float *dx, const float *dy, const float *w,
                               const sb_dense_shape *s)
{
    sb_gemm_det(dx, sb_matview_rows(dy, s->out), sb_matview_trans(w, s->out), s->in,
                s->n, s->in, s->out, false);
}

/* dw = x^T dy */
static void dense_bwd_weights_det(float *dw, const float *dy, const float *x,
                                  const sb_dense_shape *s)
{
    sb_gemm_det(dw, sb_matview_trans(x, s->in), sb_matview_rows(dy, s->out), s->out,
                s->in, s->out, s->n, false);
}

static void dense_bwd_weights_loose(float *dw, const float *dy, const float *x,
                                    const sb_dense_shape *s)
{
    sb_gemm_loose(dw, sb_matview_trans(x, s->in), sb_matview_rows(dy, s->out), s->out,
                  s->in, s->out, s->n, false);
}

static void dense_bwd_bias_det(float *db, const float *dy, const sb_dense_shape *s)
{
#pragma omp parallel for schedule(static)
    for (int o = 0; o < s->out; o++)
        db[o] = sb_sum_det(dy + o, s->out, (size_t)s->n, 0.0f);
}

static void dense_bwd_bias_loose(float *db, const float *dy, const sb_dense_shape *s)
{
    int out = s->out;
    memset(db, 0, (size_t)out * sizeof(float));
#pragma omp parallel for schedule(static) reduction(+ : db[:out])
    for (int i = 0; i < s->n; i++)
        for (int o = 0; o < out; o++)
            db[o] += dy[(size_t)i * out + o];
}

void sb_dense_register(sb_kernel_table *t, sb_family f)
{
    if (f == SB_FAMILY_DET) {
        t->dense_fwd = dense_fwd_det;
        t->dense_bwd_data = dense_bwd_data_det;
        t->dense_bwd_weights = dense_bwd_weights_det;
        t->dense_bwd_bias = dense_bwd_bias_det;
    } else if (f == SB_FAMILY_LOOSE) {
        t->dense_fwd = dense_fwd_loose;
        t->dense_bwd_data = dense_bwd_data_det;
        t->dense_bwd_weights = dense_bwd_weights_loose;
        t->dense_bwd_bias = dense_bwd_bias_loose;
    }
}
