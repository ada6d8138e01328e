/* A user's program whose one sum is split over the threads (each thread
 * sums its share of the terms in order, the partials are added in thread
 * order: different bits at 2 threads than at 1, the same at every run),
 * probed three ways, one kernel each, every one expecting `reordering`:
 *
 *   sum_no_bound  no bound and not declared exact: nothing can tell a
 *                 reordering from a bug, the sweep says `unbounded`
 *   sum_exact     declared exact (.exact): any difference is a bug,
 *                 `beyond-bound`
 *   sum_bounded   the bound of any order of the terms: `reordering`
 *
 * test_unbounded.sh sweeps it (the first two are not as expected). */
#include <math.h>
#include <omp.h>

#include "samebits.h"
#include "sb_rng.h"

enum { N = 1 << 14, MAX_THREADS = 64 };

typedef enum probe_kind { NO_BOUND, EXACT, BOUNDED } probe_kind;

typedef struct sum_case {
    probe_kind kind;
    float x[N];
} sum_case;

static float split_sum(const float *x)
{
    float part[MAX_THREADS] = {0};
    int threads = omp_get_max_threads() < MAX_THREADS ? omp_get_max_threads() : MAX_THREADS;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        float s = 0.0f;
        for (int i = (int)((long)N * t / n); i < (int)((long)N * (t + 1) / n); i++)
            s += x[i];
        part[t] = s;
    }
    float s = 0.0f;
    for (int t = 0; t < threads; t++)
        s += part[t];
    return s;
}

static void sum_bound(float *bound, const void *ctx, int out_index)
{
    const sum_case *c = ctx;
    double abs_sum = 0.0;
    (void)out_index;
    for (int i = 0; i < N; i++)
        abs_sum += fabs((double)c->x[i]);
    bound[0] = sb_dot_bound(N, abs_sum);
}

static sb_status sum_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    sum_case *c = ctx;
    sb_rng_fill_uniform(c->x, N, -1.0f, 1.0f, 11, 1, 0);
    float out = split_sum(c->x);
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {N}, .data = c->x};
    sb_tensor o = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {1}, .data = &out};
    sb_probe_point px = {.name = "sum.x", .op = "source", .tensor = &x};
    probe(probe_ctx, &px);
    const char *inputs[] = {"sum.x"};
    sb_probe_point po = {.name = "sum.out", .op = "my_sum", .tensor = &o, .inputs = inputs,
                         .n_inputs = 1, .input_tensors = &x, .n_input_tensors = 1,
                         .bound = c->kind == BOUNDED ? sum_bound : NULL, .bound_ctx = c,
                         .exact = c->kind == EXACT};
    probe(probe_ctx, &po);
    return SB_OK;
}

static sum_case no_bound = {.kind = NO_BOUND}, exact = {.kind = EXACT},
                bounded = {.kind = BOUNDED};

int main(int argc, char **argv)
{
    const sb_user_kernel kernels[] = {
        {.name = "sum_no_bound", .version = "1", .run = sum_run, .ctx = &no_bound,
         .expect = SB_VERDICT_REORDERING},
        {.name = "sum_exact", .version = "1", .run = sum_run, .ctx = &exact,
         .expect = SB_VERDICT_REORDERING},
        {.name = "sum_bounded", .version = "1", .run = sum_run, .ctx = &bounded,
         .expect = SB_VERDICT_REORDERING},
    };
    return sb_user_main_kernels(argc, argv, kernels, sizeof kernels / sizeof kernels[0]);
}
