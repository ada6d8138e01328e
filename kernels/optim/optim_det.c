/* The optimiser updates, det family (loose runs them too): the parallel
 * loops, and each update's hashed mode, which updates leaf block by leaf
 * block and hashes each block of the tensors asked for right after
 * (leaf_blocks.h); and the global gradient norm in fixed blocks
 * (grad_norm.h). */
#include <omp.h>
#include <stdlib.h>

#include "grad_norm.h"
#include "leaf_blocks.h"
#include "optim.h"

void sb_sgd_update_det(float *w, float *velocity, const float *g, const sb_optim_params *o,
                       size_t n)
{
#pragma omp parallel for schedule(static) if (n >= SB_OPTIM_PARALLEL_MIN)
    for (int64_t i = 0; i < (int64_t)n; i++)
        sb_sgd_step(&w[i], &velocity[i], g[i], o);
}

/* The hyper-parameters of an update in hashed mode, copied: the stores to
 * its outputs cannot alias a copy, so its fields stay in registers. */
static sb_optim_params hyper_parameters(const sb_leaf_call *c)
{
    return *(const sb_optim_params *)c->params;
}

static void sgd_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    const sb_optim_params p = hyper_parameters(c), *o = &p;
    float *w = c->out[0], *velocity = c->out[1];
    const float *g = c->in[0];
    for (size_t i = lo; i < hi; i++)
        sb_sgd_step(&w[i], &velocity[i], g[i], o);
}

void sb_sgd_update_hashed(float *w, float *velocity, const float *g,
                          const sb_optim_params *o, size_t n, const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {w, velocity}, .in = {g}, .params = o}, r,
                       sgd_block);
}

void sb_rmsprop_update_det(float *w, float *acc, const float *g, const sb_optim_params *o,
                           size_t n)
{
    const float one_minus_rho = 1.0f - o->rho;
#pragma omp parallel for schedule(static) if (n >= SB_OPTIM_PARALLEL_MIN)
    for (int64_t i = 0; i < (int64_t)n; i++)
        sb_rmsprop_step(&w[i], &acc[i], g[i], one_minus_rho, o);
}

static void rmsprop_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    const sb_optim_params p = hyper_parameters(c), *o = &p;
    const float one_minus_rho = 1.0f - o->rho;
    float *w = c->out[0], *acc = c->out[1];
    const float *g = c->in[0];
    for (size_t i = lo; i < hi; i++)
        sb_rmsprop_step(&w[i], &acc[i], g[i], one_minus_rho, o);
}

void sb_rmsprop_update_hashed(float *w, float *acc, const float *g,
                              const sb_optim_params *o, size_t n, const sb_leaf_request *r)
{
    sb_leaf_blocks_run(&(sb_leaf_call){.n = n, .out = {w, acc}, .in = {g}, .params = o}, r,
                       rmsprop_block);
}

void sb_adam_update_det(float *w, float *m, float *v, const float *g, const sb_optim_params *o,
                        int64_t t, size_t n)
{
    const float lr_t = sb_adam_lr_t(o, t);
    const float one_minus_b1 = 1.0f - o->beta1;
    const float one_minus_b2 = 1.0f - o->beta2;
#pragma omp parallel for schedule(static) if (n >= SB_OPTIM_PARALLEL_MIN)
    for (int64_t i = 0; i < (int64_t)n; i++)
        sb_adam_step(&w[i], &m[i], &v[i], g[i], lr_t, one_minus_b1, one_minus_b2, o);
}

static void adam_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    const sb_optim_params p = hyper_parameters(c), *o = &p;
    const float lr_t = sb_adam_lr_t(o, c->t);
    const float one_minus_b1 = 1.0f - o->beta1;
    const float one_minus_b2 = 1.0f - o->beta2;
    float *w = c->out[0], *m = c->out[1], *v = c->out[2];
    const float *g = c->in[0];
    for (size_t i = lo; i < hi; i++)
        sb_adam_step(&w[i], &m[i], &v[i], g[i], lr_t, one_minus_b1, one_minus_b2, o);
}

void sb_adam_update_hashed(float *w, float *m, float *v, const float *g,
                           const sb_optim_params *o, int64_t t, size_t n,
                           const sb_leaf_request *r)
{
    sb_leaf_blocks_run(
        &(sb_leaf_call){.n = n, .out = {w, m, v}, .in = {g}, .params = o, .t = t}, r,
        adam_block);
}

/* Elements [lo, hi) as sb_adadelta_step updates them, compiled for the widest
 * vectors the CPU has: +, *, / and sqrt are correctly rounded at any width
 * and never contracted (kernels/meson.build), so every copy gives the bits
 * of the scalar loop; two square roots and a division an element make this
 * loop compute-bound in scalar code. */
SB_ISA_VARIANTS(adadelta_range, (float *restrict w, float *restrict acc, float *restrict delta_acc, const float *restrict g, const sb_optim_params *o, size_t lo, size_t hi),
                (w, acc, delta_acc, g, o, lo, hi))
{
    const float one_minus_rho = 1.0f - o->rho;
    for (size_t i = lo; i < hi; i++)
        sb_adadelta_step(&w[i], &acc[i], &delta_acc[i], g[i], one_minus_rho, o);
}

void sb_adadelta_update_det(float *w, float *acc, float *delta_acc, const float *g,
                            const sb_optim_params *o, size_t n)
{
#pragma omp parallel if (n >= SB_OPTIM_PARALLEL_MIN)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        adadelta_range(w, acc, delta_acc, g, o, n * (size_t)t / (size_t)nth,
                       n * (size_t)(t + 1) / (size_t)nth);
    }
}

static void adadelta_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    adadelta_range(c->out[0], c->out[1], c->out[2], c->in[0], c->params, lo, hi);
}

void sb_adadelta_update_hashed(float *w, float *acc, float *delta_acc, const float *g,
                               const sb_optim_params *o, size_t n, const sb_leaf_request *r)
{
    sb_leaf_blocks_run(
        &(sb_leaf_call){.n = n, .out = {w, acc, delta_acc}, .in = {g}, .params = o}, r,
        adadelta_block);
}

/* Elements [lo, hi) as sb_adamw_step updates them, compiled for the widest
 * vectors (with FMA) the CPU has, as adadelta_range: every copy gives the
 * bits of the scalar loop. The scalars are copied so that the stores cannot
 * alias them. */
SB_ISA_VARIANTS(adamw_range, (float *restrict w, float *restrict m, float *restrict v,
                              const float *restrict g, const sb_adamw_scalars *k,
                              const sb_optim_params *o, size_t lo, size_t hi),
                (w, m, v, g, k, o, lo, hi))
{
    const sb_adamw_scalars kk = *k;
    const sb_optim_params oo = *o;
    for (size_t i = lo; i < hi; i++)
        sb_adamw_step(&w[i], &m[i], &v[i], g[i], &kk, &oo);
}

void sb_adamw_range(float *restrict w, float *restrict m, float *restrict v,
                    const float *restrict g, const sb_adamw_scalars *k,
                    const sb_optim_params *o, size_t lo, size_t hi)
{
    adamw_range(w, m, v, g, k, o, lo, hi);
}

void sb_adamw_update_det(float *w, float *m, float *v, const float *g, const sb_optim_params *o,
                         int64_t t, size_t n)
{
    const sb_adamw_scalars k = sb_adamw_scalars_of(o, t);
#pragma omp parallel if (n >= SB_OPTIM_PARALLEL_MIN)
    {
        int th = omp_get_thread_num(), nth = omp_get_num_threads();
        sb_adamw_range(w, m, v, g, &k, o, n * (size_t)th / (size_t)nth,
                       n * (size_t)(th + 1) / (size_t)nth);
    }
}

static void adamw_block(const sb_leaf_call *c, size_t lo, size_t hi)
{
    const sb_adamw_scalars k = sb_adamw_scalars_of(c->params, c->t);
    sb_adamw_range(c->out[0], c->out[1], c->out[2], c->in[0], &k, c->params, lo, hi);
}

void sb_adamw_update_hashed(float *w, float *m, float *v, const float *g,
                            const sb_optim_params *o, int64_t t, size_t n,
                            const sb_leaf_request *r)
{
    sb_leaf_blocks_run(
        &(sb_leaf_call){.n = n, .out = {w, m, v}, .in = {g}, .params = o, .t = t}, r,
        adamw_block);
}

void sb_grad_norm_det(float *norm, const float *g, size_t n)
{
    const size_t blocks = sb_norm_blocks(n);
    float *part = malloc((blocks > 0 ? blocks : 1) * sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < (int64_t)blocks; b++)
        part[b] = sb_norm_block_sumsq(g, n, (size_t)b);
    float s = 0.0f;
    for (size_t b = 0; b < blocks; b++)
        s += part[b];
    free(part);
    *norm = sqrtf(s);
}
