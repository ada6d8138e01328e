/* Adadelta, Keras 2.1.6 (lr=1.0, rho=0.95, epsilon=K.epsilon()=1e-7):
 *   acc       = rho * acc + (1 - rho) * g^2
 *   update    = g * sqrt(delta_acc + epsilon) / sqrt(acc + epsilon)
 *   w         = w - lr * update
 *   delta_acc = rho * delta_acc + (1 - rho) * update^2
 * The update uses the new acc and the old delta_acc. */
#include <math.h>
#include <omp.h>

#include "optim_par.h"

static inline void adadelta_step(float *w, float *acc, float *delta_acc, float g,
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

void sb_adadelta_update_ref(float *w,          /* [n] weights, updated */
                            float *acc,        /* [n] mean square of g, updated */
                            float *delta_acc,  /* [n] mean square of updates, updated */
                            const float *g,    /* [n] gradient */
                            const sb_optim_params *o, size_t n)
{
    const float one_minus_rho = 1.0f - o->rho;
    for (size_t i = 0; i < n; i++)
        adadelta_step(&w[i], &acc[i], &delta_acc[i], g[i], one_minus_rho, o);
}

/* Elements [lo, hi) as adadelta_step updates them, compiled for the widest
 * vectors the CPU has: +, *, / and sqrt are correctly rounded at any width
 * and never contracted (kernels/meson.build), so every copy gives the bits
 * of the scalar loop; two square roots and a division an element make this
 * loop compute-bound in scalar code. */
SB_ISA_CLONES
static void adadelta_range(float *restrict w, float *restrict acc, float *restrict delta_acc,
                           const float *restrict g, const sb_optim_params *o, size_t lo,
                           size_t hi)
{
    const float one_minus_rho = 1.0f - o->rho;
    for (size_t i = lo; i < hi; i++)
        adadelta_step(&w[i], &acc[i], &delta_acc[i], g[i], one_minus_rho, o);
}

void sb_adadelta_update_par(float *w, float *acc, float *delta_acc, const float *g,
                            const sb_optim_params *o, size_t n)
{
#pragma omp parallel if (n >= OPTIM_PARALLEL_MIN)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        adadelta_range(w, acc, delta_acc, g, o, n * (size_t)t / (size_t)nth,
                       n * (size_t)(t + 1) / (size_t)nth);
    }
}

void sb_adadelta_update_hashed(float *w, float *acc, float *delta_acc, const float *g,
                               const sb_optim_params *o, size_t n, const sb_leaf_request *r)
{
    const int64_t blocks = sb_leaf_blocks(n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
        adadelta_range(w, acc, delta_acc, g, o, lo, hi);
        sb_leaf_put(r, r->out[0], b, w, lo, hi);
        sb_leaf_put(r, r->out[1], b, acc, lo, hi);
        sb_leaf_put(r, r->out[2], b, delta_acc, lo, hi);
        sb_leaf_put(r, r->in[0], b, g, lo, hi);
    }
}
