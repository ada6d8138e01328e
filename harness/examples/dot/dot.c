/* Two dot products under samebits, one program (the tutorial in
 * harness/examples/README.md):
 *
 *   dot_reduction  an OpenMP reduction(+:) clause: each thread sums its share
 *                  of the terms, so the bracketing of the sum follows the
 *                  thread count; the harness calls the 2-thread result a
 *                  reordering (different bits, within the bound of another
 *                  summation order)
 *   dot_blocked    fixed blocks of BLOCK terms, each summed in order by
 *                  whichever thread gets it, the block sums added in block
 *                  order: the same bracketing at every thread count, so the
 *                  same bits (identical)
 *
 *   dot list                           the kernels' names
 *   dot golden --golden-dir DIR        DIR/dot_reduction.golden, DIR/dot_blocked.golden
 *   dot sweep --threads 1,2 --golden-dir DIR
 */
#include <math.h>

#include "samebits.h"
#include "sb_rng.h"

enum { N = 1 << 16, BLOCK = 1024 };

typedef float dot_fn(const float *x, const float *y, int n);

typedef struct dot_case {
    dot_fn *dot;
    float x[N], y[N];
} dot_case;

static float dot_reduction(const float *x, const float *y, int n)
{
    float s = 0.0f;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

static float dot_blocked(const float *x, const float *y, int n)
{
    float part[N / BLOCK];
    int blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; b++) {
        float s = 0.0f;
        for (int i = b * BLOCK; i < n && i < (b + 1) * BLOCK; i++)
            s += x[i] * y[i];
        part[b] = s;
    }
    float s = 0.0f;
    for (int b = 0; b < blocks; b++)
        s += part[b];
    return s;
}

/* Any two orders of the N products are at most 2*gamma(N)*sum|x_i*y_i| apart
 * (sb_dot_bound). */
static void dot_bound(float *bound, const void *ctx, int out_index)
{
    const dot_case *d = ctx;
    double abs_sum = 0.0;
    (void)out_index;
    for (int i = 0; i < N; i++)
        abs_sum += fabs((double)d->x[i] * (double)d->y[i]);
    bound[0] = sb_dot_bound(N, abs_sum);
}

static sb_status dot_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    dot_case *d = ctx;
    /* the same inputs in every process: the counter-based RNG, a fixed seed */
    sb_rng_fill_uniform(d->x, N, -1.0f, 1.0f, 7, 1, 0);
    sb_rng_fill_uniform(d->y, N, -1.0f, 1.0f, 7, 2, 0);
    float out = d->dot(d->x, d->y, N);

    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {N}, .data = d->x};
    sb_tensor y = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {N}, .data = d->y};
    sb_tensor o = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {1}, .data = &out};
    sb_probe_point px = {.name = "dot.x", .op = "source", .tensor = &x};
    sb_probe_point py = {.name = "dot.y", .op = "source", .tensor = &y};
    probe(probe_ctx, &px);
    probe(probe_ctx, &py);
    const char *inputs[] = {"dot.x", "dot.y"};
    sb_tensor input_tensors[] = {x, y};
    sb_probe_point po = {.name = "dot.out", .op = "dot", .tensor = &o,
                         .inputs = inputs, .n_inputs = 2,
                         .input_tensors = input_tensors, .n_input_tensors = 2,
                         .bound = dot_bound, .bound_ctx = d};
    probe(probe_ctx, &po);
    return SB_OK;
}

static dot_case reduction_case = {.dot = dot_reduction};
static dot_case blocked_case = {.dot = dot_blocked};

int main(int argc, char **argv)
{
    const sb_user_kernel kernels[] = {
        {.name = "dot_reduction", .version = "1", .run = dot_run, .ctx = &reduction_case,
         .expect = SB_VERDICT_REORDERING},
        {.name = "dot_blocked", .version = "1", .run = dot_run, .ctx = &blocked_case,
         .expect = SB_VERDICT_IDENTICAL},
    };
    return sb_user_main_kernels(argc, argv, kernels, sizeof kernels / sizeof kernels[0]);
}
