/* The optimisers: Keras 2.1.6 defaults and formulas (PyTorch 1.13's for
 * AdamW), checked against values derived by hand and against a
 * double-precision evaluation of the formula carrying a running bound on the
 * float rounding error; ref, det and loose bitwise equal, for every thread
 * count. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "optim/adamw_parts.h"
#include "sb_kernels.h"
#include "sb_refd.h"
#include "sb_rng.h"

Suite *make_optim_suite(void);

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

START_TEST(test_defaults)
{
    static const struct {
        sb_optimizer kind;
        const char *name;
        float lr, rho, beta1, beta2;
    } want[] = {
        {SB_OPTIM_SGD, "sgd", 0.01f, 0.0f, 0.0f, 0.0f},
        {SB_OPTIM_RMSPROP, "rmsprop", 0.001f, 0.9f, 0.0f, 0.0f},
        {SB_OPTIM_ADAM, "adam", 0.001f, 0.0f, 0.9f, 0.999f},
        {SB_OPTIM_ADADELTA, "adadelta", 1.0f, 0.95f, 0.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        sb_optim_params o;
        memset(&o, 0xff, sizeof o);
        sb_optim_defaults(&o, want[i].kind);
        ck_assert_int_eq(o.kind, want[i].kind);
        ck_assert_str_eq(sb_optimizer_name(want[i].kind), want[i].name);
        ck_assert(same_bits(o.lr, want[i].lr));
        ck_assert(same_bits(o.rho, want[i].rho));
        ck_assert(same_bits(o.beta1, want[i].beta1));
        ck_assert(same_bits(o.beta2, want[i].beta2));
        ck_assert(same_bits(o.momentum, 0.0f));
        ck_assert(!o.nesterov);
        ck_assert(same_bits(o.epsilon, 1e-7f)); /* K.epsilon() */
        ck_assert(same_bits(o.decay, 0.0f));
    }
    ck_assert_str_eq(sb_optimizer_name(SB_OPTIM_COUNT), "?");
}
END_TEST

/* ---- SGD: powers of two, so every float operation is exact ---------------
 * lr = 1/4, w0 = {1, -2}, gradients {1, -2}, {1/2, 4}, {-1, 2}.
 * Plain (momentum 0): v = -g/4, w += v:
 *   w[0]: 1 - 1/4 = 3/4, - 1/8 = 5/8, + 1/4 = 7/8;   v = 1/4
 *   w[1]: -2 + 1/2 = -3/2, - 1 = -5/2, - 1/2 = -3;   v = -1/2
 * Momentum 1/2: v = v/2 - g/4, w += v:
 *   w[0]: v = -1/4, -1/8 - 1/8 = -1/4, -1/8 + 1/4 = 1/8;  w = 3/4, 1/2, 5/8
 *   w[1]: v = 1/2, 1/4 - 1 = -3/4, -3/8 - 1/2 = -7/8;     w = -3/2, -9/4, -25/8
 * Nesterov 1/2: same v, w += v/2 - g/4:
 *   w[0]: 1 - 1/8 - 1/4 = 5/8, - 1/8 - 1/8 = 3/8, + 1/16 + 1/4 = 11/16
 *   w[1]: -2 + 1/4 + 1/2 = -5/4, - 3/8 - 1 = -21/8, - 7/16 - 1/2 = -57/16 */
START_TEST(test_sgd_by_hand)
{
    static const float g[3][2] = {{1.0f, -2.0f}, {0.5f, 4.0f}, {-1.0f, 2.0f}};
    static const struct {
        float momentum;
        bool nesterov;
        float w[2], v[2];
    } variant[] = {
        {0.0f, false, {7.0f / 8, -3.0f}, {1.0f / 4, -1.0f / 2}},
        {0.5f, false, {5.0f / 8, -25.0f / 8}, {1.0f / 8, -7.0f / 8}},
        {0.5f, true, {11.0f / 16, -57.0f / 16}, {1.0f / 8, -7.0f / 8}},
    };
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        for (size_t c = 0; c < sizeof variant / sizeof variant[0]; c++) {
            sb_optim_params o;
            sb_optim_defaults(&o, SB_OPTIM_SGD);
            o.lr = 0.25f;
            o.momentum = variant[c].momentum;
            o.nesterov = variant[c].nesterov;
            float w[2] = {1.0f, -2.0f}, v[2] = {0.0f, 0.0f};
            for (int t = 0; t < 3; t++)
                k->sgd_update(w, v, g[t], &o, 2);
            for (int i = 0; i < 2; i++) {
                ck_assert_msg(same_bits(w[i], variant[c].w[i]), "%s variant %zu w[%d]",
                              sb_family_name((sb_family)f), c, i);
                ck_assert_msg(same_bits(v[i], variant[c].v[i]), "%s variant %zu v[%d]",
                              sb_family_name((sb_family)f), c, i);
            }
        }
    }
}
END_TEST

/* ---- a double evaluation with a running error bound ------------------------
 * Each quantity is carried as v, the Keras formula evaluated in double, and
 * e, a bound on |float result - v| (Higham, Accuracy and Stability, ch. 3).
 * Every float operation adds at most u = 2^-24 of its result, the double
 * evaluation at most 2^-53; the bound of an operation's result is what its
 * inputs' bounds propagate to, plus that rounding. */
typedef struct {
    double v, e;
} ev;

static const double ROUND = 0x1p-24 + 0x1p-53;

static ev ev_exact(float x) { return (ev){(double)x, 0.0}; }

static ev ev_rounded(double v, double propagated)
{
    return (ev){v, propagated + ROUND * (fabs(v) + propagated)};
}

static ev ev_add(ev a, ev b) { return ev_rounded(a.v + b.v, a.e + b.e); }
static ev ev_sub(ev a, ev b) { return ev_rounded(a.v - b.v, a.e + b.e); }

static ev ev_mul(ev a, ev b)
{
    return ev_rounded(a.v * b.v, fabs(a.v) * b.e + fabs(b.v) * a.e + a.e * b.e);
}

static ev ev_div(ev a, ev b)
{
    ck_assert(fabs(b.v) > b.e); /* the divisor's sign is known */
    double q = a.v / b.v;
    return ev_rounded(q, (a.e + fabs(q) * b.e) / (fabs(b.v) - b.e));
}

/* a * b + c rounded once (fmaf) */
static ev ev_fma(ev a, ev b, ev c)
{
    return ev_rounded(a.v * b.v + c.v,
                      fabs(a.v) * b.e + fabs(b.v) * a.e + a.e * b.e + c.e);
}

/* a scalar the kernel evaluates in double and rounds once to float */
static ev ev_scalar(double v) { return ev_rounded(v, 0.0); }

/* |sqrt(x') - sqrt(x)| = |x' - x| / (sqrt(x') + sqrt(x)) */
static ev ev_sqrt(ev a)
{
    ck_assert(a.v >= 0.0);
    double r = sqrt(a.v);
    double lo = a.v > a.e ? sqrt(a.v - a.e) : 0.0;
    double prop = r + lo > 0.0 ? a.e / (r + lo) : sqrt(a.e);
    return ev_rounded(r, prop);
}

/* The step-1 closed forms below are the Keras formula rearranged by hand
 * (with the float hyper-parameters, 1 - rho and 1 - beta exact by Sterbenz),
 * so the float result lies within the running bound of the exact value;
 * the closed form's own double evaluation, under 16 roundings, adds at most
 * 16 * 2^-53 of its magnitudes. */
static double hand_slack(double w0, double hand)
{
    return 16 * 0x1p-53 * (fabs(w0) + fabs(hand - w0));
}

static void check_within(float got, ev want, const char *what, int t, int i)
{
    ck_assert_msg(isfinite(got), "%s[%d] at step %d is not finite", what, i, t);
    double diff = fabs((double)got - want.v);
    ck_assert_msg(diff <= want.e, "%s[%d] at step %d: %.9g, want %.9g within %.3g (off %.3g)",
                  what, i, t, (double)got, want.v, want.e, diff);
}

/* Gradients of a few elements over three steps: ordinary, small, large, far
 * below epsilon, zero, and a sign change. */
#define N_EL 6
static const float grads[3][N_EL] = {
    {0.5f, -1e-3f, 3.0f, 1e-9f, 0.0f, 0.25f},
    {0.4f, -2e-3f, -1.5f, 1e-9f, 0.0f, -0.25f},
    {-0.1f, 1e-3f, 2.0f, -1e-9f, 0.0f, 0.5f},
};
static const float w_start[N_EL] = {0.25f, -1.0f, 2.0f, 0.1f, 0.3f, -0.05f};

/* RMSprop (defaults: lr 1e-3, rho 0.9, eps 1e-7). By hand, step 1 from
 * acc = 0: acc = (1-rho) g^2, so w1 = w0 - lr g / (sqrt(1-rho)|g| + eps), a
 * step of lr/sqrt(0.1) = 3.16e-3 against the sign of g whenever |g| >> eps. */
START_TEST(test_rmsprop_keras_formula)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        sb_optim_params o;
        sb_optim_defaults(&o, SB_OPTIM_RMSPROP);
        float w[N_EL], acc[N_EL] = {0};
        ev W[N_EL], A[N_EL];
        memcpy(w, w_start, sizeof w);
        for (int i = 0; i < N_EL; i++)
            W[i] = ev_exact(w_start[i]), A[i] = ev_exact(0.0f);
        const ev rho = ev_exact(o.rho), lr = ev_exact(o.lr), eps = ev_exact(o.epsilon);
        const ev one_m_rho = ev_sub(ev_exact(1.0f), rho);
        for (int t = 0; t < 3; t++) {
            k->rmsprop_update(w, acc, grads[t], &o, N_EL);
            for (int i = 0; i < N_EL; i++) {
                ev g = ev_exact(grads[t][i]);
                A[i] = ev_add(ev_mul(rho, A[i]), ev_mul(one_m_rho, ev_mul(g, g)));
                ev step = ev_div(ev_mul(lr, g), ev_add(ev_sqrt(A[i]), eps));
                W[i] = ev_sub(W[i], step);
                check_within(acc[i], A[i], "acc", t, i);
                check_within(w[i], W[i], "w", t, i);
                if (t == 0) {
                    double gi = (double)grads[0][i];
                    double hand = (double)w_start[i] -
                                  lr.v * gi / (sqrt(one_m_rho.v) * fabs(gi) + eps.v);
                    ck_assert_double_le(fabs((double)w[i] - hand), W[i].e + hand_slack((double)w_start[i], hand));
                }
            }
        }
    }
}
END_TEST

/* Adam (defaults: lr 1e-3, beta_1 0.9, beta_2 0.999, eps 1e-7). By hand,
 * step 1 from m = v = 0: m = 0.1 g, v = 0.001 g^2, lr_1 = lr sqrt(0.001)/0.1,
 * so w1 = w0 - lr sqrt(0.001) g / (sqrt(0.001)|g| + eps): a step of lr
 * against the sign of g whenever |g| >> eps / sqrt(0.001) = 3.2e-6. */
START_TEST(test_adam_keras_formula)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        sb_optim_params o;
        sb_optim_defaults(&o, SB_OPTIM_ADAM);
        float w[N_EL], m[N_EL] = {0}, v[N_EL] = {0};
        ev W[N_EL], M[N_EL], V[N_EL];
        memcpy(w, w_start, sizeof w);
        for (int i = 0; i < N_EL; i++)
            W[i] = ev_exact(w_start[i]), M[i] = V[i] = ev_exact(0.0f);
        const ev b1 = ev_exact(o.beta1), b2 = ev_exact(o.beta2), eps = ev_exact(o.epsilon);
        const ev one = ev_exact(1.0f);
        const ev one_m_b1 = ev_sub(one, b1), one_m_b2 = ev_sub(one, b2);
        for (int t = 1; t <= 3; t++) {
            k->adam_update(w, m, v, grads[t - 1], &o, t, N_EL);
            /* lr_t: evaluated in double (a few double ulps) and rounded to float once */
            double lrt = (double)o.lr * sqrt(1.0 - pow(b2.v, t)) / (1.0 - pow(b1.v, t));
            ev lr_t = {lrt, (0x1p-24 + 0x1p-48) * lrt};
            for (int i = 0; i < N_EL; i++) {
                ev g = ev_exact(grads[t - 1][i]);
                M[i] = ev_add(ev_mul(b1, M[i]), ev_mul(one_m_b1, g));
                V[i] = ev_add(ev_mul(b2, V[i]), ev_mul(one_m_b2, ev_mul(g, g)));
                ev step = ev_div(ev_mul(lr_t, M[i]), ev_add(ev_sqrt(V[i]), eps));
                W[i] = ev_sub(W[i], step);
                check_within(m[i], M[i], "m", t, i);
                check_within(v[i], V[i], "v", t, i);
                check_within(w[i], W[i], "w", t, i);
                if (t == 1) {
                    double gi = (double)grads[0][i], s = sqrt(one_m_b2.v);
                    double hand = (double)w_start[i] - (double)o.lr * s * gi / (s * fabs(gi) + eps.v);
                    ck_assert_double_le(fabs((double)w[i] - hand), W[i].e + hand_slack((double)w_start[i], hand));
                }
            }
        }
    }
}
END_TEST

/* Adadelta (defaults: lr 1, rho 0.95, eps 1e-7). By hand, step 1 from
 * acc = delta_acc = 0: acc = 0.05 g^2 and update = g sqrt(eps) /
 * sqrt(0.05 g^2 + eps), so |update| = sqrt(eps/0.05) = 1.41e-3 whenever
 * |g| >> sqrt(eps/0.05): Adadelta's slow start. */
START_TEST(test_adadelta_keras_formula)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        sb_optim_params o;
        sb_optim_defaults(&o, SB_OPTIM_ADADELTA);
        float w[N_EL], acc[N_EL] = {0}, dacc[N_EL] = {0};
        ev W[N_EL], A[N_EL], D[N_EL];
        memcpy(w, w_start, sizeof w);
        for (int i = 0; i < N_EL; i++)
            W[i] = ev_exact(w_start[i]), A[i] = D[i] = ev_exact(0.0f);
        const ev rho = ev_exact(o.rho), lr = ev_exact(o.lr), eps = ev_exact(o.epsilon);
        const ev one_m_rho = ev_sub(ev_exact(1.0f), rho);
        for (int t = 0; t < 3; t++) {
            k->adadelta_update(w, acc, dacc, grads[t], &o, N_EL);
            for (int i = 0; i < N_EL; i++) {
                ev g = ev_exact(grads[t][i]);
                A[i] = ev_add(ev_mul(rho, A[i]), ev_mul(one_m_rho, ev_mul(g, g)));
                ev update = ev_div(ev_mul(g, ev_sqrt(ev_add(D[i], eps))),
                                   ev_sqrt(ev_add(A[i], eps)));
                W[i] = ev_sub(W[i], ev_mul(lr, update));
                D[i] = ev_add(ev_mul(rho, D[i]), ev_mul(one_m_rho, ev_mul(update, update)));
                check_within(acc[i], A[i], "acc", t, i);
                check_within(w[i], W[i], "w", t, i);
                check_within(dacc[i], D[i], "delta_acc", t, i);
                if (t == 0) {
                    double gi = (double)grads[0][i];
                    double hand = (double)w_start[i] -
                                  lr.v * gi * sqrt(eps.v) / sqrt(one_m_rho.v * gi * gi + eps.v);
                    ck_assert_double_le(fabs((double)w[i] - hand), W[i].e + hand_slack((double)w_start[i], hand));
                }
            }
        }
    }
}
END_TEST

START_TEST(test_adamw_defaults)
{
    sb_optim_params o;
    memset(&o, 0xff, sizeof o);
    sb_optim_defaults(&o, SB_OPTIM_ADAMW);
    ck_assert_int_eq(o.kind, SB_OPTIM_ADAMW);
    ck_assert_str_eq(sb_optimizer_name(SB_OPTIM_ADAMW), "adamw");
    /* torch.optim.AdamW: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 1e-2 */
    ck_assert(same_bits(o.lr, 1e-3f));
    ck_assert(same_bits(o.beta1, 0.9f));
    ck_assert(same_bits(o.beta2, 0.999f));
    ck_assert(same_bits(o.epsilon, 1e-8f));
    ck_assert(same_bits(o.weight_decay, 0.01f));
    ck_assert(same_bits(o.grad_scale, 1.0f));
    ck_assert(same_bits(o.decay, 0.0f));
    ck_assert_int_eq(sb_optimizer_update_op(SB_OPTIM_ADAMW), SB_OP_adamw_update);
}
END_TEST

/* AdamW (PyTorch 1.13, optim.h), with weight decay 0.1 and the gradient
 * scaled by 1/2 (an exact scaling), over three steps against the running
 * bound. By hand, step 1 from m = v = 0: m = (1-b1) g', v = (1-b2) g'^2 and
 * the bias corrections are 1-b1 and sqrt(1-b2), so
 *   w1 = w0 (1 - lr wd) - lr g' / (|g'| + eps),
 * a step of lr against the sign of g' whenever |g'| >> eps (and next to
 * nothing for the 1e-9 gradient: g'/(|g'| + eps) = 0.048). */
START_TEST(test_adamw_pytorch_formula)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        sb_optim_params o;
        sb_optim_defaults(&o, SB_OPTIM_ADAMW);
        o.weight_decay = 0.1f;
        o.grad_scale = 0.5f;
        float w[N_EL], m[N_EL] = {0}, v[N_EL] = {0};
        ev W[N_EL], M[N_EL], V[N_EL];
        memcpy(w, w_start, sizeof w);
        for (int i = 0; i < N_EL; i++)
            W[i] = ev_exact(w_start[i]), M[i] = V[i] = ev_exact(0.0f);
        const double lr = (double)o.lr, b1d = (double)o.beta1, b2d = (double)o.beta2;
        const ev b1 = ev_exact(o.beta1), b2 = ev_exact(o.beta2), eps = ev_exact(o.epsilon);
        const ev scale = ev_exact(o.grad_scale);
        const ev keep = ev_scalar(1.0 - lr * (double)o.weight_decay);
        const ev one_m_b1 = ev_scalar(1.0 - b1d), one_m_b2 = ev_scalar(1.0 - b2d);
        for (int t = 1; t <= 3; t++) {
            k->adamw_update(w, m, v, grads[t - 1], &o, t, N_EL);
            const ev neg_step = ev_scalar(-lr / (1.0 - pow(b1d, t)));
            const ev bc2 = ev_scalar(sqrt(1.0 - pow(b2d, t)));
            for (int i = 0; i < N_EL; i++) {
                const ev g = ev_mul(ev_exact(grads[t - 1][i]), scale);
                M[i] = ev_fma(g, one_m_b1, ev_mul(M[i], b1));
                V[i] = ev_fma(ev_mul(one_m_b2, g), g, ev_mul(V[i], b2));
                const ev denom = ev_add(ev_div(ev_sqrt(V[i]), bc2), eps);
                W[i] = ev_add(ev_mul(W[i], keep), ev_div(ev_mul(neg_step, M[i]), denom));
                check_within(m[i], M[i], "m", t, i);
                check_within(v[i], V[i], "v", t, i);
                check_within(w[i], W[i], "w", t, i);
                if (t == 1) {
                    const double gi = 0.5 * (double)grads[0][i];
                    const double hand = (double)w_start[i] * (1.0 - lr * 0.1) -
                                        lr * gi / (fabs(gi) + eps.v);
                    ck_assert_double_le(fabs((double)w[i] - hand),
                                        W[i].e + hand_slack((double)w_start[i], hand));
                }
            }
        }
    }
}
END_TEST

/* Without a gradient (or with a clipping factor of 0) AdamW only decays the
 * weights: m = v = 0, the step is 0 / eps = 0, and with lr = 1/2 and
 * weight_decay = 1/2 the factor 3/4 is exact. */
START_TEST(test_adamw_decay_alone)
{
    const float g[4] = {0.0f, 0.0f, 5.0f, -3.0f};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_optim_params o;
        sb_optim_defaults(&o, SB_OPTIM_ADAMW);
        o.lr = 0.5f;
        o.weight_decay = 0.5f;
        o.grad_scale = 0.0f;
        float w[4] = {2.0f, -4.0f, 1.0f, 8.0f}, m[4] = {0}, v[4] = {0};
        sb_kernels((sb_family)f)->adamw_update(w, m, v, g, &o, 1, 4);
        const float want[4] = {1.5f, -3.0f, 0.75f, 6.0f};
        for (int i = 0; i < 4; i++) {
            ck_assert_msg(same_bits(w[i], want[i]), "w[%d] = %g", i, (double)w[i]);
            ck_assert(same_bits(m[i], 0.0f) && same_bits(v[i], 0.0f));
        }
    }
}
END_TEST

/* ---- det and loose against ref, and across thread counts ------------------ */

#define N_BIG 100003 /* not a multiple of any thread count tried */
#define STEPS 3

typedef struct {
    float *w, *s1, *s2, *g;
} optim_state;

static void state_alloc(optim_state *s)
{
    s->w = malloc(N_BIG * sizeof(float));
    s->s1 = calloc(N_BIG, sizeof(float));
    s->s2 = calloc(N_BIG, sizeof(float));
    s->g = malloc(N_BIG * sizeof(float));
    ck_assert(s->w && s->s1 && s->s2 && s->g);
    sb_init_glorot_uniform(s->w, N_BIG, 100, 100, 42, SB_STREAM_INIT);
}

static void state_free(optim_state *s)
{
    free(s->w);
    free(s->s1);
    free(s->s2);
    free(s->g);
}

/* STEPS updates of one optimiser with gradients from the counter RNG. */
static void run_steps(const sb_kernel_table *k, const sb_optim_params *o, optim_state *s)
{
    for (int t = 1; t <= STEPS; t++) {
        sb_rng_fill_uniform(s->g, N_BIG, -1.0f, 1.0f, 42, SB_STREAM_CASE_INPUT, (uint32_t)t);
        switch (o->kind) {
        case SB_OPTIM_SGD: k->sgd_update(s->w, s->s1, s->g, o, N_BIG); break;
        case SB_OPTIM_RMSPROP: k->rmsprop_update(s->w, s->s1, s->g, o, N_BIG); break;
        case SB_OPTIM_ADAM: k->adam_update(s->w, s->s1, s->s2, s->g, o, t, N_BIG); break;
        case SB_OPTIM_ADADELTA: k->adadelta_update(s->w, s->s1, s->s2, s->g, o, N_BIG); break;
        case SB_OPTIM_ADAMW: k->adamw_update(s->w, s->s1, s->s2, s->g, o, t, N_BIG); break;
        case SB_OPTIM_COUNT: ck_abort_msg("not an optimiser"); break;
        }
    }
}

static bool same_state(const optim_state *a, const optim_state *b)
{
    const size_t bytes = N_BIG * sizeof(float);
    return memcmp(a->w, b->w, bytes) == 0 && memcmp(a->s1, b->s1, bytes) == 0 &&
           memcmp(a->s2, b->s2, bytes) == 0;
}

/* sgd with momentum and nesterov, so both state paths run */
static sb_optim_params params_of(int i)
{
    sb_optim_params o;
    sb_optim_defaults(&o, i < SB_OPTIM_COUNT ? (sb_optimizer)i : SB_OPTIM_SGD);
    if (i >= SB_OPTIM_COUNT) {
        o.momentum = 0.9f;
        o.nesterov = true;
    }
    return o;
}

START_TEST(test_families_same_bits)
{
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    for (int i = 0; i <= SB_OPTIM_COUNT; i++) {
        sb_optim_params o = params_of(i);
        optim_state ref;
        state_alloc(&ref);
        run_steps(sb_kernels(SB_FAMILY_REF), &o, &ref);
        for (size_t j = 0; j < N_BIG; j++)
            ck_assert(isfinite(ref.w[j]) && isfinite(ref.s1[j]) && isfinite(ref.s2[j]));
        for (int f = SB_FAMILY_DET; f < SB_FAMILY_COUNT; f++) {
            optim_state other;
            state_alloc(&other);
            run_steps(sb_kernels((sb_family)f), &o, &other);
            ck_assert_msg(same_state(&ref, &other), "%s %s differs from ref",
                          sb_optimizer_name(o.kind), sb_family_name((sb_family)f));
            state_free(&other);
        }
        state_free(&ref);
    }
    omp_set_num_threads(saved);
}
END_TEST

START_TEST(test_det_any_thread_count)
{
    const int saved = omp_get_max_threads();
    const sb_kernel_table *det = sb_kernels(SB_FAMILY_DET);
    for (int i = 0; i <= SB_OPTIM_COUNT; i++) {
        sb_optim_params o = params_of(i);
        optim_state first;
        state_alloc(&first);
        omp_set_num_threads(1);
        run_steps(det, &o, &first);
        for (int t = 2; t <= 16; t++) {
            optim_state s;
            state_alloc(&s);
            omp_set_num_threads(t);
            run_steps(det, &o, &s);
            ck_assert_msg(same_state(&first, &s), "%s differs at %d threads",
                          sb_optimizer_name(o.kind), t);
            state_free(&s);
        }
        state_free(&first);
    }
    omp_set_num_threads(saved);
}
END_TEST

/* ---- AdamW over many parameters at once ------------------------------------ */

/* A stand-in leaf hash: FNV-1a over the bytes, spread over 16 bytes. */
static void fnv_leaf(sb_leaf_digest *out, const void *bytes, size_t len)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ ((const unsigned char *)bytes)[i]) * 1099511628211u;
    for (int i = 0; i < 16; i++)
        out->bytes[i] = (unsigned char)(h >> (8 * (i % 8))) ^ (unsigned char)i;
}

/* Parts of 1 to 2 leaves and more than a chunk, and of a few floats, with
 * and without decay, updated together for three steps, give the bits of
 * the ref update called on each part alone at 1 to 4 threads; the digests
 * they ask for are those of the leaves as they end up. */
START_TEST(test_adamw_parts_same_bits)
{
    static const size_t counts[] = {3, 128, 70000, 1, 4097, 16384, 65536, 98};
    enum { PARTS = sizeof counts / sizeof counts[0] };
    size_t total = 0;
    sb_adamw_part parts[PARTS];
    for (int i = 0; i < PARTS; i++) {
        parts[i] = (sb_adamw_part){.offset = total, .count = counts[i], .decay = i % 2 == 0};
        total += counts[i];
    }
    sb_optim_params o;
    sb_optim_defaults(&o, SB_OPTIM_ADAMW);
    o.grad_scale = 0.75f;
    float *g = malloc(total * sizeof *g), *want[3], *got[3];
    ck_assert(g != NULL);
    for (int j = 0; j < 3; j++) {
        want[j] = calloc(total, sizeof(float));
        got[j] = calloc(total, sizeof(float));
        ck_assert(want[j] && got[j]);
    }
    sb_rng_fill_uniform(want[0], total, -1.0f, 1.0f, 7, SB_STREAM_INIT, 0);
    const sb_kernel_table *ref = sb_kernels(SB_FAMILY_REF);
    for (int t = 1; t <= STEPS; t++) {
        sb_rng_fill_uniform(g, total, -1.0f, 1.0f, 7, SB_STREAM_CASE_INPUT, (uint32_t)t);
        for (int i = 0; i < PARTS; i++) {
            sb_optim_params oi = o;
            oi.weight_decay = parts[i].decay ? o.weight_decay : 0.0f;
            const size_t off = parts[i].offset;
            ref->adamw_update(want[0] + off, want[1] + off, want[2] + off, g + off, &oi, t,
                              parts[i].count);
        }
    }
    const int saved = omp_get_max_threads();
    size_t leaves = 0;
    for (int i = 0; i < PARTS; i++)
        leaves += sb_adamw_part_leaves(counts[i]);
    ck_assert_uint_eq(leaves, PARTS + 1); /* 70000 floats take two */
    sb_leaf_digest *digests = malloc(3 * leaves * sizeof *digests);
    ck_assert(digests != NULL);
    for (int threads = 1; threads <= 4; threads++) {
        omp_set_num_threads(threads);
        memset(got[1], 0, total * sizeof(float));
        memset(got[2], 0, total * sizeof(float));
        sb_rng_fill_uniform(got[0], total, -1.0f, 1.0f, 7, SB_STREAM_INIT, 0);
        sb_leaf_digest *next = digests;
        for (int i = 0; i < PARTS; i++)
            for (int j = 0; j < 3; j++) {
                /* the last part asks for no digest of its v */
                parts[i].leaves[j] = i == PARTS - 1 && j == 2 ? NULL : next;
                next += sb_adamw_part_leaves(counts[i]);
            }
        for (int t = 1; t <= STEPS; t++) {
            sb_rng_fill_uniform(g, total, -1.0f, 1.0f, 7, SB_STREAM_CASE_INPUT, (uint32_t)t);
            sb_adamw_update_parts(got[0], got[1], got[2], g, &o, t, parts, PARTS,
                                  t == STEPS ? fnv_leaf : NULL);
        }
        for (int j = 0; j < 3; j++)
            ck_assert_msg(memcmp(want[j], got[j], total * sizeof(float)) == 0,
                          "tensor %d differs at %d threads", j, threads);
        const size_t leaf = SB_HASH_LEAF_BYTES / sizeof(float);
        for (int i = 0; i < PARTS; i++)
            for (int j = 0; j < 3 && parts[i].leaves[j]; j++)
                for (size_t b = 0; b * leaf < counts[i]; b++) {
                    const size_t len = counts[i] - b * leaf < leaf ? counts[i] - b * leaf : leaf;
                    sb_leaf_digest d;
                    fnv_leaf(&d, got[j] + parts[i].offset + b * leaf, len * sizeof(float));
                    ck_assert_msg(memcmp(&d, &parts[i].leaves[j][b], sizeof d) == 0,
                                  "part %d tensor %d leaf %zu at %d threads", i, j, b, threads);
                }
    }
    omp_set_num_threads(saved);
    free(digests);
    free(g);
    for (int j = 0; j < 3; j++) {
        free(want[j]);
        free(got[j]);
    }
}
END_TEST

/* ---- the global gradient norm ---------------------------------------------- */

/* Integers whose squares and their sums stay below 2^24 are exact in every
 * order: sqrt(9 + 16) = 5, sqrt(9 + 16 + 144) = 13, and 10000 ones (across
 * several det blocks) give 100. */
START_TEST(test_grad_norm_by_hand)
{
    static float ones[10000];
    for (int i = 0; i < 10000; i++)
        ones[i] = (i % 2) ? 1.0f : -1.0f;
    const float g[3] = {3.0f, -4.0f, 12.0f};
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        const sb_kernel_table *k = sb_kernels((sb_family)f);
        for (int threads = 1; threads <= 3; threads++) {
            omp_set_num_threads(threads);
            float norm = -1.0f;
            k->grad_norm(&norm, g, 2);
            ck_assert(same_bits(norm, 5.0f));
            k->grad_norm(&norm, g, 3);
            ck_assert(same_bits(norm, 13.0f));
            k->grad_norm(&norm, ones, 10000);
            ck_assert_msg(same_bits(norm, 100.0f), "%s: %g", sb_family_name((sb_family)f),
                          (double)norm);
        }
    }
}
END_TEST

/* 100003 gradients (25 det blocks, the last one short): det the same bits at
 * 1..8 threads, every family within the reordering bound of ref and within
 * the double evaluation's bound of the exact norm. */
START_TEST(test_grad_norm_families)
{
    sb_op_call c;
    memset(&c, 0, sizeof c);
    c.op = SB_OP_grad_norm;
    c.n = N_BIG;
    op_test_call_alloc(&c);
    op_test_check_det_bitwise(&c, 8);
    op_test_check_families_within_bound(&c, 8);
    double value, bound;
    sb_refd_eval(&value, &bound, &c, 0, SB_FAMILY_DET);
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (int threads = 1; threads <= 4; threads++) {
            float *got = op_test_run(&c, (sb_family)f, threads);
            ck_assert_msg(fabs((double)*got - value) <= bound, "%s at %d: %.9g vs %.12g (%.3g)",
                          sb_family_name((sb_family)f), threads, (double)*got, value, bound);
            free(got);
        }
    op_test_call_free(&c);
}
END_TEST

/* A non-finite gradient gives a non-finite norm and a bound of 0. */
START_TEST(test_grad_norm_nonfinite)
{
    float g[5] = {1.0f, 2.0f, INFINITY, 3.0f, 4.0f};
    float norm, bound = -1.0f;
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernels((sb_family)f)->grad_norm(&norm, g, 5);
        ck_assert(isinf(norm));
    }
    g[2] = NAN;
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernels((sb_family)f)->grad_norm(&norm, g, 5);
        ck_assert(isnan(norm));
    }
    sb_grad_norm_bound(&bound, g, 5);
    ck_assert(same_bits(bound, 0.0f));
}
END_TEST

Suite *make_optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("keras");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_sgd_by_hand);
    tcase_add_test(tc, test_rmsprop_keras_formula);
    tcase_add_test(tc, test_adam_keras_formula);
    tcase_add_test(tc, test_adadelta_keras_formula);
    tcase_add_test(tc, test_adamw_defaults);
    tcase_add_test(tc, test_adamw_pytorch_formula);
    tcase_add_test(tc, test_adamw_decay_alone);
    suite_add_tcase(s, tc);
    tc = tcase_create("grad_norm");
    tcase_add_test(tc, test_grad_norm_by_hand);
    tcase_add_test(tc, test_grad_norm_families);
    tcase_add_test(tc, test_grad_norm_nonfinite);
    suite_add_tcase(s, tc);
    tc = tcase_create("determinism");
    tcase_add_test(tc, test_families_same_bits);
    tcase_add_test(tc, test_adamw_parts_same_bits);
    tcase_add_test(tc, test_det_any_thread_count);
    suite_add_tcase(s, tc);
    return s;
}
