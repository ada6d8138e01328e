/* Adam, Keras 2.1.6 (lr=0.001, beta_1=0.9, beta_2=0.999,
 * epsilon=K.epsilon()=1e-7, amsgrad=False), t the 1-based iteration:
 *   lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
 *   m = beta_1 * m + (1 - beta_1) * g
 *   v = beta_2 * v + (1 - beta_2) * g^2
 *   w = w - lr_t * m / (sqrt(v) + epsilon)
 * lr_t is one scalar per call, evaluated in double and rounded once, by the
 * same function for every family. */
#include <math.h>

#include "optim_par.h"

static float adam_lr_t(const sb_optim_params *o, int64_t t)
{
    SB_ASSERT(t >= 1);
    double b1t = pow((double)o->beta1, (double)t);
    double b2t = pow((double)o->beta2, (double)t);
    return (float)((double)o->lr * sqrt(1.0 - b2t) / (1.0 - b1t));
}

static inline void adam_step(float *w, float *m, float *v, float g, float lr_t,
                             float one_minus_b1, float one_minus_b2,
                             const sb_optim_params *o)
{
    float m_new = (o->beta1 * *m) + (one_minus_b1 * g);
    float g2 = g * g;
    float v_new = (o->beta2 * *v) + (one_minus_b2 * g2);
    *m = m_new;
    *v = v_new;
    float denom = sqrtf(v_new) + o->epsilon;
    float step = (lr_t * m_new) / denom;
    *w = *w - step;
}

void sb_adam_update_ref(float *w,              /* [n] weights, updated */
                        float *m,              /* [n] first moment, updated */
                        float *v,              /* [n] second moment, updated */
                        const float *g,        /* [n] gradient */
                        const sb_optim_params *o,
                        int64_t t,             /* 1-based iteration */
                        size_t n)
{
    const float lr_t = adam_lr_t(o, t);
    const float one_minus_b1 = 1.0f - o->beta1;
    const float one_minus_b2 = 1.0f - o->beta2;
    for (size_t i = 0; i < n; i++)
        adam_step(&w[i], &m[i], &v[i], g[i], lr_t, one_minus_b1, one_minus_b2, o);
}

void sb_adam_update_par(float *w, float *m, float *v, const float *g,
                        const sb_optim_params *o, int64_t t, size_t n)
{
    const float lr_t = adam_lr_t(o, t);
    const float one_minus_b1 = 1.0f - o->beta1;
    const float one_minus_b2 = 1.0f - o->beta2;
#pragma omp parallel for schedule(static) if (n >= OPTIM_PARALLEL_MIN)
    for (int64_t i = 0; i < (int64_t)n; i++)
        adam_step(&w[i], &m[i], &v[i], g[i], lr_t, one_minus_b1, one_minus_b2, o);
}

void sb_adam_update_hashed(float *w, float *m, float *v, const float *g,
                           const sb_optim_params *o, int64_t t, size_t n,
                           const sb_leaf_request *r)
{
    const float lr_t = adam_lr_t(o, t);
    const float one_minus_b1 = 1.0f - o->beta1;
    const float one_minus_b2 = 1.0f - o->beta2;
    const int64_t blocks = sb_leaf_blocks(n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
        for (size_t i = lo; i < hi; i++)
            adam_step(&w[i], &m[i], &v[i], g[i], lr_t, one_minus_b1, one_minus_b2, o);
        sb_leaf_put(r, r->out[0], b, w, lo, hi);
        sb_leaf_put(r, r->out[1], b, m, lo, hi);
        sb_leaf_put(r, r->out[2], b, v, lo, hi);
        sb_leaf_put(r, r->in[0], b, g, lo, hi);
    }
}
