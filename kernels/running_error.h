/* Running error analysis (Higham, ASNA 2nd ed., 3.3) for the bounds and
 * double evaluations of ops whose outputs go through divisions, square
 * roots or tanh: each quantity is carried as its exact value v (evaluated in
 * double from the op's float inputs) and a bound e on |float result - v|
 * for the op's float algorithm. With u = 2^-24 and every float operation
 * rounding once, relative error <= u (normal range; gradual underflow is not
 * covered, as in every bound here):
 *   a +- b   e = ea + eb + u (|v| + ea + eb)
 *   a * b    e0 = |a| eb + |b| ea + ea eb,  e = e0 + u (|v| + e0)
 *   a / b    e0 = (ea + |v| eb) / (|b| - eb),  e = e0 + u (|v| + e0)
 *   sqrt(a)  e0 = ea / (sqrt(max(a - ea, 0)) + sqrt(a)),  e = e0 + u (v + e0)
 *   tanh(a)  e = ea (tanh is 1-Lipschitz) + SB_ERR_TANH_ULPS ulps of
 *            sb_tanhf, each at most 2u |v| (|v| >= 2^-126)
 *   sum of m terms in any order: e = sum e_k + gamma(m - 1) sum (|v_k| + e_k)
 *            (the float terms are within e_k of v_k; Higham 3.1 for the adds)
 * The double evaluation of v itself errs by about m 2^-53 |v|, far below the
 * u |v| each rounded result adds; SB_ERR_SLACK covers it on a finished bound. */
#ifndef SB_RUNNING_ERROR_H
#define SB_RUNNING_ERROR_H

#include <math.h>
#include <stddef.h>

#include "sb_kernels.h"

#define SB_ERR_U 0x1p-24
/* relative slack on a finished bound for the double evaluation's own error */
#define SB_ERR_SLACK (1.0 + 0x1p-20)

typedef struct sb_err {
    double v, e;
} sb_err;

static inline sb_err sb_err_exact(double v)
{
    return (sb_err){v, 0.0};
}

static inline sb_err sb_err_round(double v, double e0)
{
    return (sb_err){v, e0 + SB_ERR_U * (fabs(v) + e0)};
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
        return (sb_err){v, (double)INFINITY};
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

/* ... whose every term reaches the result through at most `path` additions */
static inline sb_err sb_err_sum_end_path(const sb_err_sum *s, size_t path)
{
    return (sb_err){s->v, s->e + sb_gamma((double)path) * s->magnitude};
}

/* ... in any order: paths of m - 1 additions */
static inline sb_err sb_err_sum_end(const sb_err_sum *s, size_t m)
{
    return sb_err_sum_end_path(s, m > 0 ? m - 1 : 0);
}

/* sb_tanhf's error analysis (elementwise/tanh.h) bounds it by 2.04 of these
 * ulps; measured over every float, at most 1.125 */
#define SB_ERR_TANH_ULPS 2.2

static inline sb_err sb_err_tanh(sb_err a)
{
    const double v = tanh(a.v);
    return (sb_err){v, a.e + SB_ERR_TANH_ULPS * 2.0 * SB_ERR_U * fabs(v) + 0x1p-149};
}

/* e rounded up to float after the slack, times `times` */
static inline float sb_err_bound_float(double e, double times)
{
    const double d = times * e * SB_ERR_SLACK;
    float f = (float)d;
    if ((double)f < d)
        f = nextafterf(f, INFINITY);
    return f;
}

#endif
