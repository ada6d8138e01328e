/* Reordering bounds of softmax_fwd and xent_loss: per output element, the
 * largest difference two summation orders of the op's reductions can
 * produce. u = 2^-24; gamma(m) = m*u/(1-m*u) bounds the relative error of any
 * order of summing m+1 nonnegative terms.
 *
 * What no order changes: the row max m (exact), d_j = fl(z_j - m) and
 * e_j = expf(d_j) are computed from the same bits the same way whatever the
 * order of the sums, so the bounds below take the e_j the kernels compute
 * (expf in float) and sum them exactly enough in double.
 *
 * softmax, p_j = fl(e_j / S^), S^ any order of S = sum_j e_j over k terms:
 *   |S^ - S| <= g*S with g = gamma(k-1), for each of the two orders, so
 *   |e_j/S^1 - e_j/S^2| <= e_j * 2gS / (S^2 (1-g)^2) = q_j * 2g/(1-g)^2,
 *   q_j = e_j/S; each order rounds its quotient once (relative u), adding at
 *   most u*(e_j/S^1 + e_j/S^2) <= q_j * 2u/(1-g). So
 *   bound_j = q_j * (2g/(1-g)^2 + 2u/(1-g)).
 *
 * xent, loss = fl(fl(sum_i l_i) / n), l_i = fl(logf(S^_i) + t_i),
 * t_i = fl(m_i - z_i[y_i]) the same in every order:
 *   log S^1 - log S^2 is at most log((1+g)/(1-g)) <= 2g/(1-g) in magnitude;
 *   logf errs by under 1 ulp <= 2u*|v| (glibc's documented bound), for each
 *   order: 4u*(lambda_i + g), lambda_i = log S_i >= 0 (S_i >= 1);
 *   the addition of t_i rounds once per order: 2u*l_i. Per row
 *   d_i = 2g/(1-g) + 4u*(lambda_i + g) + 2u*l_i.
 *   The batch sum: two orders of summing the perturbed l_i differ by at most
 *   sum_i d_i + 2*gamma(n-1)*sum_i l_i (the l_i are >= 0); the division by n
 *   rounds once per order, adding 2u*loss. So
 *   bound = (sum_i d_i + 2*gamma(n-1)*sum_i l_i)/n + 2u*loss,
 *   times (1 + 2*gamma(n-1))*(1 + 8u) for the second-order products (the
 *   rounding of already perturbed values) left out above.
 *
 * log-softmax, lp_j = fl(d_j - fl(logf(S^))), d_j = fl(z_j - m) the same in
 * every order: the two logs differ by at most 2g/(1-g) + 4u*(lambda + g) as
 * for xent (l below), and each order's subtraction rounds once, u times
 * |d_j| + lambda + l at most:
 *   bound_j = l + 2u*(|d_j| + lambda + l), times (1 + 8u).
 *
 * log-softmax's gradient, dz_j = fl(dlp_j - fl(e_j S^)), e_j = expf(lp_j)
 * the same in every order, S^ any order of S = sum_j dlp_j: the running
 * error analysis (running_error.h) bounds each order's |dz^_j - dz_j| by
 * E_j (the sum gamma(k-1) sum |dlp|, then the product's and the
 * difference's roundings), and two orders differ by at most 2 E_j.
 *
 * Both are evaluated in double; the factor (1 + 2^-30) covers the O(k*2^-53)
 * relative error of that evaluation, and the result is rounded up to float.
 * Where an output is not finite (NaN or Inf logits) the bound is 0: no order
 * explains a difference there. */
#include <math.h>

#include "classifier.h"
#include "running_error.h"

static const double u = 0x1p-24;
static const double eval_slack = 1.0 + 0x1p-30;

static float round_up(double v)
{
    float f = (float)v;
    if ((double)f < v)
        f = nextafterf(f, INFINITY);
    return f;
}

/* sum_j e_j in double, e_j = expf(z_j - m) as the kernels compute it, the
 * classes `stride` apart */
static double expsum_exact(const float *z, float m, int k, size_t stride)
{
    double s = 0.0;
    for (int j = 0; j < k; j++)
        s += (double)expf(z[(size_t)j * stride] - m);
    return s;
}

void sb_softmax_fwd_bound(float *bound,         /* [n][k] */
                          const float *logits,  /* [n][k] */
                          const sb_class_shape *s)
{
    SB_ASSERT(s->n >= 0 && s->k > 0);
    const size_t k = (size_t)s->k;
    const double g = sb_gamma(s->k - 1);
    const double factor = (2.0 * g / ((1.0 - g) * (1.0 - g)) + 2.0 * u / (1.0 - g)) * eval_slack;
    for (int i = 0; i < s->n; i++) {
        const float *z = logits + (size_t)i * k;
        float *b = bound + (size_t)i * k;
        const float m = sb_row_max(z, s->k);
        const double sum = expsum_exact(z, m, s->k, 1);
        for (size_t j = 0; j < k; j++) {
            const double q = (double)expf(z[j] - m) / sum;
            b[j] = isfinite(q) ? round_up(q * factor) : 0.0f;
        }
    }
}

void sb_log_softmax_fwd_bound(float *bound,         /* [n][k] or [n][k][d] */
                              const float *logits,  /* [n][k] or [n][k][d] */
                              const sb_class_shape *s)
{
    SB_ASSERT(s->n >= 0 && s->k > 0);
    const size_t stride = sb_class_stride(s);
    const double g = sb_gamma(s->k - 1);
    for (size_t e = 0; e < sb_class_rows(s); e++) {
        const float *z = logits + sb_class_row_at(s, e);
        float *b = bound + sb_class_row_at(s, e);
        const float m = sb_row_max_at(z, s->k, stride);
        const double lambda = log(expsum_exact(z, m, s->k, stride));
        const double l = 2.0 * g / (1.0 - g) + 4.0 * u * (lambda + g);
        for (size_t j = 0; j < (size_t)s->k; j++) {
            const double d = fabs((double)(z[j * stride] - m));
            const double bj = (l + 2.0 * u * (d + lambda + l)) * (1.0 + 8.0 * u) * eval_slack;
            b[j * stride] = isfinite(bj) ? round_up(bj) : 0.0f;
        }
    }
}

void sb_log_softmax_bwd_bound(float *bound,             /* [n][k] or [n][k][d] */
                              const float *dlogprob,    /* [n][k] or [n][k][d] */
                              const float *logprob,     /* [n][k] or [n][k][d] */
                              const sb_class_shape *s)
{
    SB_ASSERT(s->n >= 0 && s->k > 0);
    const size_t stride = sb_class_stride(s);
    for (size_t e = 0; e < sb_class_rows(s); e++) {
        const size_t at = sb_class_row_at(s, e);
        const float *dy = dlogprob + at, *lp = logprob + at;
        sb_err_sum sum = {0};
        for (size_t j = 0; j < (size_t)s->k; j++)
            sb_err_sum_add(&sum, sb_err_exact((double)dy[j * stride]));
        const sb_err total = sb_err_sum_end(&sum, (size_t)s->k);
        for (size_t j = 0; j < (size_t)s->k; j++) {
            const sb_err prod = sb_err_mul(sb_err_exact((double)expf(lp[j * stride])), total);
            const sb_err dz = sb_err_sub(sb_err_exact((double)dy[j * stride]), prod);
            bound[at + j * stride] = isfinite(dz.e) ? sb_err_bound_float(dz.e, 2.0) : 0.0f;
        }
    }
}

void sb_xent_loss_bound(float *bound,           /* [1] */
                        const float *logits,    /* [n][k] */
                        const int32_t *labels,  /* [n] in [0, k) */
                        const sb_class_shape *s)
{
    SB_ASSERT(s->n > 0 && s->k > 0);
    const size_t k = (size_t)s->k;
    const double g = sb_gamma(s->k - 1);
    const double gn = sb_gamma(s->n - 1);
    double sum_d = 0.0, sum_l = 0.0;
    for (int i = 0; i < s->n; i++) {
        const float *z = logits + (size_t)i * k;
        SB_ASSERT(labels[i] >= 0 && labels[i] < s->k);
        const float m = sb_row_max(z, s->k);
        const double lambda = log(expsum_exact(z, m, s->k, 1));
        const double l = lambda + ((double)m - (double)z[labels[i]]);
        sum_d += 2.0 * g / (1.0 - g) + 4.0 * u * (lambda + g) + 2.0 * u * l;
        sum_l += l;
    }
    const double loss = sum_l / s->n;
    const double b = ((sum_d + 2.0 * gn * sum_l) / s->n + 2.0 * u * loss) *
                     (1.0 + 2.0 * gn) * (1.0 + 8.0 * u) * eval_slack;
    *bound = isfinite(b) ? round_up(b) : 0.0f;
}
