/* Reordering bounds of the negative log-likelihood's sums. Every order sums
 * the same float terms and weights (nll.h); the running error analysis
 * (running_error.h) bounds each order's |float - exact| by gamma(m - 1)
 * times the sum of magnitudes for each sum, carried through the mean's
 * division; twice that bounds two orders' difference. A mean whose
 * denominator's sign no order can be sure of (|D| within its own error)
 * has no finite bound: infinity, so no difference there is called a bug. */
#include <string.h>

#include "nll.h"
#include "running_error.h"

/* the loss as every order computes it, with its error for any order */
static sb_err nll_err(const float *logprob, const int32_t *labels, const float *weight,
                      const sb_nll_shape *s, bool mean)
{
    sb_nll_shape_check(s);
    const size_t m = sb_nll_count(s);
    sb_err_sum num = {0}, den = {0};
    for (size_t e = 0; e < m; e++) {
        sb_err_sum_add(&num, sb_err_exact((double)sb_nll_term(logprob, labels, weight, s, e)));
        sb_err_sum_add(&den, sb_err_exact((double)sb_nll_weight(weight, labels, s, e)));
    }
    const sb_err sum = sb_err_sum_end(&num, m);
    return mean ? sb_err_div(sum, sb_err_sum_end(&den, m)) : sum;
}

void sb_nll_loss_mean_bound(float *bound, const float *logprob, const int32_t *labels,
                            const float *weight, const sb_nll_shape *s)
{
    *bound = sb_err_bound_float(nll_err(logprob, labels, weight, s, true).e, 2.0);
}

void sb_nll_loss_sum_bound(float *bound, const float *logprob, const int32_t *labels,
                           const float *weight, const sb_nll_shape *s)
{
    *bound = sb_err_bound_float(nll_err(logprob, labels, weight, s, false).e, 2.0);
}

/* The mean's gradient, w[y] (-(g / W)) at each kept target: W in any order
 * errs by gamma(m - 1) sum |weight_e|, then the quotient and the product
 * round once each, for each order; twice that bounds two orders'
 * difference. Every other element is 0 in every order. */
void sb_nll_loss_mean_bwd_bound(float *bound, const float *dloss, const int32_t *labels,
                                const float *weight, const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    const size_t m = sb_nll_count(s);
    sb_err_sum den = {0};
    for (size_t e = 0; e < m; e++)
        sb_err_sum_add(&den, sb_err_exact((double)sb_nll_weight(weight, labels, s, e)));
    const sb_err q = sb_err_div(sb_err_exact((double)*dloss), sb_err_sum_end(&den, m));
    memset(bound, 0, m * (size_t)s->k * sizeof *bound);
    for (size_t e = 0; e < m; e++) {
        if (labels[e] == s->ignore_index)
            continue;
        const sb_err g =
            s->weighted ? sb_err_mul(sb_err_exact((double)weight[labels[e]]), q) : q;
        bound[sb_nll_target_at(labels, s, e)] = sb_err_bound_float(g.e, 2.0);
    }
}
