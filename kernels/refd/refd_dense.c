/* dense in double (x [n][in], w [in][out], b [out], y [n][out]):
 *   fwd         y[i][j]  = b[j] + sum_p x[i][p] w[p][j]   m = in + 1
 *   bwd_data    dx[i][p] = sum_j dy[i][j] w[p][j]         m = out
 *   bwd_weights dw[p][j] = sum_i x[i][p] dy[i][j]         m = n
 *   bwd_bias    db[j]    = sum_i dy[i][j]                 m = n
 * Bounds: refd_sum_bound with path m, except the det bias gradient, one
 * sb_sum_det over the batch: ceil(n / SB_GEMM_KC) chunk sums. */
#include <math.h>

#include "gemm/sb_gemm.h"
#include "refd.h"

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

void refd_dense(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    const size_t n = (size_t)c->dense.n, in = (size_t)c->dense.in, out = (size_t)c->dense.out;
    const size_t count = sb_tensor_count(&c->out[0]);
    double *abs_sum = bound;    /* filled with sum|terms| first, then the bound */
    double m = 0.0, path = 0.0;
    dot_view v;

    switch (c->op) {
    case SB_OP_dense_fwd:
        v = (dot_view){REFD_IN(c, 0), REFD_IN(c, 1), in, 1, 1, out, out, in};
        dot_all(value, abs_sum, &v, count);
        for (size_t e = 0; e < count; e++) {
            const double b = (double)REFD_IN(c, 2)[e % out];
            value[e] += b;
            abs_sum[e] += fabs(b);
        }
        m = path = (double)in + 1.0;
        break;
    case SB_OP_dense_bwd_data:
        v = (dot_view){REFD_IN(c, 0), REFD_IN(c, 1), out, 1, out, 1, in, out};
        dot_all(value, abs_sum, &v, count);
        m = path = (double)out;
        break;
    case SB_OP_dense_bwd_weights:
        /* dw[p][j]: row p of x^T, column j of dy */
        v = (dot_view){REFD_IN(c, 1), REFD_IN(c, 0), 1, in, 1, out, out, n};
        dot_all(value, abs_sum, &v, count);
        m = path = (double)n;
        break;
    case SB_OP_dense_bwd_bias:
        /* a single "row": column j of dy */
        v = (dot_view){REFD_IN(c, 0), NULL, 0, out, 0, 0, out, n};
        for (size_t j = 0; j < out; j++) {
            dot_view col = v;
            col.a = v.a + j;
            col.cols = 1;
            dot_all(value + j, abs_sum + j, &col, 1);
        }
        m = (double)n;
        path = refd_sum_path(f, m, ceil(m / SB_GEMM_KC));
        break;
    default:
        SB_ASSERT(!"not a dense op");
    }
    for (size_t e = 0; e < count; e++)
        bound[e] = refd_sum_bound(abs_sum[e], m, path);
}
