/* The negative log-likelihood in double, from the float inputs the op read,
 * with the forward error bound of the float algorithm (running_error.h):
 * each weighted term one rounded product, each sum gamma(m - 1) times its
 * terms' magnitudes (any order, so every family's), the mean's division
 * one more rounding. */
#include "nll.h"
#include "refd_sums.h"
#include "running_error.h"

/* position e's term with its error: the product's rounding when weighted */
static sb_err term_of(const sb_op_call *c, size_t e)
{
    const sb_nll_shape *s = &c->nll;
    const int32_t y = SB_REFD_LABELS(c, 1)[e];
    if (y == s->ignore_index)
        return sb_err_exact(0.0);
    SB_ASSERT(y >= 0 && y < s->k);
    const size_t d = (size_t)s->d, i = e / d, p = e % d;
    const double v = (double)SB_REFD_IN(c, 0)[(i * (size_t)s->k + (size_t)y) * d + p];
    if (!s->weighted)
        return sb_err_exact(-v);
    return sb_err_mul(sb_err_exact(-(double)SB_REFD_IN(c, 2)[y]), sb_err_exact(v));
}

/* W, the sum of the kept positions' weights (labels input 1, weights
 * input 2, in the loss and its gradients alike), in any order */
static sb_err weight_sum_of(const sb_op_call *c)
{
    const sb_nll_shape *s = &c->nll;
    const size_t m = sb_nll_count(s);
    sb_err_sum den = {0};
    for (size_t e = 0; e < m; e++)
        sb_err_sum_add(&den, sb_err_exact((double)sb_nll_weight(SB_REFD_IN(c, 2),
                                                                SB_REFD_LABELS(c, 1), s, e)));
    return sb_err_sum_end(&den, m);
}

static sb_err loss_of(const sb_op_call *c, bool mean)
{
    const size_t m = sb_nll_count(&c->nll);
    sb_err_sum num = {0};
    for (size_t e = 0; e < m; e++)
        sb_err_sum_add(&num, term_of(c, e));
    const sb_err sum = sb_err_sum_end(&num, m);
    return mean ? sb_err_div(sum, weight_sum_of(c)) : sum;
}

void sb_nll_loss_mean_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_err l = loss_of(c, true);
    *value = l.v;
    *bound = l.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW * (double)sb_nll_count(&c->nll);
}

void sb_nll_loss_sum_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_err l = loss_of(c, false);
    *value = l.v;
    *bound = l.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW * (double)sb_nll_count(&c->nll);
}

void sb_nll_loss_none_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    for (size_t e = 0; e < sb_nll_count(&c->nll); e++) {
        const sb_err t = term_of(c, e);
        value[e] = t.v;
        bound[e] = t.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW;
    }
}

/* The gradients (nll.h): 0 but at each kept target, w[y] (-q) with q
 * exact (g, g_e) or g / W (mean: W's sum in any order, then the quotient's
 * rounding), the product one more rounding. */
static void grad_of(double *value, double *bound, const sb_op_call *c, sb_err q_one)
{
    const sb_nll_shape *s = &c->nll;
    const size_t m = sb_nll_count(s);
    const int32_t *labels = SB_REFD_LABELS(c, 1);
    for (size_t j = 0; j < m * (size_t)s->k; j++)
        value[j] = bound[j] = 0.0;
    const bool per_position = c->op == SB_OP_nll_loss_none_bwd;
    for (size_t e = 0; e < m; e++) {
        if (labels[e] == s->ignore_index)
            continue;
        const sb_err q = per_position ? sb_err_exact((double)SB_REFD_IN(c, 0)[e]) : q_one;
        const sb_err g =
            s->weighted ? sb_err_mul(sb_err_exact((double)SB_REFD_IN(c, 2)[labels[e]]), q) : q;
        const size_t at = sb_nll_target_at(labels, s, e);
        value[at] = -g.v;
        bound[at] = g.e * SB_ERR_SLACK + SB_REFD_UNDERFLOW;
    }
}

void sb_nll_loss_mean_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    grad_of(value, bound, c, sb_err_div(sb_err_exact((double)SB_REFD_IN(c, 0)[0]), weight_sum_of(c)));
}

void sb_nll_loss_sum_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    grad_of(value, bound, c, sb_err_exact((double)SB_REFD_IN(c, 0)[0]));
}

void sb_nll_loss_none_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    grad_of(value, bound, c, sb_err_exact(0.0)); /* q per position */
}
