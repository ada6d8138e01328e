/* conv2d in double: y = b + sum over (c, r, s) of x * w, and its three
 * gradients, each the same sum of products as the ref loops (taps in the
 * padding contribute nothing). Products of floats are exact in double.
 *
 * Bounds (sb_refd_sum_bound): per element, gamma(path + 1) * sum|terms| with
 * m terms: fwd c*r*s + 1 (the bias), bwd_data at most k*r*s, bwd_filter and
 * bwd_bias n*p*q. The path is m, except for the det bias gradient, whose
 * kernel adds each image's sb_sum_det chunks onto one accumulator:
 * n * ceil(p*q / SB_GEMM_KC) chunk sums, so path SB_GEMM_KC + that. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "gemm/sb_gemm.h"
#include "refd_sums.h"

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

/* One output element of each op: its sum of products and the sum of their
 * magnitudes, accumulated in locals (the sums are what the bound needs). */
typedef struct dsum {
    double value, abs;
} dsum;

static dsum fwd_at(const sb_conv_shape *s, const float *x, const float *w, int img, int f,
                   int p, int q)
{
    dsum d = {0.0, 0.0};
    for (int ch = 0; ch < s->c; ch++)
        for (int r = 0; r < s->r; r++) {
            const int ih = p * s->stride - s->pad + r;
            if (ih < 0 || ih >= s->h)
                continue;
            const float *xr = x + xi(s, img, ch, ih, 0), *wr = w + wi(s, f, ch, r, 0);
            for (int t = 0; t < s->s; t++) {
                const int iw = q * s->stride - s->pad + t;
                if (iw < 0 || iw >= s->w)
                    continue;
                const double term = (double)xr[iw] * (double)wr[t];
                d.value += term;
                d.abs += fabs(term);
            }
        }
    return d;
}

/* dx at (img, ch, ih, iw): the taps (f, r, t) whose output (p, q) reads it */
static dsum data_at(const sb_conv_shape *s, const float *dy, const float *w, int img, int ch,
                    int ih, int iw)
{
    dsum d = {0.0, 0.0};
    for (int f = 0; f < s->k; f++)
        for (int r = 0; r < s->r; r++) {
            const int hp = ih + s->pad - r;
            if (hp < 0 || hp % s->stride != 0 || hp / s->stride >= s->p)
                continue;
            for (int t = 0; t < s->s; t++) {
                const int wq = iw + s->pad - t;
                if (wq < 0 || wq % s->stride != 0 || wq / s->stride >= s->q)
                    continue;
                const double term = (double)dy[yi(s, img, f, hp / s->stride, wq / s->stride)] *
                                    (double)w[wi(s, f, ch, r, t)];
                d.value += term;
                d.abs += fabs(term);
            }
        }
    return d;
}

static dsum filter_at(const sb_conv_shape *s, const float *dy, const float *x, int f, int ch,
                      int r, int t)
{
    dsum d = {0.0, 0.0};
    for (int img = 0; img < s->n; img++)
        for (int p = 0; p < s->p; p++) {
            const int ih = p * s->stride - s->pad + r;
            if (ih < 0 || ih >= s->h)
                continue;
            const float *dyr = dy + yi(s, img, f, p, 0), *xr = x + xi(s, img, ch, ih, 0);
            for (int q = 0; q < s->q; q++) {
                const int iw = q * s->stride - s->pad + t;
                if (iw < 0 || iw >= s->w)
                    continue;
                const double term = (double)dyr[q] * (double)xr[iw];
                d.value += term;
                d.abs += fabs(term);
            }
        }
    return d;
}

/* The bound of every element from its sum of magnitudes, for m terms on a
 * rounding path of `path` additions; frees abs_sum. */
static void bounds_from(double *bound, double *abs_sum, size_t count, double m, double path)
{
    for (size_t e = 0; e < count; e++)
        bound[e] = sb_refd_sum_bound(abs_sum[e], m, path);
    free(abs_sum);
}

static double *abs_sums_new(size_t count)
{
    double *abs_sum = calloc(count, sizeof *abs_sum);
    SB_ASSERT(abs_sum != NULL);
    return abs_sum;
}

void sb_conv2d_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_conv_shape *s = &c->conv;
    const size_t count = sb_tensor_count(&c->out[0]), pq = (size_t)s->p * (size_t)s->q;
    const float *x = SB_REFD_IN(c, 0), *w = SB_REFD_IN(c, 1), *b = SB_REFD_IN(c, 2);
    double *abs_sum = abs_sums_new(count);
#pragma omp parallel for schedule(static)
    for (size_t e = 0; e < count; e++) {
        const int q = (int)(e % (size_t)s->q), p = (int)(e / (size_t)s->q % (size_t)s->p);
        const int fk = (int)(e / pq % (size_t)s->k), img = (int)(e / pq / (size_t)s->k);
        dsum d = fwd_at(s, x, w, img, fk, p, q);
        value[e] = d.value + (double)b[fk];
        abs_sum[e] = d.abs + fabs((double)b[fk]);
    }
    const double m = (double)s->c * s->r * s->s + 1.0;
    bounds_from(bound, abs_sum, count, m, m);
}

void sb_conv2d_bwd_data_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_conv_shape *s = &c->conv;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *dy = SB_REFD_IN(c, 0), *w = SB_REFD_IN(c, 1);
    double *abs_sum = abs_sums_new(count);
#pragma omp parallel for schedule(static)
    for (size_t e = 0; e < count; e++) {
        const int iw = (int)(e % (size_t)s->w), ih = (int)(e / (size_t)s->w % (size_t)s->h);
        const size_t plane = e / ((size_t)s->h * (size_t)s->w);
        dsum d = data_at(s, dy, w, (int)(plane / (size_t)s->c), (int)(plane % (size_t)s->c), ih, iw);
        value[e] = d.value;
        abs_sum[e] = d.abs;
    }
    const double m = (double)s->k * s->r * s->s;
    bounds_from(bound, abs_sum, count, m, m);
}

void sb_conv2d_bwd_filter_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_conv_shape *s = &c->conv;
    const size_t count = sb_tensor_count(&c->out[0]);
    const float *dy = SB_REFD_IN(c, 0), *x = SB_REFD_IN(c, 1);
    double *abs_sum = abs_sums_new(count);
#pragma omp parallel for schedule(static)
    for (size_t e = 0; e < count; e++) {
        const int t = (int)(e % (size_t)s->s), r = (int)(e / (size_t)s->s % (size_t)s->r);
        const size_t fc = e / ((size_t)s->r * (size_t)s->s);
        dsum d = filter_at(s, dy, x, (int)(fc / (size_t)s->c), (int)(fc % (size_t)s->c), r, t);
        value[e] = d.value;
        abs_sum[e] = d.abs;
    }
    const double m = (double)s->n * s->p * s->q;
    bounds_from(bound, abs_sum, count, m, m);
}

void sb_conv2d_bwd_bias_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    const sb_conv_shape *s = &c->conv;
    const size_t count = sb_tensor_count(&c->out[0]);
    const double pq = (double)s->p * s->q;
    const float *dy = SB_REFD_IN(c, 0);
    double *abs_sum = abs_sums_new(count);
    memset(value, 0, count * sizeof *value);
    for (int img = 0; img < s->n; img++)
        for (int fk = 0; fk < s->k; fk++)
            for (size_t e = 0; e < (size_t)pq; e++) {
                double term = (double)dy[((size_t)img * s->k + fk) * (size_t)pq + e];
                value[fk] += term;
                abs_sum[fk] += fabs(term);
            }
    const double m = (double)s->n * pq;
    bounds_from(bound, abs_sum, count, m, sb_refd_sum_path(f, m, s->n * ceil(pq / SB_GEMM_KC)));
}
