/* The optimiser area's shared pieces, for its own files, its tests and the
 * mutants of its ops (kernels/mutants/): the update of one element, which
 * every family runs. An update has no reduction: each element is one writer
 * running the same arithmetic as ref, so every family and every thread count
 * gives the same bits, and loose runs det's loops (kernels.def).
 *
 * The Keras 2.1.6 updates (defaults in optim_params.c):
 *
 * SGD (lr=0.01, momentum=0, nesterov=False):
 *   v = momentum * velocity - lr * g;  velocity = v
 *   w = w + v                               (plain and momentum)
 *   w = w + momentum * v - lr * g           (nesterov)
 * Plain SGD is the momentum formula with momentum 0, as in Keras.
 *
 * RMSprop (lr=0.001, rho=0.9, epsilon=K.epsilon()=1e-7):
 *   acc = rho * acc + (1 - rho) * g^2
 *   w   = w - lr * g / (sqrt(acc) + epsilon)
 * 1 - rho is taken in float, as Keras does with rho a float32 variable.
 *
 * Adam (lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False),
 * t the 1-based iteration:
 *   lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
 *   m = beta_1 * m + (1 - beta_1) * g
 *   v = beta_2 * v + (1 - beta_2) * g^2
 *   w = w - lr_t * m / (sqrt(v) + epsilon)
 * lr_t is one scalar per call, evaluated in double and rounded once, by the
 * same function for every family.
 *
 * Adadelta (lr=1.0, rho=0.95, epsilon=1e-7):
 *   acc       = rho * acc + (1 - rho) * g^2
 *   update    = g * sqrt(delta_acc + epsilon) / sqrt(acc + epsilon)
 *   w         = w - lr * update
 *   delta_acc = rho * delta_acc + (1 - rho) * update^2
 * The update uses the new acc and the old delta_acc.
 *
 * AdamW, PyTorch 1.13 torch.optim.AdamW (lr=1e-3, betas=(0.9, 0.999),
 * eps=1e-8, weight_decay=1e-2, amsgrad=False, maximize=False), t the 1-based
 * step, on the gradient g' = g * grad_scale (clip_grad_norm_ scales the
 * gradient in place by its clipping factor before the step):
 *   w  = w * (1 - lr * weight_decay)
 *   m  = fma(g', 1 - beta1, m * beta1)
 *   v  = fma((1 - beta2) * g', g', v * beta2)
 *   w  = w + ((-lr / (1 - beta1^t)) * m) / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * in that order of float operations, as PyTorch's single-tensor loop does
 * (mul_, mul_ then add_ with alpha, addcmul_, sqrt / bias_correction2_sqrt
 * then add_ eps, addcdiv_). Its vectorised CPU kernels fuse the add_ with
 * alpha and the addcmul_ into fused multiply-adds: PyTorch 1.13 on this
 * kind of machine gives these bits for m and v (checked element by element),
 * so the fusions are written out with fmaf. PyTorch evaluates the scalars (the decay factor,
 * 1 - beta, the step size, sqrt(1 - beta2^t)) in double from its Python
 * floats and rounds each once to float; here they are evaluated in double
 * from the float hyper-parameters, once per call, by the same function for
 * every family. The Keras `decay` does not apply to adamw.
 *
 * Learning-rate decay (Keras: lr / (1 + decay * iterations)) is not applied
 * by the update ops, which have no iteration count except Adam's t: the
 * caller that counts iterations passes the decayed rate in o->lr. */
#ifndef SB_OPTIM_H
#define SB_OPTIM_H

#include <math.h>

#include "op_kernels.h"

/* Below this many elements a parallel region costs more than it saves. */
#define SB_OPTIM_PARALLEL_MIN 16384

static inline void sb_sgd_step(float *w, float *velocity, float g, const sb_optim_params *o)
{
    float kept = o->momentum * *velocity;
    float step = o->lr * g;
    float v = kept - step;
    *velocity = v;
    if (o->nesterov) {
        float ahead = o->momentum * v;
        *w = (*w + ahead) - step;
    } else {
        *w = *w + v;
    }
}

static inline void sb_rmsprop_step(float *w, float *acc, float g, float one_minus_rho,
                                   const sb_optim_params *o)
{
    float g2 = g * g;
    float a = (o->rho * *acc) + (one_minus_rho * g2);
    *acc = a;
    float denom = sqrtf(a) + o->epsilon;
    float step = (o->lr * g) / denom;
    *w = *w - step;
}

static inline float sb_adam_lr_t(const sb_optim_params *o, int64_t t)
{
    SB_ASSERT(t >= 1);
    double b1t = pow((double)o->beta1, (double)t);
    double b2t = pow((double)o->beta2, (double)t);
    return (float)((double)o->lr * sqrt(1.0 - b2t) / (1.0 - b1t));
}

static inline void sb_adam_step(float *w, float *m, float *v, float g, float lr_t,
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

/* The per-call scalars of AdamW, from the hyper-parameters and t. */
typedef struct sb_adamw_scalars {
    float keep;             /* 1 - lr * weight_decay */
    float one_minus_b1, one_minus_b2;
    float neg_step_size;    /* -lr / (1 - beta1^t) */
    float bc2_sqrt;         /* sqrt(1 - beta2^t) */
} sb_adamw_scalars;

static inline sb_adamw_scalars sb_adamw_scalars_of(const sb_optim_params *o, int64_t t)
{
    SB_ASSERT(t >= 1);
    const double lr = (double)o->lr, b1 = (double)o->beta1, b2 = (double)o->beta2;
    return (sb_adamw_scalars){
        .keep = (float)(1.0 - lr * (double)o->weight_decay),
        .one_minus_b1 = (float)(1.0 - b1),
        .one_minus_b2 = (float)(1.0 - b2),
        .neg_step_size = (float)(-lr / (1.0 - pow(b1, (double)t))),
        .bc2_sqrt = (float)sqrt(1.0 - pow(b2, (double)t)),
    };
}

static inline void sb_adamw_step(float *w, float *m, float *v, float g,
                                 const sb_adamw_scalars *k, const sb_optim_params *o)
{
    const float gs = g * o->grad_scale;
    const float decayed = *w * k->keep;
    const float m_new = fmaf(gs, k->one_minus_b1, *m * o->beta1);
    const float v_new = fmaf(k->one_minus_b2 * gs, gs, *v * o->beta2);
    *m = m_new;
    *v = v_new;
    const float denom = (sqrtf(v_new) / k->bc2_sqrt) + o->epsilon;
    *w = decayed + ((k->neg_step_size * m_new) / denom);
}

/* Elements [lo, hi) of an AdamW update, each by sb_adamw_step with the
 * scalars k of o and its step, vectorised: the det kernel's loop, which
 * the fused update of many parameters (adamw_parts.h) runs too. */
void sb_adamw_range(float *restrict w, float *restrict m, float *restrict v,
                    const float *restrict g, const sb_adamw_scalars *k,
                    const sb_optim_params *o, size_t lo, size_t hi);

static inline void sb_adadelta_step(float *w, float *acc, float *delta_acc, float g,
                                    float one_minus_rho, const sb_optim_params *o)
{
    float g2 = g * g;
    float a = (o->rho * *acc) + (one_minus_rho * g2);
    *acc = a;
    float num = sqrtf(*delta_acc + o->epsilon);
    float den = sqrtf(a + o->epsilon);
    float update = (g * num) / den;
    *w = *w - (o->lr * update);
    float u2 = update * update;
    *delta_acc = (o->rho * *delta_acc) + (one_minus_rho * u2);
}

#endif
