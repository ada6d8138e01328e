/* dense in double (x [n][in], w [in][out], b [out], y [n][out]):
 *   fwd         y[i][j]  = b[j] + sum_p x[i][p] w[p][j]   m = in + 1
 *   bwd_data    dx[i][p] = sum_j dy[i][j] w[p][j]         m = out
 *   bwd_weights dw[p][j] = sum_i x[i][p] dy[i][j]         m = n
 *   bwd_bias    db[j]    = sum_i dy[i][j]                 m = n
 * Bounds: sb_refd_sum_bound with path m, except the det bias gradient, one
 * sb_sum_det over the batch: ceil(n / SB_GEMM_KC) chunk sums. */
#include <math.h>

#include "dense.h"
#include "gemm/sb_gemm.h"
#include "refd_sums.h"

/* element e of the output: sum over t < m of a[e's row][t] * b[t][e's column]
 * with the given strides (b NULL: the terms are a's alone) */
typedef struct dot_view {
    const float *a, *b;
    size_t a_row, a_step;       /* a index of (row, t) = row*a_row + t*a_step */
    size_t b_col, b_step;       /* b index of (col, t) = col*b_col + t*b_step */
    size_t cols, m;
} dot_view;

static void dot_all(double *value, double *abs_sum, const dot_view *v, size_t count)
{
#pragma omp parallel for schedule(static)
    for (size_t e = 0; e < count; e++) {
        const size_t row = e / v->cols, col = e % v->cols;
        double sum = 0.0, abs = 0.0;
        for (size_t t = 0; t < v->m; t++) {
            double term = (double)v->a[row * v->a_row + t * v->a_step];
            if (v->b)
                term *= (double)v->b[col * v->b_col + t * v->b_step];
            sum += term;
            abs += fabs(term);
        }
        value[e] = sum;
        abs_sum[e] = abs;
    }
}

/* abs_sum: the sums of magnitudes, replaced by the bounds */
static void bounds_from(double *abs_sum, size_t count, double m, double path)
{
    for (size_t e = 0; e < count; e++)
        abs_sum[e] = sb_refd_sum_bound(abs_sum[e], m, path);
}

void sb_dense_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t in = (size_t)c->dense.in, out = (size_t)c->dense.out;
    const size_t count = sb_tensor_count(&c->out[0]);
    dot_view v = {SB_REFD_IN(c, 0), SB_REFD_IN(c, 1), in, 1, 1, out, out, in};
    dot_all(value, bound, &v, count);
    for (size_t e = 0; e < count; e++) {
        const double b = (double)SB_REFD_IN(c, 2)[e % out];
        value[e] += b;
        bound[e] += fabs(b);
    }
    bounds_from(bound, count, (double)in + 1.0, (double)in + 1.0);
}

void sb_dense_bwd_data_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t in = (size_t)c->dense.in, out = (size_t)c->dense.out;
    const size_t count = sb_tensor_count(&c->out[0]);
    dot_view v = {SB_REFD_IN(c, 0), SB_REFD_IN(c, 1), out, 1, out, 1, in, out};
    dot_all(value, bound, &v, count);
    bounds_from(bound, count, (double)out, (double)out);
}

void sb_dense_bwd_weights_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const size_t n = (size_t)c->dense.n, in = (size_t)c->dense.in, out = (size_t)c->dense.out;
    const size_t count = sb_tensor_count(&c->out[0]);
    /* dw[p][j]: row p of x^T, column j of dy */
    dot_view v = {SB_REFD_IN(c, 1), SB_REFD_IN(c, 0), 1, in, 1, out, out, n};
    dot_all(value, bound, &v, count);
    bounds_from(bound, count, (double)n, (double)n);
}

void sb_dense_bwd_bias_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    const size_t n = (size_t)c->dense.n, out = (size_t)c->dense.out;
    /* a single "row" per output j: column j of dy */
    for (size_t j = 0; j < out; j++) {
        dot_view col = {SB_REFD_IN(c, 0) + j, NULL, 0, out, 0, 0, 1, n};
        dot_all(value + j, bound + j, &col, 1);
    }
    const double m = (double)n;
    bounds_from(bound, out, m, sb_refd_sum_path(f, m, ceil(m / SB_GEMM_KC)));
}
