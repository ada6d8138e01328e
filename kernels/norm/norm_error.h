/* Running error analysis of the row arithmetic of norm.h (Higham, ASNA 2nd
 * ed., 3.3): each quantity is carried as its exact value v (evaluated in
 * double from the op's float inputs) and a bound e on |float result - v|
 * for the float algorithm of norm.h under ANY order of its sums. With u =
 * 2^-24 and every float operation rounding once, relative error <= u
 * (normal range; gradual underflow is not covered, as in every bound here):
 *   a +- b   e = ea + eb + u (|v| + ea + eb)
 *   a * b    e0 = |a| eb + |b| ea + ea eb,  e = e0 + u (|v| + e0)
 *   a / b    e0 = (ea + |v| eb) / (|b| - eb),  e = e0 + u (|v| + e0)
 *   sqrt(a)  e0 = ea / (sqrt(max(a - ea, 0)) + sqrt(a)),  e = e0 + u (v + e0)
 *   sum of m terms in any order: e = sum e_k + gamma(m - 1) sum (|v_k| + e_k)
 *            (the float terms are within e_k of v_k; Higham 3.1 for the adds)
 * The double evaluation of v itself errs by about m 2^-53 |v|, far below
 * u |v|, which each rounded result already adds; SB_NORM_ERR_SLACK covers it.
 * A bound on |float - exact| for one order, doubled, bounds two orders'
 * difference: the reordering bounds (norm_bound.c). */
#ifndef SB_NORM_ERROR_H
#define SB_NORM_ERROR_H

#include <math.h>
#include <stddef.h>

#include "norm.h"

#define SB_NORM_U 0x1p-24
/* relative slack on a finished bound for the double evaluation's own error */
#define SB_NORM_ERR_SLACK (1.0 + 0x1p-20)

typedef struct sb_err {
    double v, e;
} sb_err;

static inline sb_err sb_err_exact(double v)
{
    return (sb_err){v, 0.0};
}

static inline sb_err sb_err_round(double v, double e0)
{
    return (sb_err){v, e0 + SB_NORM_U * (fabs(v) + e0)};
}

static inline sb_err sb_err_add(sb_err a, sb_err b)
{
    return sb_err_round(a.v + b.v, a.e + b.e);
}

static inline sb_err sb_err_sub(sb_err a, sb_err b)
{
    return sb_err_round(a.v - b.v, a.e + b.e);
}

static inline sb_err sb_err_mul(sb_err a, sb_err b)
{
    return sb_err_round(a.v * b.v, fabs(a.v) * b.e + fabs(b.v) * a.e + a.e * b.e);
}

/* b's error must leave it away from 0, or the quotient is unbounded */
static inline sb_err sb_err_div(sb_err a, sb_err b)
{
    const double v = a.v / b.v;
    if (!(fabs(b.v) > b.e))
        return (sb_err){v, INFINITY};
    return sb_err_round(v, (a.e + fabs(v) * b.e) / (fabs(b.v) - b.e));
}

static inline sb_err sb_err_sqrt(sb_err a)
{
    const double v = sqrt(a.v);
    const double e0 = v > 0.0 ? a.e / (sqrt(fmax(a.v - a.e, 0.0)) + v) : sqrt(a.e);
    return sb_err_round(v, e0);
}

/* A sum of m terms, accumulated with sb_err_sum_add from {0, 0} and
 * finished by sb_err_sum_end. */
typedef struct sb_err_sum {
    double v, e, magnitude;
} sb_err_sum;

static inline void sb_err_sum_add(sb_err_sum *s, sb_err t)
{
    s->v += t.v;
    s->e += t.e;
    s->magnitude += fabs(t.v) + t.e;
}

static inline sb_err sb_err_sum_end(const sb_err_sum *s, size_t m)
{
    return (sb_err){s->v, s->e + sb_gamma(m > 0 ? (double)(m - 1) : 0.0) * s->magnitude};
}

/* mean and rstd of a row as norm.h computes them, with their errors */
typedef struct sb_err_stats {
    sb_err mean, rstd;
} sb_err_stats;

static inline sb_err_stats sb_err_row_stats(const float *x, size_t c, float eps)
{
    const sb_err count = sb_err_exact((double)c);
    sb_err_sum sum = {0};
    for (size_t j = 0; j < c; j++)
        sb_err_sum_add(&sum, sb_err_exact((double)x[j]));
    const sb_err mean = sb_err_div(sb_err_sum_end(&sum, c), count);
    sb_err_sum sq = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err d = sb_err_sub(sb_err_exact((double)x[j]), mean);
        sb_err_sum_add(&sq, sb_err_mul(d, d));
    }
    const sb_err var = sb_err_div(sb_err_sum_end(&sq, c), count);
    const sb_err root = sb_err_sqrt(sb_err_add(var, sb_err_exact((double)eps)));
    return (sb_err_stats){mean, sb_err_div(sb_err_exact(1.0), root)};
}

static inline sb_err sb_err_xhat(float x, const sb_err_stats *st)
{
    return sb_err_mul(sb_err_sub(sb_err_exact((double)x), st->mean), st->rstd);
}

/* y row: value and error bound of each element */
static inline void sb_err_layernorm_row(sb_err *y, const float *x, const float *gamma,
                                        const float *beta, size_t c, float eps)
{
    const sb_err_stats st = sb_err_row_stats(x, c, eps);
    for (size_t j = 0; j < c; j++)
        y[j] = sb_err_add(sb_err_mul(sb_err_xhat(x[j], &st), sb_err_exact((double)gamma[j])),
                          sb_err_exact((double)beta[j]));
}

/* dx row: value and error bound of each element */
static inline void sb_err_layernorm_row_bwd(sb_err *dx, const float *dy, const float *x,
                                            const float *gamma, size_t c, float eps)
{
    const sb_err_stats st = sb_err_row_stats(x, c, eps);
    const sb_err count = sb_err_exact((double)c);
    sb_err_sum sum_g = {0}, sum_gx = {0};
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        sb_err_sum_add(&sum_g, g);
        sb_err_sum_add(&sum_gx, sb_err_mul(g, sb_err_xhat(x[j], &st)));
    }
    const sb_err a = sb_err_div(sb_err_sum_end(&sum_g, c), count);
    const sb_err b = sb_err_div(sb_err_sum_end(&sum_gx, c), count);
    for (size_t j = 0; j < c; j++) {
        const sb_err g = sb_err_mul(sb_err_exact((double)gamma[j]), sb_err_exact((double)dy[j]));
        dx[j] = sb_err_mul(st.rstd, sb_err_sub(sb_err_sub(g, a), sb_err_mul(sb_err_xhat(x[j], &st), b)));
    }
}

#endif
