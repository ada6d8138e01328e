/* softmax, cross-entropy, its gradient and accuracy in double, from the float
 * logits (or probabilities) the op read. The float algorithms they bound are
 * the stable ones of kernels/classifier: m = row max, d_j = fl(z_j - m),
 * e_j = expf(d_j), S = sum_j e_j, p_j = e_j / S, l = logf(S) + (m - z_y).
 *
 * softmax. fl(z_j - m) errs by at most u|d_j|, which moves exp by a factor
 * within expm1(u|d_j|); expf errs by under 1 ulp (<= 2u relative): e_j has
 * relative error eta_j <= expm1(u|d_j|)(1 + 2u) + 2u. The float sum of k such
 * terms, in any order, has relative error
 *   sigma <= H + gamma(k-1)(1 + H),  H = sum_j e_j eta_j / S,
 * and the quotient rounds once (u), so
 *   |p^_j - p_j| <= p_j (eta_j + sigma + u + eta_j u) / (1 - sigma)
 * plus 2^-148 for an e_j or p_j that underflows (2^-149 / S with S >= 1, and
 * 2^-150 for the quotient).
 *
 * cross-entropy. Per row, t = fl(m - z_y) errs by u|t|; log(S(1+sigma)) is
 * within sigma/(1-sigma) of lambda = log S; logf adds under 1 ulp
 * (2u (lambda + sigma/(1-sigma))); the addition of t rounds once (u l).
 * With d_i the sum of these, the batch sum in any order adds
 * gamma(n) sum (l_i + d_i), and the division by n one more rounding:
 *   bound = E/n + u (loss + E/n),  E = sum d_i + gamma(n) sum (l_i + d_i).
 *
 * gradient. (p - onehot)/n: the subtraction and the division round once each
 * (n is exact): |value| (2u + u^2), plus 2^-150 for an underflowed quotient.
 *
 * accuracy. count/n with count and n exact: one rounding, u |value|.
 *
 * Every bound carries a factor 1 + 2^-30 for the error of evaluating it (and
 * the value) in double. */
#include <math.h>

#include "classifier.h"
#include "refd_sums.h"
#include "running_error.h"

static const double slack = 1.0 + 0x1p-30;

typedef struct row_eval {
    double m, sum, sigma;       /* row max, sum of exp(z_j - m), its relative error bound */
} row_eval;

static double eta(double d)
{
    return expm1(SB_REFD_U * fabs(d)) * (1.0 + 2.0 * SB_REFD_U) + 2.0 * SB_REFD_U;
}

/* a row of k classes `stride` apart */
static row_eval row_evaluate(const float *z, int k, size_t stride)
{
    row_eval r = {.m = (double)z[0]};
    for (int j = 1; j < k; j++)
        if ((double)z[(size_t)j * stride] > r.m)
            r.m = (double)z[(size_t)j * stride];
    double h = 0.0;
    for (int j = 0; j < k; j++) {
        const double d = (double)z[(size_t)j * stride] - r.m, e = exp(d);
        r.sum += e;
        h += e * eta(d);
    }
    h /= r.sum;
    r.sigma = h + sb_gamma(k - 1) * (1.0 + h);
    return r;
}

void sb_softmax_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const int k = c->cls.k;
    for (int i = 0; i < c->cls.n; i++) {
        const float *z = SB_REFD_IN(c, 0) + (size_t)i * (size_t)k;
        const row_eval r = row_evaluate(z, k, 1);
        for (int j = 0; j < k; j++) {
            const size_t e = (size_t)i * (size_t)k + (size_t)j;
            const double d = (double)z[j] - r.m, p = exp(d) / r.sum, h = eta(d);
            value[e] = p;
            bound[e] = (p * (h + r.sigma + SB_REFD_U + h * SB_REFD_U) / (1.0 - r.sigma) + 0x1p-148) * slack;
        }
    }
}

/* log-softmax: d_j = fl(z_j - m) errs by u|d_j|, logf(S^) by
 * dlog + 2u (lambda + dlog) as in the cross-entropy, and the subtraction
 * rounds once. */
void sb_log_softmax_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_class_shape *s = &c->cls;
    const int k = s->k;
    const size_t stride = sb_class_stride(s);
    for (size_t row = 0; row < sb_class_rows(s); row++) {
        const size_t at = sb_class_row_at(s, row);
        const float *z = SB_REFD_IN(c, 0) + at;
        const row_eval r = row_evaluate(z, k, stride);
        const double lambda = log(r.sum), dlog = r.sigma / (1.0 - r.sigma);
        const double e_log = dlog + 2.0 * SB_REFD_U * (lambda + dlog);
        for (int j = 0; j < k; j++) {
            const size_t e = at + (size_t)j * stride;
            const double d = (double)z[(size_t)j * stride] - r.m, v = d - lambda;
            const double e0 = SB_REFD_U * fabs(d) + e_log;
            value[e] = v;
            bound[e] = (e0 + SB_REFD_U * (fabs(v) + e0)) * slack;
        }
    }
}

/* log-softmax's gradient: S = sum_j dlp_j in any order errs by gamma(k-1)
 * sum |dlp| (the inputs are exact), expf(lp_j) by under 1 ulp (2u
 * relative), and the product and the difference round once each
 * (running_error.h); plus 2^-150 for a result that underflows. */
void sb_log_softmax_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_class_shape *s = &c->cls;
    const size_t stride = sb_class_stride(s);
    for (size_t row = 0; row < sb_class_rows(s); row++) {
        const size_t at = sb_class_row_at(s, row);
        const float *dy = SB_REFD_IN(c, 0) + at, *lp = SB_REFD_IN(c, 1) + at;
        sb_err_sum sum = {0};
        for (size_t j = 0; j < (size_t)s->k; j++)
            sb_err_sum_add(&sum, sb_err_exact((double)dy[j * stride]));
        const sb_err total = sb_err_sum_end(&sum, (size_t)s->k);
        for (size_t j = 0; j < (size_t)s->k; j++) {
            const double ex = exp((double)lp[j * stride]);
            const sb_err e = {ex, 2.0 * SB_REFD_U * ex + 0x1p-149}; /* 1 ulp */
            const sb_err dz = sb_err_sub(sb_err_exact((double)dy[j * stride]), sb_err_mul(e, total));
            value[at + j * stride] = dz.v;
            bound[at + j * stride] = (dz.e + 2.0 * SB_REFD_UNDERFLOW) * slack;
        }
    }
}

void sb_xent_loss_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const int n = c->cls.n, k = c->cls.k;
    double sum_l = 0.0, sum_d = 0.0, sum_ld = 0.0;
    for (int i = 0; i < n; i++) {
        const float *z = SB_REFD_IN(c, 0) + (size_t)i * (size_t)k;
        const int32_t y = SB_REFD_LABELS(c, 1)[i];
        SB_ASSERT(y >= 0 && y < k);
        const row_eval r = row_evaluate(z, k, 1);
        const double lambda = log(r.sum), t = r.m - (double)z[y], l = lambda + t;
        const double dlog = r.sigma / (1.0 - r.sigma);
        const double d = dlog + 2.0 * SB_REFD_U * (lambda + dlog) + SB_REFD_U * fabs(t) +
                         SB_REFD_U * (l + dlog + 2.0 * SB_REFD_U * (lambda + dlog) + SB_REFD_U * fabs(t));
        sum_l += l;
        sum_d += d;
        sum_ld += l + d;
    }
    const double loss = sum_l / n;
    const double e = sum_d + sb_gamma(n) * sum_ld;
    *value = loss;
    *bound = (e / n + SB_REFD_U * (loss + e / n)) * slack;
}

void sb_softmax_xent_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const int n = c->cls.n, k = c->cls.k;
    const double mean_over = (double)sb_class_mean_over(&c->cls); /* a row count: exact */
    for (int i = 0; i < n; i++) {
        const int32_t y = SB_REFD_LABELS(c, 1)[i];
        SB_ASSERT(y >= 0 && y < k);
        for (int j = 0; j < k; j++) {
            const size_t e = (size_t)i * (size_t)k + (size_t)j;
            value[e] = ((double)SB_REFD_IN(c, 0)[e] - (j == y ? 1.0 : 0.0)) / mean_over;
            bound[e] = (fabs(value[e]) * (2.0 * SB_REFD_U + SB_REFD_U * SB_REFD_U) + SB_REFD_UNDERFLOW) * slack;
        }
    }
}

void sb_accuracy_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const int n = c->cls.n, k = c->cls.k;
    int64_t count = 0;
    for (int i = 0; i < n; i++)
        count += sb_row_correct(SB_REFD_IN(c, 0) + (size_t)i * (size_t)k, SB_REFD_LABELS(c, 1)[i], k);
    *value = (double)count / n;
    *bound = SB_REFD_U * *value * slack;
}
