/* conv2d in double: y = b + sum over (c, r, s) of x * w, and its three
 * gradients, each the same sum of products as the ref loops (taps in the
 * padding contribute nothing). Products of floats are exact in double.
 *
 * Bounds (refd_sum_bound): per element, gamma(path + 1) * sum|terms| with
 * m terms: fwd c*r*s + 1 (the bias), bwd_data at most k*r*s, bwd_filter and
 * bwd_bias n*p*q. The path is m, except for the det bias gradient, whose
 * kernel adds each image's sb_sum_det chunks onto one accumulator:
 * n * ceil(p*q / SB_GEMM_KC) chunk sums, so path SB_GEMM_KC + that. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm/sb_gemm.h"
#include "refd.h"

static size_t xi(const sb_conv_shape *s, int img, int ch, int ih, int iw)
{
    return (((size_t)img * s->c + ch) * s->h + ih) * s->w + iw;
}

static size_t wi(const sb_conv_shape *s, int f, int ch, int r, int t)
{
    return (((size_t)f * s->c + ch) * s->r + r) * s->s + t;
}

static size_t yi(const sb_conv_shape *s, int img, int f, int p, int q)
{
    return (((size_t)img * s->k + f) * s->p + p) * s->q + q;
}

/* Runs body for every product (y index yk, x index xk, w index wk) of image
 * img and filter f. Callers parallelise over img or f, whichever keeps one
 * writer per output element. */
#define FOR_EACH_TAP(sh, img, f, body)                                           \
    for (int p = 0; p < (sh)->p; p++)                                            \
        for (int q = 0; q < (sh)->q; q++)                                        \
            for (int ch = 0; ch < (sh)->c; ch++)                                 \
                for (int r = 0; r < (sh)->r; r++)                                \
                    for (int t = 0; t < (sh)->s; t++) {                          \
                        int ih = p * (sh)->stride - (sh)->pad + r;                \
                        int iw = q * (sh)->stride - (sh)->pad + t;                \
                        if (ih < 0 || ih >= (sh)->h || iw < 0 || iw >= (sh)->w)   \
                            continue;                                           \
                        size_t yk = yi(sh, img, f, p, q);                        \
                        size_t xk = xi(sh, img, ch, ih, iw);                     \
                        size_t wk = wi(sh, f, ch, r, t);                         \
                        body                                                    \
                    }

void refd_conv(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    const sb_conv_shape *s = &c->conv;
    const size_t count = sb_tensor_count(&c->out[0]);
    const double pq = (double)s->p * s->q;
    double *abs_sum = calloc(count, sizeof *abs_sum);
    SB_ASSERT(abs_sum != NULL);
    memset(value, 0, count * sizeof *value);
    double m = 0.0, path = 0.0;

    switch (c->op) {
    case SB_OP_conv2d_fwd: {
        const float *x = REFD_IN(c, 0), *w = REFD_IN(c, 1), *b = REFD_IN(c, 2);
#pragma omp parallel for schedule(static)
        for (int img = 0; img < s->n; img++)
            for (int fk = 0; fk < s->k; fk++)
                FOR_EACH_TAP(s, img, fk, {
            double term = (double)x[xk] * (double)w[wk];
            value[yk] += term;
            abs_sum[yk] += fabs(term);
        })
        for (size_t e = 0; e < count; e++) {
            int fk = (int)(e / (size_t)pq % (size_t)s->k);
            value[e] += (double)b[fk];
            abs_sum[e] += fabs((double)b[fk]);
        }
        m = path = (double)s->c * s->r * s->s + 1.0;
        break;
    }
    case SB_OP_conv2d_bwd_data: {
        const float *dy = REFD_IN(c, 0), *w = REFD_IN(c, 1);
#pragma omp parallel for schedule(static)
        for (int img = 0; img < s->n; img++)
            for (int fk = 0; fk < s->k; fk++)
                FOR_EACH_TAP(s, img, fk, {
            double term = (double)dy[yk] * (double)w[wk];
            value[xk] += term;
            abs_sum[xk] += fabs(term);
        })
        m = path = (double)s->k * s->r * s->s;
        break;
    }
    case SB_OP_conv2d_bwd_filter: {
        const float *dy = REFD_IN(c, 0), *x = REFD_IN(c, 1);
#pragma omp parallel for schedule(static)
        for (int fk = 0; fk < s->k; fk++)
            for (int img = 0; img < s->n; img++)
                FOR_EACH_TAP(s, img, fk, {
            double term = (double)dy[yk] * (double)x[xk];
            value[wk] += term;
            abs_sum[wk] += fabs(term);
        })
        m = path = (double)s->n * pq;
        break;
    }
    case SB_OP_conv2d_bwd_bias: {
        const float *dy = REFD_IN(c, 0);
        for (int img = 0; img < s->n; img++)
            for (int fk = 0; fk < s->k; fk++)
                for (size_t e = 0; e < (size_t)pq; e++) {
                    double term = (double)dy[((size_t)img * s->k + fk) * (size_t)pq + e];
                    value[fk] += term;
                    abs_sum[fk] += fabs(term);
                }
        m = (double)s->n * pq;
        path = refd_sum_path(f, m, s->n * ceil(pq / SB_GEMM_KC));
        break;
    }
    default:
        SB_ASSERT(!"not a conv op");
    }
    for (size_t e = 0; e < count; e++)
        bound[e] = refd_sum_bound(abs_sum[e], m, path);
    free(abs_sum);
}
