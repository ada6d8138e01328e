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
