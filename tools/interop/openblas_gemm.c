/* OpenBLAS's cblas_sgemm under the harness, through the public C API
 * (sb_user_main): the GEMMs of the seed model and a few odd shapes, run with
 * the thread count of each configuration.
 *
 *   samebits-openblas golden --golden FILE
 *   samebits-openblas sweep --threads 1-8 --golden FILE [--json FILE] [--census]
 *   samebits-openblas impls     OpenBLAS's build and the core kernels it chose
 *
 * Every configuration is a child process; its thread count reaches OpenMP
 * through OMP_NUM_THREADS, and OpenBLAS through openblas_set_num_threads in
 * the run itself, because OpenBLAS caps OPENBLAS_NUM_THREADS at the number of
 * cores it sees while the sweep wants 1..8 on any machine. How OpenBLAS
 * divides a GEMM among its threads may change the order in which an
 * element's products are summed, so C's bits may follow the thread count;
 * the bound below says how far a different summation order can move them. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "samebits.h"
#include "sb_rng.h"

typedef struct gemm_shape {
    const char *name;       /* probe prefix: <name>.A, <name>.B, <name>.C */
    int m, n, k;
    float *a;               /* [m][k] */
    float *b;               /* [k][n] */
    float *c;               /* [m][n] */
} gemm_shape;

/* The seed model's GEMMs (conv2 forward as an im2col GEMM: 64 filters,
 * K = 32 channels * 3 * 3, N = 24 * 24 output positions per image; dense1:
 * 128 units over the 9216 flattened features of a batch of 128) and shapes
 * that are no multiple of any register tile. */
static gemm_shape shapes[] = {
    {"conv2_image", 64, 576, 288, NULL, NULL, NULL},
    {"conv2_batch4", 64, 4 * 576, 288, NULL, NULL, NULL},
    {"dense1", 128, 128, 9216, NULL, NULL, NULL},
    {"odd_37x91x1013", 37, 91, 1013, NULL, NULL, NULL},
    {"odd_129x65x4097", 129, 65, 4097, NULL, NULL, NULL},
    {"odd_7x1000x333", 7, 1000, 333, NULL, NULL, NULL},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

/* Two summation orders of the k products of one element differ by at most
 * 2*gamma(k)*sum|a_il*b_lj| (each is within gamma(k-1) of that sum from the
 * exact value, fused or not); evaluated in double, rounded up to a float. */
static void gemm_bound(float *bound, const void *ctx, int out_index)
{
    const gemm_shape *g = ctx;
    (void)out_index;
    double gamma2 = 2.0 * sb_gamma(g->k);
    double *row = malloc(sizeof *row * (size_t)g->n);
    SB_ASSERT(row != NULL);
    for (int i = 0; i < g->m; i++) {
        for (int j = 0; j < g->n; j++)
            row[j] = 0.0;
        for (int l = 0; l < g->k; l++) {
            double a = fabs((double)g->a[(size_t)i * (size_t)g->k + (size_t)l]);
            const float *b = g->b + (size_t)l * (size_t)g->n;
            for (int j = 0; j < g->n; j++)
                row[j] += a * fabs((double)b[j]);
        }
        for (int j = 0; j < g->n; j++)
            bound[(size_t)i * (size_t)g->n + (size_t)j] =
                nextafterf((float)(gamma2 * row[j]), INFINITY);
    }
    free(row);
}

static void probe_source(sb_probe_fn *probe, void *probe_ctx, const char *name,
                         const sb_tensor *t)
{
    sb_probe_point p = {.name = name, .op = "source", .tensor = t};
    probe(probe_ctx, &p);
}

static sb_status gemm_run(gemm_shape *g, uint32_t stream, sb_probe_fn *probe, void *probe_ctx)
{
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
    g->a = malloc(sizeof(float) * m * k);
    g->b = malloc(sizeof(float) * k * n);
    g->c = malloc(sizeof(float) * m * n);
    if (!g->a || !g->b || !g->c)
        return SB_ERR_NOMEM;
    /* the same inputs in every process: counter-based RNG, fixed seed */
    sb_rng_fill_uniform(g->a, m * k, -1.0f, 1.0f, 7, stream, 0);
    sb_rng_fill_uniform(g->b, k * n, -1.0f, 1.0f, 7, stream + 1, 0);

    char name_a[64], name_b[64], name_c[64];
    snprintf(name_a, sizeof name_a, "%s.A", g->name);
    snprintf(name_b, sizeof name_b, "%s.B", g->name);
    snprintf(name_c, sizeof name_c, "%s.C", g->name);
    sb_tensor ta = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {g->m, g->k}, .data = g->a};
    sb_tensor tb = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {g->k, g->n}, .data = g->b};
    sb_tensor tc = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {g->m, g->n}, .data = g->c};
    probe_source(probe, probe_ctx, name_a, &ta);
    probe_source(probe, probe_ctx, name_b, &tb);

    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a,
                g->k, g->b, g->n, 0.0f, g->c, g->n);

    const char *inputs[] = {name_a, name_b};
    sb_tensor input_tensors[] = {ta, tb};
    sb_probe_point pc = {.name = name_c, .op = "cblas_sgemm", .tensor = &tc,
                         .inputs = inputs, .n_inputs = 2,
                         .input_tensors = input_tensors, .n_input_tensors = 2,
                         .bound = gemm_bound, .bound_ctx = g};
    probe(probe_ctx, &pc);
    return SB_OK;
}

/* sb_user_main has set OpenMP's thread count to the configuration's. */
static sb_status gemms_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    (void)ctx;
    openblas_set_num_threads(omp_get_max_threads());
    for (int s = 0; s < N_SHAPES; s++) {
        sb_status st = gemm_run(&shapes[s], SB_STREAM_CASE_INPUT + 2 * (uint32_t)s, probe,
                                probe_ctx);
        if (st != SB_OK)
            return st;
    }
    return SB_OK;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "impls") == 0) {
        printf("%s, core %s\n", openblas_get_config(), openblas_get_corename());
        return SB_EXIT_OK;
    }
    /* which counts keep their bits depends on OpenBLAS's build and the CPU:
     * either is fine, a difference beyond the bound or between repeats is not */
    sb_user_kernel k = {.name = "openblas_sgemm", .version = "1", .run = gemms_run,
                        .expect_set = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) |
                                      SB_VERDICT_BIT(SB_VERDICT_REORDERING)};
    int rc = sb_user_main(argc, argv, &k);
    for (int s = 0; s < N_SHAPES; s++) {
        free(shapes[s].a);
        free(shapes[s].b);
        free(shapes[s].c);
    }
    return rc;
}
