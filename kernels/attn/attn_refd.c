/* Attention in double, with the forward error bound of the float
 * algorithm of attn.h in any of its summation orders. u = 2^-24,
 * gamma(m) = m u / (1 - m u). Per pair and query i, n keys (i + 1 when
 * causal, t when not):
 *
 * scores. s_j = fl(fl(sum_c q_c k_jc) * scale): d products, d - 1 additions
 * and the scaling put at most d + 1 roundings on each term's path, so
 * |s^_j - s_j| <= sigma_j = gamma(d + 1) * scale * sum_c |q_c k_jc|.
 *
 * probabilities. The row max m^ is exact on the s^ and cancels in p. The
 * exponent fl(s^_j - m^) rounds once (u (|s_j - m| + sigma_j + max sigma)),
 * so with tau_j the sum of that and sigma_j, e^_j = exp(s_j - m^) (1 + a),
 * |a| <= a_j = expm1(tau_j)(1 + 2u) + 2u (expf under 1 ulp). The sum over
 * n terms in any chunking errs by at most gamma(n - 1) per term, so
 * S^ = S (1 + zeta) with |zeta| <= sz = H + gamma(n - 1)(1 + H),
 * H = sum_j p_j a_j, and the quotient rounds once:
 *   |p^_j - p_j| <= pi_j = p_j (a_j + sz + u + a_j u) / (1 - sz) + 2^-148
 * (2^-148: an e_j or p_j that underflows).
 *
 * output. y_c = sum_j p^_j v_jc over n terms, at most n roundings a term:
 *   E_c = sum_j pi_j |v_jc| + gamma(n) sum_j (p_j + pi_j) |v_jc| + n 2^-150.
 *
 * gradients (the probabilities recomputed as above, pi_ij their bound):
 *   dp_ij = sum_c dy_ic v_jc:       e_dp = gamma(d) sum_c |dy_ic v_jc|
 *   D_i = sum_j p_ij dp_ij:         e_D = sum_j (pi |dp| + (p + pi) e_dp)
 *                                         + gamma(n) sum_j (p + pi)(|dp| + e_dp)
 *   f_ij = fl(dp_ij - D_i):         e_f = e_dp + e_D + u (|f| + e_dp + e_D)
 *   ds_ij = fl(fl(p_ij f_ij) scale): e_ds = scale (pi |f| + (p + pi) e_f
 *                                         + gamma(2)(p + pi)(|f| + e_f)) + 2^-149
 *   dq_i = sum_j ds_ij k_j, dk_j = sum_i ds_ij q_i: sum (e_ds |x|)
 *        + gamma(terms) sum (|ds| + e_ds) |x| + terms 2^-150
 *   dv_j = sum_i p_ij dy_i: sum (pi |dy|) + gamma(terms) sum (p + pi) |dy|
 *        + terms 2^-150
 * where |x| is the k or q element. With grouped heads a key/value head's
 * dk and dv are one sum over the terms of all its query heads (G heads of
 * `terms` each: G terms sums, then G - 1 additions, at most G terms
 * roundings a term), bounded as one sum of G terms terms.
 * Every bound is first order in the
 * errors it combines (the products of two error terms are kept), and the
 * double evaluation's own error (about t d 2^-53 relative) is covered by
 * the factor 1 + 2^-30. */
#include <stdlib.h>

#include "attn.h"
#include "refd_sums.h"

static const double u = SB_REFD_U;
static const double slack = 1.0 + 0x1p-30;

/* One query row: exact p[j] and their bound pi[j], j < n, from q and the
 * keys k_j (rows ld apart). */
static void row_probabilities(double *p, double *pi, const float *q, const float *k,
                              ptrdiff_t ld, int n, int d, double scale)
{
    const double gd = sb_gamma(d + 1.0);
    double m = -(double)INFINITY, sigma_max = 0.0;
    /* scores in p, their error in pi for now */
    for (int j = 0; j < n; j++) {
        double dot = 0.0, mag = 0.0;
        for (int c = 0; c < d; c++) {
            const double x = (double)q[c] * (double)k[j * ld + c];
            dot += x;
            mag += fabs(x);
        }
        p[j] = dot * scale;
        pi[j] = gd * scale * mag;
        m = fmax(m, p[j]);
        sigma_max = fmax(sigma_max, pi[j]);
    }
    double sum = 0.0;
    for (int j = 0; j < n; j++) {
        const double tau = pi[j] + u * (fabs(p[j] - m) + pi[j] + sigma_max);
        pi[j] = expm1(tau) * (1.0 + 2.0 * u) + 2.0 * u; /* a_j */
        p[j] = exp(p[j] - m);
        sum += p[j];
    }
    double h = 0.0;
    for (int j = 0; j < n; j++) {
        p[j] /= sum;
        h += p[j] * pi[j];
    }
    const double sz = h + sb_gamma(n - 1.0) * (1.0 + h);
    for (int j = 0; j < n; j++)
        pi[j] = p[j] * (pi[j] + sz + u + pi[j] * u) / (1.0 - sz) + 0x1p-148;
}

static void *alloc_doubles(size_t n)
{
    void *p = malloc((n > 0 ? n : 1) * sizeof(double));
    SB_ASSERT(p != NULL);
    return p;
}

void sb_attn_fwd_eval(double *value, double *err, const float *qkv, const sb_attn_shape *s)
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = sb_attn_ld(s);
    const double scale = (double)sb_attn_scale(d);
    double *p = alloc_doubles((size_t)t), *pi = alloc_doubles((size_t)t);
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->h; h++) {
            const int g = h / sb_attn_group(s);
            const float *q = qkv + sb_attn_q_at(s, b, h);
            const float *k = qkv + sb_attn_k_at(s, b, g), *v = qkv + sb_attn_v_at(s, b, g);
            for (int i = 0; i < t; i++) {
                const int n = sb_attn_keys(s, i);
                row_probabilities(p, pi, q + i * ld, k, ld, n, d, scale);
                const ptrdiff_t out = ((ptrdiff_t)b * t + i) * width + (ptrdiff_t)h * d;
                for (int c = 0; c < d; c++) {
                    double y = 0.0, e = 0.0, mag = 0.0;
                    for (int j = 0; j < n; j++) {
                        const double x = (double)v[j * ld + c];
                        y += p[j] * x;
                        e += pi[j] * fabs(x);
                        mag += (p[j] + pi[j]) * fabs(x);
                    }
                    value[out + c] = y;
                    err[out + c] = (e + sb_gamma(n) * mag + n * SB_REFD_UNDERFLOW) * slack;
                }
            }
        }
    free(p);
    free(pi);
}

/* The gradients' sums over keys or queries: value and error of
 * sum_e w_e x_e over `terms` terms, w_e with error ew_e (x exact). */
typedef struct weighted {
    double value, err, mag;
} weighted;

static void weighted_add(weighted *a, double w, double ew, double x)
{
    a->value += w * x;
    a->err += ew * fabs(x);
    a->mag += (fabs(w) + ew) * fabs(x);
}

static double weighted_err(const weighted *a, int terms)
{
    return (a->err + sb_gamma(terms) * a->mag + terms * SB_REFD_UNDERFLOW) * slack;
}

/* One query head's p, pi, ds and its error eds ([t][t], row i the columns
 * of its keys): q, k, v its first rows, g its first dy row. */
static void head_gradients(double *p, double *pi, double *ds, double *eds, const float *g,
                           const float *q, const float *k, const float *v,
                           const sb_attn_shape *s)
{
    const int t = s->t, d = s->d;
    const ptrdiff_t width = sb_attn_width(s), ld = sb_attn_ld(s);
    const double scale = (double)sb_attn_scale(d), gd = sb_gamma(d);
    for (int i = 0; i < t; i++) {
        const int n = sb_attn_keys(s, i);
        double *pr = p + (size_t)i * t, *pir = pi + (size_t)i * t;
        double *dsr = ds + (size_t)i * t, *edsr = eds + (size_t)i * t;
        row_probabilities(pr, pir, q + i * ld, k, ld, n, d, scale);
        /* dp in dsr, its error in edsr for now */
        double dsum = 0.0, e_d = 0.0, mag_d = 0.0;
        for (int j = 0; j < n; j++) {
            double dot = 0.0, mag = 0.0;
            for (int c = 0; c < d; c++) {
                const double x = (double)g[i * width + c] * (double)v[j * ld + c];
                dot += x;
                mag += fabs(x);
            }
            dsr[j] = dot;
            edsr[j] = gd * mag;
            dsum += pr[j] * dot;
            e_d += pir[j] * fabs(dot) + (pr[j] + pir[j]) * edsr[j];
            mag_d += (pr[j] + pir[j]) * (fabs(dot) + edsr[j]);
        }
        e_d += sb_gamma(n) * mag_d;
        for (int j = 0; j < n; j++) {
            const double f = dsr[j] - dsum;
            const double e_f = edsr[j] + e_d + u * (fabs(f) + edsr[j] + e_d);
            const double pp = pr[j] + pir[j];
            dsr[j] = pr[j] * f * scale;
            edsr[j] = scale * (pir[j] * fabs(f) + pp * e_f +
                               sb_gamma(2.0) * pp * (fabs(f) + e_f)) +
                      2.0 * SB_REFD_UNDERFLOW;
        }
    }
}

void sb_attn_bwd_eval(double *value, double *err, const float *dy, const float *qkv,
                      const sb_attn_shape *s)
{
    const int t = s->t, d = s->d, group = sb_attn_group(s);
    const ptrdiff_t ld = sb_attn_ld(s);
    const size_t tt = (size_t)t * (size_t)t, td = (size_t)t * (size_t)d;
    /* per head, [t][t]: p, pi, ds, its error; per group, [t][d]: dk and dv */
    double *p = alloc_doubles(tt), *pi = alloc_doubles(tt);
    double *ds = alloc_doubles(tt), *eds = alloc_doubles(tt);
    weighted *ak = malloc(td * sizeof *ak), *av = malloc(td * sizeof *av);
    SB_ASSERT(ak != NULL && av != NULL);
    for (int b = 0; b < s->b; b++)
        for (int kvh = 0; kvh < sb_attn_kv(s); kvh++) {
            const ptrdiff_t k_at = sb_attn_k_at(s, b, kvh), v_at = sb_attn_v_at(s, b, kvh);
            const float *k = qkv + k_at, *v = qkv + v_at;
            for (size_t e = 0; e < td; e++)
                ak[e] = av[e] = (weighted){0};
            for (int m = 0; m < group; m++) {
                const int h = kvh * group + m;
                const ptrdiff_t q_at = sb_attn_q_at(s, b, h);
                const float *q = qkv + q_at;
                const float *g = dy + (ptrdiff_t)b * t * sb_attn_width(s) + (ptrdiff_t)h * d;
                head_gradients(p, pi, ds, eds, g, q, k, v, s);
                for (int i = 0; i < t; i++)
                    for (int c = 0; c < d; c++) {
                        weighted a = {0};
                        for (int j = 0; j < sb_attn_keys(s, i); j++)
                            weighted_add(&a, ds[(size_t)i * t + j], eds[(size_t)i * t + j],
                                         (double)k[j * ld + c]);
                        value[q_at + i * ld + c] = a.value;
                        err[q_at + i * ld + c] = weighted_err(&a, sb_attn_keys(s, i));
                    }
                for (int j = 0; j < t; j++)
                    for (int c = 0; c < d; c++)
                        for (int i = sb_attn_first_query(s, j); i < t; i++) {
                            const size_t e = (size_t)i * t + j;
                            weighted_add(&ak[(size_t)j * d + c], ds[e], eds[e],
                                         (double)q[i * ld + c]);
                            weighted_add(&av[(size_t)j * d + c], p[e], pi[e],
                                         (double)g[i * sb_attn_width(s) + c]);
                        }
            }
            for (int j = 0; j < t; j++) {
                const int terms = group * (t - sb_attn_first_query(s, j));
                for (int c = 0; c < d; c++) {
                    const size_t e = (size_t)j * d + c;
                    value[k_at + j * ld + c] = ak[e].value;
                    err[k_at + j * ld + c] = weighted_err(&ak[e], terms);
                    value[v_at + j * ld + c] = av[e].value;
                    err[v_at + j * ld + c] = weighted_err(&av[e], terms);
                }
            }
        }
    free(p);
    free(pi);
    free(ds);
    free(eds);
    free(ak);
    free(av);
}

void sb_attention_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    sb_attn_fwd_eval(value, bound, SB_REFD_IN(c, 0), &c->attn);
}

void sb_attention_bwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    sb_attn_bwd_eval(value, bound, SB_REFD_IN(c, 0), SB_REFD_IN(c, 1), &c->attn);
}
