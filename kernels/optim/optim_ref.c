/* The optimiser updates, the readable definitions: one serial loop each over
 * the element updates of optim.h. */
#include "optim.h"

void sb_sgd_update_ref(float *w,               /* [n] weights, updated */
                       float *velocity,        /* [n] state, updated */
                       const float *g,         /* [n] gradient */
                       const sb_optim_params *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sb_sgd_step(&w[i], &velocity[i], g[i], o);
}

void sb_rmsprop_update_ref(float *w,           /* [n] weights, updated */
                           float *acc,         /* [n] mean square of g, updated */
                           const float *g,     /* [n] gradient */
                           const sb_optim_params *o, size_t n)
{
    const float one_minus_rho = 1.0f - o->rho;
    for (size_t i = 0; i < n; i++)
        sb_rmsprop_step(&w[i], &acc[i], g[i], one_minus_rho, o);
}

void sb_adam_update_ref(float *w,              /* [n] weights, updated */
                        float *m,              /* [n] first moment, updated */
                        float *v,              /* [n] second moment, updated */
                        const float *g,        /* [n] gradient */
                        const sb_optim_params *o,
                        int64_t t,             /* 1-based iteration */
                        size_t n)
{
    const float lr_t = sb_adam_lr_t(o, t);
    const float one_minus_b1 = 1.0f - o->beta1;
    const float one_minus_b2 = 1.0f - o->beta2;
    for (size_t i = 0; i < n; i++)
        sb_adam_step(&w[i], &m[i], &v[i], g[i], lr_t, one_minus_b1, one_minus_b2, o);
}

void sb_adadelta_update_ref(float *w,          /* [n] weights, updated */
                            float *acc,        /* [n] mean square of g, updated */
                            float *delta_acc,  /* [n] mean square of updates, updated */
                            const float *g,    /* [n] gradient */
                            const sb_optim_params *o, size_t n)
{
    const float one_minus_rho = 1.0f - o->rho;
    for (size_t i = 0; i < n; i++)
        sb_adadelta_step(&w[i], &acc[i], &delta_acc[i], g[i], one_minus_rho, o);
}

void sb_adamw_update_ref(float *w,             /* [n] weights, updated */
                         float *m,             /* [n] first moment, updated */
                         float *v,             /* [n] second moment, updated */
                         const float *g,       /* [n] gradient, scaled by o->grad_scale */
                         const sb_optim_params *o,
                         int64_t t,            /* 1-based step */
                         size_t n)
{
    const sb_adamw_scalars k = sb_adamw_scalars_of(o, t);
    for (size_t i = 0; i < n; i++)
        sb_adamw_step(&w[i], &m[i], &v[i], g[i], &k, o);
}

void sb_grad_norm_ref(float *norm,             /* [1] */
                      const float *g,          /* [n] */
                      size_t n)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i++)
        s += g[i] * g[i];
    *norm = sqrtf(s);
}
