/* A user's own kernel under the harness: a matrix-vector product written the
 * way OpenMP code often is, each row's sum split over the threads into
 * per-thread partial sums, added in thread order. The thread count decides
 * how every sum is split, so the bits of y follow the thread count;
 * `user_kernel sweep` should call every difference a reordering (within the
 * bound of a different summation order) and never beyond-bound. (With a
 * reduction(+:) clause instead, libgomp adds the partials in the order the
 * threads arrive, and from 3 threads on the sweep would find the bits
 * changing from run to run: nondeterministic.)
 *
 *   user_kernel golden --golden FILE        the 1-thread run becomes FILE
 *   user_kernel sweep --threads 1-4 --golden FILE
 * (its golden is examples/golden/user_matvec.golden, swept by meson test)
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "samebits.h"
#include "sb_rng.h"

enum { ROWS = 64, COLS = 4096 };

typedef struct matvec {
    float *a;   /* [ROWS][COLS] */
    float *x;   /* [COLS] */
    float *y;   /* [ROWS] */
} matvec;

/* y[i] = sum_j a[i][j] * x[j]; each row's sum split over the threads by the
 * static schedule, the partial sums added in thread order. */
static void matvec_run(float *y, const float *a, const float *x, int rows, int cols)
{
    float part[SB_MAX_THREADS];
    for (int i = 0; i < rows; i++) {
        int threads = 1;
#pragma omp parallel num_threads(omp_get_max_threads() < SB_MAX_THREADS \
                                     ? omp_get_max_threads() : SB_MAX_THREADS)
        {
            float s = 0.0f;
#pragma omp for schedule(static)
            for (int j = 0; j < cols; j++)
                s += a[(size_t)i * (size_t)cols + (size_t)j] * x[j];
            part[omp_get_thread_num()] = s;
#pragma omp single
            threads = omp_get_num_threads();
        }
        float s = 0.0f;
        for (int t = 0; t < threads; t++)
            s += part[t];
        y[i] = s;
    }
}

/* Two orders of the same n products differ by at most 2*gamma(n)*sum|terms|
 * (each is within gamma(n-1)*sum|terms| of the exact sum); evaluated in double
 * and rounded up to the next float. */
static void matvec_bound(float *bound, const void *ctx, int out_index)
{
    const matvec *m = ctx;
    (void)out_index;
    for (int i = 0; i < ROWS; i++) {
        double sum = 0.0;
        for (int j = 0; j < COLS; j++)
            sum += fabs((double)m->a[(size_t)i * COLS + (size_t)j] * (double)m->x[j]);
        bound[i] = nextafterf((float)(2.0 * sb_gamma(COLS) * sum), INFINITY);
    }
}

static sb_status matvec_probe_all(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    matvec *m = ctx;
    sb_tensor a = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {ROWS, COLS}, .data = m->a};
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {COLS}, .data = m->x};
    sb_tensor y = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {ROWS}, .data = m->y};

    /* inputs from the counter-based RNG: the same bits in every process */
    sb_rng_fill_uniform(m->a, (size_t)ROWS * COLS, -1.0f, 1.0f, 42, 1, 0);
    sb_rng_fill_uniform(m->x, COLS, -1.0f, 1.0f, 42, 2, 0);
    sb_probe_point pa = {.name = "matvec.a", .op = "source", .tensor = &a};
    sb_probe_point px = {.name = "matvec.x", .op = "source", .tensor = &x};
    probe(probe_ctx, &pa);
    probe(probe_ctx, &px);

    matvec_run(m->y, m->a, m->x, ROWS, COLS);

    const char *inputs[] = {"matvec.a", "matvec.x"};
    sb_tensor input_tensors[] = {a, x};
    sb_probe_point py = {.name = "matvec.y", .op = "matvec", .tensor = &y,
                         .inputs = inputs, .n_inputs = 2,
                         .input_tensors = input_tensors, .n_input_tensors = 2,
                         .bound = matvec_bound, .bound_ctx = m};
    probe(probe_ctx, &py);
    return SB_OK;
}

int main(int argc, char **argv)
{
    matvec m = {malloc(sizeof(float) * ROWS * COLS), malloc(sizeof(float) * COLS),
                malloc(sizeof(float) * ROWS)};
    if (!m.a || !m.x || !m.y)
        return SB_EXIT_INPUT;
    sb_user_kernel k = {.name = "user_matvec", .version = "1", .run = matvec_probe_all,
                        .ctx = &m, .expect = SB_VERDICT_REORDERING};
    int rc = sb_user_main(argc, argv, &k);
    free(m.a);
    free(m.x);
    free(m.y);
    return rc;
}
