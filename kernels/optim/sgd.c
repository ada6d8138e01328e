/* SGD, Keras 2.1.6 (lr=0.01, momentum=0, nesterov=False):
 *   v = momentum * velocity - lr * g;  velocity = v
 *   w = w + v                               (plain and momentum)
 *   w = w + momentum * v - lr * g           (nesterov)
 * Plain SGD is the momentum formula with momentum 0, as in Keras. */
#include "optim_par.h"

static inline void sgd_step(float *w, float *velocity, float g, const sb_optim_params *o)
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

void sb_sgd_update_ref(float *w,               /* [n] weights, updated */
                       float *velocity,        /* [n] state, updated */
                       const float *g,         /* [n] gradient */
                       const sb_optim_params *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sgd_step(&w[i], &velocity[i], g[i], o);
}

void sb_sgd_update_par(float *w, float *velocity, const float *g,
                       const sb_optim_params *o, size_t n)
{
#pragma omp parallel for schedule(static) if (n >= OPTIM_PARALLEL_MIN)
    for (int64_t i = 0; i < (int64_t)n; i++)
        sgd_step(&w[i], &velocity[i], g[i], o);
}

void sb_sgd_update_hashed(float *w, float *velocity, const float *g,
                          const sb_optim_params *o, size_t n, const sb_leaf_request *r)
{
    const int64_t blocks = sb_leaf_blocks(n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
        for (size_t i = lo; i < hi; i++)
            sgd_step(&w[i], &velocity[i], g[i], o);
        sb_leaf_put(r, r->out[0], b, w, lo, hi);
        sb_leaf_put(r, r->out[1], b, velocity, lo, hi);
        sb_leaf_put(r, r->in[0], b, g, lo, hi);
    }
}
