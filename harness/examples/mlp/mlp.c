/* A small training loop under samebits: a 64-128-10 MLP (ReLU, softmax
 * cross-entropy, SGD), 5 steps on a batch of 32 random samples, written as
 * OpenMP code often is, probed with the probe helpers of the kernel list
 * (harness/examples/API.md). Two kernels, two planted faults:
 *
 *   mlp_reduction  the first layer's bias gradient sums over the batch with
 *                  an array reduction(+:acc[:H]): its bits follow the thread
 *                  count (a reordering at 2 threads), and from 3 threads on
 *                  libgomp adds the threads' partials in the order they
 *                  arrive, so they change from run to run (nondeterministic)
 *   mlp_chunk_bug  the forward GEMM splits the rows over the threads in
 *                  chunks of rows/threads, leaving out the last rows when the
 *                  thread count does not divide the batch: beyond-bound at 3,
 *                  5, 6 and 7 threads (the bias gradient in a fixed order)
 *
 *   mlp golden --golden-dir golden
 *   mlp sweep --threads 1-8 --golden-dir golden
 * (harness/examples/mlp/README.md; the test mlp builds it with pkg-config) */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "samebits.h"
#include "sb_rng.h"

enum { N = 32, IN = 64, H = 128, OUT = 10, STEPS = 5 };

typedef struct mlp {
    bool chunk_bug;             /* the forward GEMM's fault */
    bool reduction_clause;      /* the first bias gradient's reduction */
    float x[N * IN], w1[IN * H], b1[H], w2[H * OUT], b2[OUT];
    float z1[N * H], h1[N * H], z2[N * OUT], prob[N * OUT], loss;
    float dz2[N * OUT], dw2[H * OUT], db2[OUT], dh1[N * H], dz1[N * H], dw1[IN * H], db1[H];
    int32_t labels[N];
} mlp;

/* y [n][out] = x [n][in] w [in][out] + b, each row by one thread; with the
 * chunk bug a thread takes n / threads rows, and the rest are left out. */
static void gemm_fwd(float *y, const float *x, const float *w, const float *b, int n, int in,
                     int out, bool chunk_bug)
{
#pragma omp parallel
    {
        int t = omp_get_thread_num(), threads = omp_get_num_threads();
        int chunk = chunk_bug ? n / threads : (n + threads - 1) / threads;
        for (int r = t * chunk; r < (t + 1) * chunk && r < n; r++)
            for (int o = 0; o < out; o++) {
                float s = b[o];
                for (int i = 0; i < in; i++)
                    s += x[r * in + i] * w[i * out + o];
                y[r * out + o] = s;
            }
    }
}

/* dw [in][out] = x^T dy, each weight by one thread, rows in order */
static void gemm_bwd_weights(float *dw, const float *dy, const float *x, int n, int in, int out)
{
#pragma omp parallel for
    for (int i = 0; i < in; i++)
        for (int o = 0; o < out; o++) {
            float s = 0.0f;
            for (int r = 0; r < n; r++)
                s += x[r * in + i] * dy[r * out + o];
            dw[i * out + o] = s;
        }
}

/* dx [n][in] = dy w^T */
static void gemm_bwd_data(float *dx, const float *dy, const float *w, int n, int in, int out)
{
#pragma omp parallel for
    for (int r = 0; r < n; r++)
        for (int i = 0; i < in; i++) {
            float s = 0.0f;
            for (int o = 0; o < out; o++)
                s += dy[r * out + o] * w[i * out + o];
            dx[r * in + i] = s;
        }
}

/* db [out] = the sum of dy's rows: in row order, or with the reduction
 * clause, each thread's rows summed apart and the partials added as the
 * threads arrive */
static void bias_grad(float *db, const float *dy, int n, int out, bool reduction_clause)
{
    float acc[H] = {0};
    if (reduction_clause) {
#pragma omp parallel for reduction(+ : acc[:out])
        for (int r = 0; r < n; r++)
            for (int o = 0; o < out; o++)
                acc[o] += dy[r * out + o];
    } else {
        for (int r = 0; r < n; r++)
            for (int o = 0; o < out; o++)
                acc[o] += dy[r * out + o];
    }
    memcpy(db, acc, sizeof(float) * (size_t)out);
}

/* softmax of each row, the mean cross-entropy loss, and its gradient
 * (prob - onehot) / n */
static void softmax_xent(mlp *m)
{
    m->loss = 0.0f;
    for (int r = 0; r < N; r++) {
        const float *z = &m->z2[r * OUT];
        float max = z[0], sum = 0.0f;
        for (int k = 1; k < OUT; k++)
            max = z[k] > max ? z[k] : max;
        for (int k = 0; k < OUT; k++)
            sum += expf(z[k] - max);
        for (int k = 0; k < OUT; k++) {
            m->prob[r * OUT + k] = expf(z[k] - max) / sum;
            m->dz2[r * OUT + k] = (m->prob[r * OUT + k] - (k == m->labels[r])) / N;
        }
        m->loss += (logf(sum) + max - z[m->labels[r]]) / N;
    }
}

static void relu(float *y, const float *x, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

static void relu_bwd(float *dx, const float *dy, const float *x, int n)
{
    for (int i = 0; i < n; i++)
        dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

static void sgd(float *w, const float *g, int n)
{
    for (int i = 0; i < n; i++)
        w[i] -= 0.1f * g[i];
}

static sb_status mlp_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    mlp *m = ctx;
    sb_rng_fill_uniform(m->x, N * IN, -1.0f, 1.0f, 11, 1, 0);
    sb_rng_fill_uniform(m->w1, IN * H, -0.125f, 0.125f, 11, 2, 0);
    sb_rng_fill_uniform(m->w2, H * OUT, -0.125f, 0.125f, 11, 3, 0);
    for (int r = 0; r < N; r++)
        m->labels[r] = r % OUT;
    sb_probes pc = sb_probes_begin(probe, probe_ctx);
    sb_probe_source(&pc, 0, "x", sb_f32(m->x, N, IN));
    sb_probe_source(&pc, 0, "labels", sb_i32(m->labels, N));
    sb_probe_source(&pc, 0, "init.w1", sb_f32(m->w1, IN, H));
    sb_probe_source(&pc, 0, "init.b1", sb_f32(m->b1, H));
    sb_probe_source(&pc, 0, "init.w2", sb_f32(m->w2, H, OUT));
    sb_probe_source(&pc, 0, "init.b2", sb_f32(m->b2, OUT));
    const sb_dense_shape l1 = {N, IN, H}, l2 = {N, H, OUT};
    const sb_class_shape cls = {.n = N, .k = OUT};
    const sb_optim_params plain_sgd = {.kind = SB_OPTIM_SGD, .lr = 0.1f};
    for (int s = 0; s < STEPS; s++) {
        gemm_fwd(m->z1, m->x, m->w1, m->b1, N, IN, H, m->chunk_bug);
        sb_probe_dense_fwd(&pc, s, "fc1.out", m->z1, m->x, m->w1, m->b1, &l1);
        relu(m->h1, m->z1, N * H);
        sb_probe_relu_fwd(&pc, s, "relu.out", m->h1, m->z1, N * H);
        gemm_fwd(m->z2, m->h1, m->w2, m->b2, N, H, OUT, m->chunk_bug);
        sb_probe_dense_fwd(&pc, s, "fc2.out", m->z2, m->h1, m->w2, m->b2, &l2);
        softmax_xent(m);
        sb_probe_softmax_fwd(&pc, s, "prob", m->prob, m->z2, &cls);
        sb_probe_xent_loss(&pc, s, "loss", &m->loss, m->z2, m->labels, &cls);
        sb_probe_softmax_xent_bwd(&pc, s, "fc2.dout", m->dz2, m->prob, m->labels, &cls);

        gemm_bwd_weights(m->dw2, m->dz2, m->h1, N, H, OUT);
        sb_probe_dense_bwd_weights(&pc, s, "fc2.dw", m->dw2, m->dz2, m->h1, &l2);
        bias_grad(m->db2, m->dz2, N, OUT, false);
        sb_probe_dense_bwd_bias(&pc, s, "fc2.db", m->db2, m->dz2, &l2);
        gemm_bwd_data(m->dh1, m->dz2, m->w2, N, H, OUT);
        sb_probe_dense_bwd_data(&pc, s, "fc2.dx", m->dh1, m->dz2, m->w2, &l2);
        relu_bwd(m->dz1, m->dh1, m->z1, N * H);
        sb_probe_relu_bwd(&pc, s, "relu.dx", m->dz1, m->dh1, m->z1, N * H);
        gemm_bwd_weights(m->dw1, m->dz1, m->x, N, IN, H);
        sb_probe_dense_bwd_weights(&pc, s, "fc1.dw", m->dw1, m->dz1, m->x, &l1);
        bias_grad(m->db1, m->dz1, N, H, m->reduction_clause);
        sb_probe_dense_bwd_bias(&pc, s, "fc1.db", m->db1, m->dz1, &l1);

        sgd(m->w1, m->dw1, IN * H);
        sb_probe_sgd_update(&pc, s, "fc1.w", m->w1, NULL, m->dw1, &plain_sgd, IN * H);
        sgd(m->b1, m->db1, H);
        sb_probe_sgd_update(&pc, s, "fc1.b", m->b1, NULL, m->db1, &plain_sgd, H);
        sgd(m->w2, m->dw2, H * OUT);
        sb_probe_sgd_update(&pc, s, "fc2.w", m->w2, NULL, m->dw2, &plain_sgd, H * OUT);
        sgd(m->b2, m->db2, OUT);
        sb_probe_sgd_update(&pc, s, "fc2.b", m->b2, NULL, m->db2, &plain_sgd, OUT);
    }
    return sb_probes_end(&pc);
}

static mlp reduction_mlp = {.reduction_clause = true};
static mlp chunk_bug_mlp = {.chunk_bug = true};

int main(int argc, char **argv)
{
    const sb_user_kernel kernels[] = {
        {.name = "mlp_reduction", .version = "1", .run = mlp_run, .ctx = &reduction_mlp,
         .expect_set = SB_VERDICT_BIT(SB_VERDICT_REORDERING) |
                       SB_VERDICT_BIT(SB_VERDICT_NONDETERMINISTIC)},
        {.name = "mlp_chunk_bug", .version = "1", .run = mlp_run, .ctx = &chunk_bug_mlp,
         .expect = SB_VERDICT_IDENTICAL},
    };
    return sb_user_main_kernels(argc, argv, kernels, sizeof kernels / sizeof kernels[0]);
}
