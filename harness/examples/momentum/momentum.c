/* A training loop that stops and resumes under samebits: a linear model
 * trained by SGD with momentum, 6 steps on minibatches of 16 of 64 random
 * samples, taken in the order of a shuffle drawn per epoch (the
 * counter-based RNG of sb_rng.h). Its sums have a fixed order, so its bits
 * are the same at every thread count. Its resume hook (steps, save,
 * restore) lets `sweep --resume 2,4` stop it after step K-1, write its
 * state, and resume it in a new process; the state is everything the next
 * step reads: the weights, the velocity, and the data order's position.
 *
 *   momentum          saved and restored whole: the resumed run is the run
 *                     that never stopped, at every thread count
 *   momentum_forgets  its restore drops the velocity (a fault users report:
 *                     an optimiser state not saved): the resumed run parts
 *                     from the golden at the first step after the resume,
 *                     in the momentum update (beyond-bound: no reduction)
 *
 *   momentum golden --golden-dir golden
 *   momentum sweep --threads 1,2 --resume 2,4 --repeat 1 --golden-dir golden
 * (harness/examples/README.md, "Resuming"; its goldens are
 * examples/golden/momentum.golden and momentum_forgets.golden) */
#include <omp.h>
#include <string.h>

#include "samebits.h"
#include "sb_rng.h"

enum { N = 64, D = 16, B = 16, STEPS = 6, SEED = 5 };

typedef struct momentum {
    bool forgets;               /* the planted fault: restore drops the velocity */
    float x[N * D], y[N];       /* the data set, the same in every process */
    float w[D], v[D], bias[1];  /* the weights, their velocity; y = x w + bias, bias 0 */
    int64_t position;           /* samples taken so far: the data order's position */
    float bx[B * D], by[B], pred[B], dy[B], grad[D];
} momentum;

/* The next minibatch: samples position.. of the shuffle of their epoch. */
static void batch_take(momentum *m)
{
    int64_t perm[N];
    sb_rng_permutation(perm, N, SEED, 3, (uint32_t)(m->position / N));
    for (int r = 0; r < B; r++, m->position++) {
        int64_t i = perm[m->position % N];
        memcpy(&m->bx[r * D], &m->x[i * D], sizeof(float) * D);
        m->by[r] = m->y[i];
    }
}

/* pred = bx w, then dy = (pred - by) / B and grad = bx^T dy: each output by
 * one thread, its sum in a fixed order */
static void gradient(momentum *m)
{
#pragma omp parallel for
    for (int r = 0; r < B; r++) {
        float s = m->bias[0];
        for (int d = 0; d < D; d++)
            s += m->bx[r * D + d] * m->w[d];
        m->pred[r] = s;
        m->dy[r] = (s - m->by[r]) / B;
    }
#pragma omp parallel for
    for (int d = 0; d < D; d++) {
        float s = 0.0f;
        for (int r = 0; r < B; r++)
            s += m->bx[r * D + d] * m->dy[r];
        m->grad[d] = s;
    }
}

static sb_status momentum_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    momentum *m = ctx;
    sb_rng_fill_uniform(m->x, N * D, -1.0f, 1.0f, SEED, 1, 0);
    sb_rng_fill_uniform(m->y, N, -1.0f, 1.0f, SEED, 2, 0);
    const sb_user_steps steps = sb_user_run_steps(probe_ctx);
    sb_probes pc = sb_probes_begin(probe, probe_ctx);
    if (steps.first == 0) {
        memset(m->w, 0, sizeof m->w);
        memset(m->v, 0, sizeof m->v);
        m->position = 0;
        sb_probe_source(&pc, 0, "init.w", sb_f32(m->w, D, 1));
        sb_probe_source(&pc, 0, "init.v", sb_f32(m->v, D));
        sb_probe_source(&pc, 0, "bias", sb_f32(m->bias, 1));
    } else {
        /* restored: named as their latest probes before the stop */
        sb_probes_restored(&pc, m->w, "w");
        sb_probes_restored(&pc, m->v, "sgd.v");
        sb_probes_restored(&pc, m->bias, "bias");
    }
    const sb_dense_shape shape = {B, D, 1};
    for (int64_t s = steps.first; s < steps.end; s++) {
        batch_take(m);
        sb_probe_source(&pc, s, "batch.x", sb_f32(m->bx, B, D));
        sb_probe_source(&pc, s, "batch.y", sb_f32(m->by, B));
        gradient(m);
        sb_probe_dense_fwd(&pc, s, "pred", m->pred, m->bx, m->w, m->bias, &shape);
        sb_probe_op(&pc, s, "dy", "mse_grad", sb_f32(m->dy, B, 1), 2,
                    (sb_tensor[]){sb_f32(m->pred, B, 1), sb_f32(m->by, B)}, NULL, NULL);
        sb_probe_dense_bwd_weights(&pc, s, "grad", m->grad, m->dy, m->bx, &shape);
        for (int d = 0; d < D; d++)
            m->v[d] = 0.9f * m->v[d] + m->grad[d];
        sb_probe_op(&pc, s, "sgd.v", "momentum", sb_f32(m->v, D), 2,
                    (sb_tensor[]){sb_f32(m->v, D), sb_f32(m->grad, D, 1)}, NULL, NULL);
        for (int d = 0; d < D; d++)
            m->w[d] -= 0.05f * m->v[d];
        sb_probe_op(&pc, s, "w", "sgd_step", sb_f32(m->w, D, 1), 2,
                    (sb_tensor[]){sb_f32(m->w, D, 1), sb_f32(m->v, D)}, NULL, NULL);
    }
    return sb_probes_end(&pc);
}

/* The resume hook: the state after the last step run, and back. */
static sb_status momentum_save(void *ctx, FILE *f)
{
    const momentum *m = ctx;
    bool ok = fwrite(m->w, sizeof m->w, 1, f) == 1 && fwrite(m->v, sizeof m->v, 1, f) == 1 &&
              fwrite(&m->position, sizeof m->position, 1, f) == 1;
    return ok ? SB_OK : SB_ERR_IO;
}

static sb_status momentum_restore(void *ctx, FILE *f)
{
    momentum *m = ctx;
    if (fread(m->w, sizeof m->w, 1, f) != 1 || fread(m->v, sizeof m->v, 1, f) != 1 ||
        fread(&m->position, sizeof m->position, 1, f) != 1)
        return SB_ERR_INPUT;
    if (m->forgets)
        memset(m->v, 0, sizeof m->v);
    return SB_OK;
}

static momentum whole = {.forgets = false};
static momentum forgets = {.forgets = true};

int main(int argc, char **argv)
{
    const sb_user_kernel kernels[] = {
        {.name = "momentum", .version = "1", .run = momentum_run, .ctx = &whole,
         .expect = SB_VERDICT_IDENTICAL, .steps = STEPS, .save = momentum_save,
         .restore = momentum_restore},
        {.name = "momentum_forgets", .version = "1", .run = momentum_run, .ctx = &forgets,
         .expect = SB_VERDICT_IDENTICAL, .steps = STEPS, .save = momentum_save,
         .restore = momentum_restore},
    };
    return sb_user_main_kernels(argc, argv, kernels, sizeof kernels / sizeof kernels[0]);
}
