/* samebits-bench-kernels: GFLOP/s of the GEMM-based kernels (det, loose) at
 * the seed model's batch-128 shapes and the char GPT's matmuls, against
 * OpenBLAS cblas_sgemm on the equivalent GEMM, and each as a fraction of the
 * machine's FMA peak, beside the GEMM tile's own ceiling (tile_peak.h).
 * Measurements are interleaved (every op, family and thread count once per
 * round, after the round's peaks, in an order that changes every round);
 * medians over rounds are reported, a ratio as the median of its per-round
 * ratios with their smallest and largest. See tools/bench/README.md. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cpu.h"
#include "bench_onednn.h"
#include "bench_stats.h"
#include "fma_peak.h"
#include "sb_kernels.h"
#include "sb_refd.h"
#include "tile_peak.h"

/* the equivalent GEMM: C[m][n] = op(A) op(B), K = k */
typedef struct bench_gemm {
    int m, n, k;
    bool a_trans, b_trans;
} bench_gemm;

/* shape: the params of the op's call (sb_op_call's shape fields); gemm
 * all zero for an op with no equivalent GEMM (timed against loose only) */
typedef struct bench_case {
    const char *name;
    sb_op op;
    sb_op_call shape;
    bench_gemm gemm;
} bench_case;

#define CONV1 {128, 1, 28, 28, 32, 3, 3, 1, 0, 26, 26}
#define CONV2 {128, 32, 26, 26, 64, 3, 3, 1, 0, 24, 24}
#define DENSE1 {128, 9216, 128}
#define DENSE2 {128, 128, 10}
/* The char GPT's matmuls at its default size: N = 16 windows of 64 tokens
 * = 1024 rows, width 128, MLP 512, vocabulary 98 (SB_TEXT_VOCAB). */
#define GPT_ROWS 1024
#define GPT_DENSE(name, in, out)                                                          \
    {"gpt." name ".fwd", SB_OP_dense_fwd, {.dense = {GPT_ROWS, in, out}},                 \
     {GPT_ROWS, out, in, false, false}},                                                  \
    {"gpt." name ".bwd_data", SB_OP_dense_bwd_data, {.dense = {GPT_ROWS, in, out}},       \
     {GPT_ROWS, in, out, false, true}},                                                   \
    {"gpt." name ".bwd_weights", SB_OP_dense_bwd_weights, {.dense = {GPT_ROWS, in, out}}, \
     {in, out, GPT_ROWS, true, false}}
#define GPT_EMBED {GPT_ROWS, 64, 98, 128}
#define GPT_NORM {GPT_ROWS, 128, 1e-5f}
#define GPT_ATTN {16, 64, 4, 32, 0, false}
/* every parameter of the 2-block model: wte, wpe, per block ln1, qkv, proj,
 * ln2, fc, fcproj (weights and biases), lnf, head */
#define GPT_PARAMS                                                                          \
    (98 * 128 + 64 * 128 +                                                                  \
     2 * (4 * 128 + 128 * 384 + 384 + 128 * 128 + 128 + 128 * 512 + 512 + 512 * 128 + 128) + \
     2 * 128 + 128 * 98 + 98)

/* conv as im2col GEMMs over the whole batch (N = n*p*q): the OpenBLAS side
 * gets its column matrix for free, the kernels build theirs. */
static const bench_case cases[] = {
    {"conv1.fwd", SB_OP_conv2d_fwd, {.conv = CONV1}, {32, 128 * 676, 9, false, false}},
    {"conv1.bwd_filter", SB_OP_conv2d_bwd_filter, {.conv = CONV1}, {32, 9, 128 * 676, false, true}},
    {"conv2.fwd", SB_OP_conv2d_fwd, {.conv = CONV2}, {64, 128 * 576, 288, false, false}},
    {"conv2.bwd_data", SB_OP_conv2d_bwd_data, {.conv = CONV2}, {288, 128 * 576, 64, true, false}},
    {"conv2.bwd_filter", SB_OP_conv2d_bwd_filter, {.conv = CONV2}, {64, 288, 128 * 576, false, true}},
    {"dense1.fwd", SB_OP_dense_fwd, {.dense = DENSE1}, {128, 128, 9216, false, false}},
    {"dense1.bwd_data", SB_OP_dense_bwd_data, {.dense = DENSE1}, {128, 9216, 128, false, true}},
    {"dense1.bwd_weights", SB_OP_dense_bwd_weights, {.dense = DENSE1}, {9216, 128, 128, true, false}},
    {"dense2.fwd", SB_OP_dense_fwd, {.dense = DENSE2}, {128, 10, 128, false, false}},
    {"dense2.bwd_data", SB_OP_dense_bwd_data, {.dense = DENSE2}, {128, 128, 10, false, true}},
    {"dense2.bwd_weights", SB_OP_dense_bwd_weights, {.dense = DENSE2}, {128, 10, 128, true, false}},
    GPT_DENSE("qkv", 128, 384),
    GPT_DENSE("proj", 128, 128),
    GPT_DENSE("fc", 128, 512),
    GPT_DENSE("fcproj", 512, 128),
    GPT_DENSE("head", 128, 98),
    /* the char GPT's other ops: 16 windows of 64 tokens, 4 heads of 32 */
    {"gpt.embed.fwd", SB_OP_embedding_fwd, {.embed = GPT_EMBED}, {0}},
    {"gpt.embed.bwd_tokens", SB_OP_embedding_bwd_tokens, {.embed = GPT_EMBED}, {0}},
    {"gpt.embed.bwd_pos", SB_OP_embedding_bwd_pos, {.embed = GPT_EMBED}, {0}},
    {"gpt.ln.fwd", SB_OP_layernorm_fwd, {.norm = GPT_NORM}, {0}},
    {"gpt.ln.bwd_data", SB_OP_layernorm_bwd_data, {.norm = GPT_NORM}, {0}},
    {"gpt.ln.bwd_gamma", SB_OP_layernorm_bwd_gamma, {.norm = GPT_NORM}, {0}},
    {"gpt.attn.fwd", SB_OP_attention_fwd, {.attn = GPT_ATTN}, {0}},
    {"gpt.attn.bwd", SB_OP_attention_bwd, {.attn = GPT_ATTN}, {0}},
    {"gpt.gelu.fwd", SB_OP_gelu_fwd, {.n = GPT_ROWS * 512}, {0}},
    {"gpt.gelu.bwd", SB_OP_gelu_bwd, {.n = GPT_ROWS * 512}, {0}},
    {"gpt.residual", SB_OP_residual_add, {.n = GPT_ROWS * 128}, {0}},
    {"gpt.grad_norm", SB_OP_grad_norm, {.n = GPT_PARAMS}, {0}},
    {"gpt.adamw", SB_OP_adamw_update, {.n = GPT_PARAMS}, {0}},
};
#define N_CASES (sizeof cases / sizeof cases[0])

enum { IMPL_DET, IMPL_LOOSE, IMPL_BLAS, N_IMPL };   /* det and loose first: batch_cost */
static const char *const impl_names[N_IMPL] = {"det", "loose", "openblas"};
static const int thread_counts[] = {1, 2};
#define N_THREADS (sizeof thread_counts / sizeof thread_counts[0])

static float *uniform_new(size_t n, uint64_t seed)
{
    /* on a cache line, as the model's tensors are (cnn.c) */
    float *x = sb_floats_try(n);
    if (!x) {
        fprintf(stderr, "bench: out of memory\n");
        exit(EXIT_FAILURE);
    }
    uint64_t st = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        x[i] = (float)(st >> 40) * 0x1p-23f - 1.0f;
    }
    return x;
}

/* a tensor of the call: floats in [-1, 1), labels (int32) in [0, labels) */
static void *tensor_new(const sb_tensor *t, int labels, uint64_t seed)
{
    size_t n = sb_tensor_count(t);
    float *x = uniform_new(n, seed);
    if (t->dtype == SB_DTYPE_I32)
        for (size_t i = 0; i < n; i++) { /* int32 in the float's slot, both 4 bytes */
            int32_t label = (int32_t)((x[i] + 1.0f) * 0.5f * (float)labels) % labels;
            memcpy(&x[i], &label, sizeof label);
        }
    return x;
}

typedef struct bench_state {
    sb_op_call call;
    float *a, *b, *c;   /* the equivalent GEMM's operands */
} bench_state;

static void state_new(bench_state *st, const bench_case *bc)
{
    memset(st, 0, sizeof *st);
    st->call = bc->shape;
    st->call.op = bc->op;
    sb_optimizer o = sb_params_optimizer(sb_op_params_of(bc->op));
    if (o != SB_OPTIM_COUNT) {
        sb_optim_defaults(&st->call.optim, o);
        st->call.t = 1;
    }
    if (sb_op_call_describe(&st->call) != SB_OK) {
        fprintf(stderr, "bench: bad shape for %s\n", bc->name);
        exit(EXIT_FAILURE);
    }
    for (int i = 0; i < st->call.n_in; i++)
        st->call.in[i].data = tensor_new(&st->call.in[i], sb_op_call_label_range(&st->call),
                                         (uint64_t)i + 1);
    for (int i = 0; i < st->call.n_out; i++)
        st->call.out[i].data = tensor_new(&st->call.out[i], 0, (uint64_t)i + 9);
    const bench_gemm *g = &bc->gemm;
    st->a = uniform_new((size_t)g->m * g->k, 11);
    st->b = uniform_new((size_t)g->k * g->n, 12);
    st->c = uniform_new((size_t)g->m * g->n, 13);
}

static void state_free(bench_state *st)
{
    for (int i = 0; i < st->call.n_in; i++)
        free(st->call.in[i].data);
    for (int i = 0; i < st->call.n_out; i++)
        free(st->call.out[i].data);
    free(st->a), free(st->b), free(st->c);
}

static void run_once(const bench_state *st, const bench_gemm *g, int impl)
{
    if (impl == IMPL_BLAS) {
        cblas_sgemm(CblasRowMajor, g->a_trans ? CblasTrans : CblasNoTrans,
                    g->b_trans ? CblasTrans : CblasNoTrans, g->m, g->n, g->k, 1.0f, st->a,
                    g->a_trans ? g->m : g->k, st->b, g->b_trans ? g->k : g->n, 0.0f, st->c,
                    g->n);
        return;
    }
    sb_op_call_run(sb_kernels(impl == IMPL_DET ? SB_FAMILY_DET : SB_FAMILY_LOOSE), &st->call);
}

/* --clock cpu (bench_clock) */
static bool cpu_clock;

/* OpenBLAS's worker threads spin for 2^28 cycles (its default thread
 * timeout, about 0.13 s here) after a call before they sleep: a core taken
 * from the next measurement, and CPU time charged to it under --clock cpu. */
#define OPENBLAS_SPIN_SECONDS 0.15

/* The implementation measured turn-th of n in round r: every order in turn
 * over the rounds (rotations, reversed in odd rounds), so that none always
 * goes first or always follows the same one (a measurement finds the caches
 * and the idle threads as the one before it left them: for conv1.fwd, where
 * det and loose run the same code, a fixed order put det/loose at 0.89). */
static int impl_in_turn(int turn, int r, int n)
{
    return r % 2 == 0 ? (r / 2 + turn) % n : (r / 2 + n - 1 - turn) % n;
}

/* What one call of a measurement runs. */
typedef struct bench_call {
    const bench_state *st;
    const bench_gemm *g;
    int impl;
    bench_onednn *dnnl;     /* not NULL: this oneDNN primitive, not impl */
} bench_call;

/* seconds per call: one warm-up call, then calls until min_time has passed */
static double time_calls(const bench_call *c, int threads, double min_time)
{
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    int calls = -1;
    double t0 = 0.0, t = 0.0;
    do {
        if (c->dnnl)
            bench_onednn_run(c->dnnl);
        else
            run_once(c->st, c->g, c->impl);
        if (++calls == 0)
            t0 = bench_clock(cpu_clock, threads);
        else
            t = bench_clock(cpu_clock, threads) - t0;
    } while (calls == 0 || t < min_time);
    return t / calls;
}

static double time_per_call(const bench_state *st, const bench_gemm *g, int impl, int threads,
                            double min_time)
{
    double s = time_calls(&(bench_call){st, g, impl, NULL}, threads, min_time);
    if (impl == IMPL_BLAS && threads > 1) {
        struct timespec settle = {0, (long)(OPENBLAS_SPIN_SECONDS * 1e9)};
        nanosleep(&settle, NULL);
    }
    return s;
}

/* Max relative error of the op's output against its double-precision
 * evaluation (sb_refd.h) over the elements with |value| >= 2^-10 max|value|
 * (relative error near a cancellation to 0 says nothing about the kernel). */
static double max_rel_error(const bench_state *st, sb_family f, int threads)
{
    size_t n = sb_tensor_count(&st->call.out[0]);
    double *v = malloc(n * sizeof *v), *bound = malloc(n * sizeof *bound);
    if (!v || !bound) {
        fprintf(stderr, "bench: out of memory\n");
        exit(EXIT_FAILURE);
    }
    omp_set_num_threads(threads);
    sb_op_call_run(sb_kernels(f), &st->call);
    sb_refd_eval(v, bound, &st->call, 0, f);
    const float *out = st->call.out[0].data;
    double vmax = 0.0, rel = 0.0;
    for (size_t i = 0; i < n; i++)
        vmax = fabs(v[i]) > vmax ? fabs(v[i]) : vmax;
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i]) >= vmax * 0x1p-10) {
            double e = fabs((double)out[i] - v[i]) / fabs(v[i]);
            rel = e > rel ? e : rel;
        }
    free(v);
    free(bound);
    return rel;
}

static void json_spread(FILE *json, const char *key, spread s)
{
    fprintf(json, ", \"%s\": %.3f, \"%s_min\": %.3f, \"%s_max\": %.3f", key, s.median, key,
            s.min, key, s.max);
}

/* the rounds of one measurement: seconds[case][threads][impl][round] */
static const double *sec_of(const double *sec, size_t c, size_t t, int impl, int rounds)
{
    return sec + ((c * N_THREADS + t) * N_IMPL + (size_t)impl) * (size_t)rounds;
}

static bool has_gemm(const bench_case *bc)
{
    return bc->gemm.m > 0;
}

/* the case named name, or N_CASES */
static size_t case_index(const char *name)
{
    size_t c = 0;
    while (c < N_CASES && strcmp(cases[c].name, name) != 0)
        c++;
    return c;
}

/* ---- --batch: what batch invariance costs -----------------------------------------
 * The ops with a per-sample output at batch sizes 1, 16 and 128: det's speed
 * over loose's. det keeps one summation order per sample at every batch
 * size; loose runs a batch of a few rows serially and splits K over the
 * threads above that (sb_gemm.h), so its order follows the batch. */
static const char *const batch_ops[] = {"conv1.fwd", "conv2.fwd", "conv2.bwd_data",
                                        "dense1.fwd", "dense1.bwd_data", "dense2.fwd",
                                        "dense2.bwd_data"};
static const int batch_sizes[] = {1, 16, 128};

static void batch_cost(int rounds, double min_time)
{
    printf("\nthe cost of batch invariance: det's speed over loose's (loose time / det time, "
           "median of %d rounds [smallest largest]) by batch size\n", rounds);
    printf("%-18s %5s %3s %12s %12s %20s\n", "op", "batch", "thr", "det us", "loose us",
           "det/loose");
    for (size_t o = 0; o < sizeof batch_ops / sizeof batch_ops[0]; o++)
        for (size_t b = 0; b < sizeof batch_sizes / sizeof batch_sizes[0]; b++) {
            bench_case bc = cases[case_index(batch_ops[o])];
            bc.shape.conv.n = bc.shape.dense.n = batch_sizes[b];
            bench_state st;
            state_new(&st, &bc);
            for (size_t t = 0; t < N_THREADS; t++) {
                double det[MAX_ROUNDS], loose[MAX_ROUNDS];
                for (int r = 0; r < rounds; r++)
                    for (int turn = 0; turn < 2; turn++) {
                        int impl = impl_in_turn(turn, r, 2);   /* IMPL_DET or IMPL_LOOSE */
                        (impl == IMPL_DET ? det : loose)[r] =
                            time_per_call(&st, &bc.gemm, impl, thread_counts[t], min_time);
                    }
                printf("%-18s %5d %3d %12.1f %12.1f", bc.name, batch_sizes[b], thread_counts[t],
                       median_of(det, rounds) * 1e6, median_of(loose, rounds) * 1e6);
                print_spread(ratio_spread(loose, det, rounds));
                printf("\n");
            }
            state_free(&st);
        }
}

/* ---- --onednn: the convolutions against oneDNN's ---------------------------------
 * det's convolutions at the seed model's batch-128 shapes against oneDNN's
 * convolution primitives (what PyTorch and most CPU frameworks run), in the
 * formats oneDNN chooses (inputs already in them) and in plain NCHW / OIHW. */
static const char *const conv_ops[] = {"conv1.fwd", "conv1.bwd_filter", "conv2.fwd",
                                       "conv2.bwd_data", "conv2.bwd_filter"};
enum { CONV_OPS = sizeof conv_ops / sizeof conv_ops[0], CONV_IMPLS = 3 }; /* det, chosen, plain */
static const char *const conv_impl_names[CONV_IMPLS] = {"det", "onednn_chosen", "onednn_plain"};

static bench_conv_pass conv_pass_of(sb_op op)
{
    return op == SB_OP_conv2d_fwd ? BENCH_CONV_FWD
         : op == SB_OP_conv2d_bwd_data ? BENCH_CONV_BWD_DATA : BENCH_CONV_BWD_WEIGHTS;
}

static int onednn_anchor(int rounds, double min_time, const char *json_path)
{
    const char *version = bench_onednn_version();
    if (!version) {
        printf("no oneDNN in this build (apt-get install libdnnl-dev, then reconfigure): "
               "no convolution table against it\n");
        return EXIT_SUCCESS;
    }
    char load_before[64], load_after[64];
    bench_load_text(load_before, sizeof load_before);
    bench_state st[CONV_OPS];
    /* one primitive per thread count: oneDNN fixes a primitive's threads
     * when it is created (omp_get_max_threads() then), whatever the count at
     * its execution */
    bench_onednn *dnnl[CONV_OPS][N_THREADS][2];
    char impl[CONV_OPS][N_THREADS][2][96];
    for (int o = 0; o < CONV_OPS; o++) {
        const bench_case *bc = &cases[case_index(conv_ops[o])];
        state_new(&st[o], bc);
        for (size_t t = 0; t < N_THREADS; t++) {
            omp_set_num_threads(thread_counts[t]);
            for (int chosen = 0; chosen < 2; chosen++) {
                char *name = impl[o][t][chosen];
                dnnl[o][t][chosen] = bench_onednn_new(&st[o].call.conv, conv_pass_of(bc->op),
                                                      chosen, name, sizeof impl[o][t][chosen]);
                if (!dnnl[o][t][chosen]) {
                    fprintf(stderr, "bench: oneDNN %s: %s\n", conv_ops[o], name);
                    return EXIT_FAILURE;
                }
            }
        }
    }
    /* seconds[op][threads][impl][round], each round after its FMA peaks */
    double *sec = calloc(CONV_OPS * N_THREADS * CONV_IMPLS * (size_t)rounds, sizeof *sec);
    double peak[N_THREADS][MAX_ROUNDS];
    const char *isa = NULL;
    if (!sec)
        return EXIT_FAILURE;
#define CONV_SEC(o, t, i) (sec + (((size_t)(o) * N_THREADS + (t)) * CONV_IMPLS + (i)) * rounds)
    for (int r = 0; r < rounds; r++) {
        for (size_t t = 0; t < N_THREADS; t++)
            peak[t][r] = bench_fma_peak(thread_counts[t], cpu_clock, &isa);
        for (int o = 0; o < CONV_OPS; o++)
            for (size_t t = 0; t < N_THREADS; t++)
                for (int turn = 0; turn < CONV_IMPLS; turn++) {
                    int i = impl_in_turn(turn, r, CONV_IMPLS);
                    const bench_call c = {&st[o], NULL, IMPL_DET, i ? dnnl[o][t][i - 1] : NULL};
                    CONV_SEC(o, t, i)[r] = time_calls(&c, thread_counts[t], min_time);
                }
    }
    bench_load_text(load_after, sizeof load_after);
    FILE *json = json_path ? fopen(json_path, "w") : NULL;
    if (json_path && !json) {
        fprintf(stderr, "bench: cannot write %s\n", json_path);
        return EXIT_FAILURE;
    }
    bench_cpu cpu;
    bench_cpu_describe(&cpu);
    spread peak_of[N_THREADS];
    printf("CPU: %s; the kernels run their %s code\nload average before: %s, after: %s\n",
           cpu.model, isa, load_before, load_after);
    printf("FMA peak (%s register loop), best [slowest] of %d rounds:", isa, rounds);
    for (size_t t = 0; t < N_THREADS; t++) {
        peak_of[t] = spread_of(peak[t], rounds);
        printf(" %d thread%s %.1f [%.1f] GFLOP/s%s", thread_counts[t],
               thread_counts[t] > 1 ? "s" : "", peak_of[t].max, peak_of[t].min,
               t + 1 < N_THREADS ? "," : "\n");
    }
    printf("convolutions, batch 128: det against oneDNN %s in the formats it chooses and in "
           "plain NCHW/OIHW;\nGFLOP/s (median of %d interleaved rounds), %% of the FMA peak "
           "(%s loop, best of the rounds), ratios: median of per-round ratios [smallest "
           "largest]\n", version, rounds, isa);
    printf("%-17s %3s %6s %4s %7s %4s %7s %4s %20s %20s\n", "op", "thr", "det", "%pk", "chosen",
           "%pk", "plain", "%pk", "det/chosen", "det/plain");
    if (json)
        fprintf(json, "{\"onednn\": \"%s\", \"cpu\": \"%s\", \"kernel_isa\": \"%s\", "
                      "\"load_before\": \"%s\", \"load_after\": \"%s\", \"clock\": \"%s\", "
                      "\"rounds\": %d, \"results\": [\n",
                version, cpu.model, isa, load_before, load_after, cpu_clock ? "cpu" : "wall",
                rounds);
    const char *sep = "";
    for (int o = 0; o < CONV_OPS; o++)
        for (size_t t = 0; t < N_THREADS; t++) {
            const bench_gemm *g = &cases[case_index(conv_ops[o])].gemm;
            const double flops = 2.0 * g->m * g->n * g->k, pk = peak_of[t].max;
            double gf[CONV_IMPLS];
            printf("%-17s %3d", conv_ops[o], thread_counts[t]);
            for (int i = 0; i < CONV_IMPLS; i++) {
                gf[i] = flops / median_of(CONV_SEC(o, t, i), rounds) * 1e-9;
                printf(" %*.1f %3.0f%%", i ? 7 : 6, gf[i], 100.0 * gf[i] / pk);
            }
            spread vs[2] = {ratio_spread(CONV_SEC(o, t, 1), CONV_SEC(o, t, 0), rounds),
                            ratio_spread(CONV_SEC(o, t, 2), CONV_SEC(o, t, 0), rounds)};
            print_spread(vs[0]);
            print_spread(vs[1]);
            printf("\n");
            if (json) {
                fprintf(json, "%s  {\"op\": \"%s\", \"threads\": %d, \"fma_peak\": %.2f, "
                              "\"fma_peak_slowest\": %.2f",
                        sep, conv_ops[o], thread_counts[t], pk, peak_of[t].min);
                for (int i = 0; i < CONV_IMPLS; i++)
                    fprintf(json, ", \"%s_gflops\": %.2f", conv_impl_names[i], gf[i]);
                json_spread(json, "det_vs_chosen", vs[0]);
                json_spread(json, "det_vs_plain", vs[1]);
                fprintf(json, ", \"impl_chosen\": \"%s\", \"impl_plain\": \"%s\"}",
                        impl[o][t][1], impl[o][t][0]);
                sep = ",\n";
            }
        }
#undef CONV_SEC
    printf("oneDNN's implementations (chosen / plain):\n");
    for (int o = 0; o < CONV_OPS; o++)
        for (size_t t = 0; t < N_THREADS; t++)
            printf("  %-17s %d thread%s  %s / %s\n", conv_ops[o], thread_counts[t],
                   thread_counts[t] > 1 ? "s" : " ", impl[o][t][1], impl[o][t][0]);
    if (json) {
        fprintf(json, "\n]}\n");
        fclose(json);
    }
    for (int o = 0; o < CONV_OPS; o++) {
        state_free(&st[o]);
        for (size_t t = 0; t < N_THREADS; t++) {
            bench_onednn_free(dnnl[o][t][0]);
            bench_onednn_free(dnnl[o][t][1]);
        }
    }
    free(sec);
    return EXIT_SUCCESS;
}

static void usage(void)
{
    fprintf(stderr, "usage: samebits-bench-kernels [--rounds N] [--min-time SECONDS] "
                    "[--clock wall|cpu] [--op NAME]... [--json FILE] [--batch | --onednn]\n");
}

int main(int argc, char **argv)
{
    bench_openblas_choose_core(argv);
    int rounds = 5;
    double min_time = 0.05;
    const char *json_path = NULL;
    bool selected[N_CASES] = {false}, any_selected = false, batch = false, onednn = false;
    for (int i = 1; i < argc; i++) {
        if (bench_round_option(argc, argv, &i, &rounds, &min_time, &cpu_clock))
            continue;
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json_path = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0)
            batch = true;
        else if (strcmp(argv[i], "--onednn") == 0)
            onednn = true;
        else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            size_t c = case_index(argv[++i]);
            if (c == N_CASES) {
                fprintf(stderr, "bench: unknown op '%s' (the ops are the table's rows)\n",
                        argv[i]);
                return EXIT_FAILURE;
            }
            selected[c] = any_selected = true;
        } else {
            usage();
            return EXIT_FAILURE;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || !(min_time > 0.0)) {
        usage();
        return EXIT_FAILURE;
    }
    if (batch) {
        batch_cost(rounds, min_time);
        return EXIT_SUCCESS;
    }
    if (onednn)
        return onednn_anchor(rounds, min_time, json_path);
    bench_cpu cpu;
    bench_cpu_describe(&cpu);
    char core[256];
    bench_openblas_core_text(core, sizeof core);
    const char *isa = NULL;

    /* seconds[case][threads][impl][round]; the FMA peak, peak[threads][round],
     * and the GEMM tile's, tile[threads][round], of a tile of tile_shape */
    double *sec = calloc(N_CASES * N_THREADS * N_IMPL * (size_t)rounds, sizeof(double));
    double peak[N_THREADS][MAX_ROUNDS], tile[N_THREADS][MAX_ROUNDS];
    bench_tile tile_shape = {0, 0, 0};
    bench_state *st = calloc(N_CASES, sizeof *st);
    if (!sec || !st)
        return EXIT_FAILURE;
    if (!any_selected)
        for (size_t c = 0; c < N_CASES; c++)
            selected[c] = true;
    for (size_t c = 0; c < N_CASES; c++)
        if (selected[c])
            state_new(&st[c], &cases[c]);
    for (int r = 0; r < rounds; r++) {
        for (size_t t = 0; t < N_THREADS; t++) {
            peak[t][r] = bench_fma_peak(thread_counts[t], cpu_clock, &isa);
            tile[t][r] = bench_tile_peak(thread_counts[t], cpu_clock, &tile_shape);
        }
        for (size_t c = 0; c < N_CASES; c++) {
            if (!selected[c])
                continue;
            int n_impl = has_gemm(&cases[c]) ? N_IMPL : IMPL_BLAS;
            for (size_t t = 0; t < N_THREADS; t++)
                for (int turn = 0; turn < n_impl; turn++) {
                    int impl = impl_in_turn(turn, r, n_impl);
                    sec[((c * N_THREADS + t) * N_IMPL + (size_t)impl) * (size_t)rounds + (size_t)r] =
                        time_per_call(&st[c], &cases[c].gemm, impl, thread_counts[t], min_time);
                }
        }
    }
    /* a peak is the best the loop reached: a round that ran slower was
     * sharing the machine */
    spread peak_of[N_THREADS], tile_of[N_THREADS];
    for (size_t t = 0; t < N_THREADS; t++) {
        peak_of[t] = spread_of(peak[t], rounds);
        tile_of[t] = spread_of(tile[t], rounds);
    }

    FILE *json = json_path ? fopen(json_path, "w") : NULL;
    if (json_path && !json) {
        fprintf(stderr, "bench: cannot write %s\n", json_path);
        return EXIT_FAILURE;
    }
    printf("CPU: %s; AVX-512 (F BW DQ VL): %s, AVX2+FMA: %s; the kernels run their %s code\n",
           cpu.model, cpu.avx512 ? "yes" : "no", cpu.avx2_fma ? "yes" : "no", isa);
    printf("OpenBLAS core: %s\n", core);
    printf("FMA peak (%s register loop), best [slowest] of %d rounds:", isa, rounds);
    for (size_t t = 0; t < N_THREADS; t++)
        printf(" %d thread%s %.1f [%.1f] GFLOP/s%s", thread_counts[t],
               thread_counts[t] > 1 ? "s" : "", peak_of[t].max, peak_of[t].min,
               t + 1 < N_THREADS ? "," : "\n");
    printf("GEMM tile (%d x %d over %d steps, panels in cache), best [slowest]:",
           tile_shape.rows, tile_shape.cols, tile_shape.steps);
    for (size_t t = 0; t < N_THREADS; t++)
        printf(" %d thread%s %.1f [%.1f] GFLOP/s (%.0f%% of the peak)%s", thread_counts[t],
               thread_counts[t] > 1 ? "s" : "", tile_of[t].max, tile_of[t].min,
               100.0 * tile_of[t].max / peak_of[t].max, t + 1 < N_THREADS ? "," : "\n");
    if (json) {
        fprintf(json, "{\n  \"cpu\": {\"model\": \"%s\", \"avx512\": %s, \"avx2_fma\": %s, "
                      "\"kernel_isa\": \"%s\"},\n",
                cpu.model, cpu.avx512 ? "true" : "false", cpu.avx2_fma ? "true" : "false", isa);
        fprintf(json, "  \"openblas_core\": \"%s\",\n  \"openblas_core_chosen\": \"%s\",\n",
                openblas_get_corename(), core);
        fprintf(json, "  \"fma_peak_gflops\": [");
        for (size_t t = 0; t < N_THREADS; t++)
            fprintf(json, "%s{\"threads\": %d, \"best\": %.2f, \"slowest\": %.2f}",
                    t ? ", " : "", thread_counts[t], peak_of[t].max, peak_of[t].min);
        fprintf(json, "],\n  \"tile_gflops\": [");
        for (size_t t = 0; t < N_THREADS; t++)
            fprintf(json, "%s{\"threads\": %d, \"rows\": %d, \"best\": %.2f, "
                          "\"slowest\": %.2f}",
                    t ? ", " : "", thread_counts[t], tile_shape.rows, tile_of[t].max,
                    tile_of[t].min);
        fprintf(json, "],\n  \"rounds\": %d,\n  \"min_time_s\": %g,\n  \"results\": [\n",
                rounds, min_time);
    }
    printf("\nGFLOP/s of the equivalent GEMM (median of %d interleaved rounds) and its %% of "
           "the peak;\nratios: median of per-round ratios [smallest largest]\n", rounds);
    printf("%-22s %-16s %3s %6s %4s %6s %4s %6s %4s %20s %20s\n", "op", "gemm m x n x k", "thr",
           "det", "%pk", "loose", "%pk", "blas", "%pk", "det/openblas", "det/loose");
    const char *sep = "";   /* between JSON array elements */
    for (size_t c = 0; c < N_CASES; c++)
        for (size_t t = 0; t < N_THREADS && selected[c] && has_gemm(&cases[c]); t++) {
            const bench_gemm *g = &cases[c].gemm;
            double flops = 2.0 * g->m * g->n * g->k, gf[N_IMPL];
            const double *s_det = sec_of(sec, c, t, IMPL_DET, rounds),
                         *s_loose = sec_of(sec, c, t, IMPL_LOOSE, rounds),
                         *s_blas = sec_of(sec, c, t, IMPL_BLAS, rounds);
            spread vs_blas = ratio_spread(s_blas, s_det, rounds);
            spread vs_loose = ratio_spread(s_loose, s_det, rounds);
            for (int impl = 0; impl < N_IMPL; impl++)
                gf[impl] = flops / median_of(sec_of(sec, c, t, impl, rounds), rounds) * 1e-9;
            char dims[32];
            snprintf(dims, sizeof dims, "%dx%dx%d", g->m, g->n, g->k);
            printf("%-22s %-16s %3d", cases[c].name, dims, thread_counts[t]);
            for (int impl = 0; impl < N_IMPL; impl++)
                printf(" %6.1f %3.0f%%", gf[impl], 100.0 * gf[impl] / peak_of[t].max);
            print_spread(vs_blas);
            print_spread(vs_loose);
            printf("\n");
            if (json) {
                fprintf(json, "%s    {\"op\": \"%s\", \"kernel\": \"%s\", \"gemm\": [%d, %d, %d], "
                              "\"threads\": %d, \"gflops\": {",
                        sep, cases[c].name, sb_op_name(cases[c].op), g->m, g->n, g->k,
                        thread_counts[t]);
                for (int impl = 0; impl < N_IMPL; impl++)
                    fprintf(json, "%s\"%s\": %.2f", impl ? ", " : "", impl_names[impl], gf[impl]);
                fprintf(json, "}, \"fraction_of_peak\": {");
                for (int impl = 0; impl < N_IMPL; impl++)
                    fprintf(json, "%s\"%s\": %.3f", impl ? ", " : "", impl_names[impl],
                            gf[impl] / peak_of[t].max);
                fprintf(json, "}");
                json_spread(json, "det_vs_openblas", vs_blas);
                json_spread(json, "det_vs_loose", vs_loose);
                fprintf(json, "}");
            }
            sep = ",\n";
        }
    printf("\nops with no equivalent GEMM: microseconds per call (median of %d rounds)\n",
           rounds);
    printf("%-22s %3s %10s %10s %20s\n", "op", "thr", "det us", "loose us", "det/loose");
    for (size_t c = 0; c < N_CASES; c++)
        for (size_t t = 0; t < N_THREADS && selected[c] && !has_gemm(&cases[c]); t++) {
            const double *s_det = sec_of(sec, c, t, IMPL_DET, rounds),
                         *s_loose = sec_of(sec, c, t, IMPL_LOOSE, rounds);
            double us_det = median_of(s_det, rounds) * 1e6,
                   us_loose = median_of(s_loose, rounds) * 1e6;
            spread vs_loose = ratio_spread(s_loose, s_det, rounds);
            printf("%-22s %3d %10.1f %10.1f", cases[c].name, thread_counts[t], us_det, us_loose);
            print_spread(vs_loose);
            printf("\n");
            if (json) {
                fprintf(json, "%s    {\"op\": \"%s\", \"kernel\": \"%s\", \"threads\": %d, "
                              "\"us_per_call\": {\"det\": %.2f, \"loose\": %.2f}",
                        sep, cases[c].name, sb_op_name(cases[c].op), thread_counts[t], us_det,
                        us_loose);
                json_spread(json, "det_vs_loose", vs_loose);
                fprintf(json, "}");
            }
            sep = ",\n";
        }
    /* accuracy of the long reductions: K = 9216 (dense1.fwd), K = n*p*q
     * (the bwd_filter ops); loose at 2 threads, where it splits K */
    static const char *const accuracy_cases[] = {"dense1.fwd", "conv1.bwd_filter",
                                                 "conv2.bwd_filter", "dense1.bwd_weights"};
    printf("\nmax relative error against a double-precision evaluation (|value| >= 2^-10 max)\n");
    printf("%-20s %12s %12s\n", "op", "det", "loose(2)");
    if (json)
        fprintf(json, "\n  ],\n  \"accuracy\": [\n");
    sep = "";
    for (size_t a = 0; a < sizeof accuracy_cases / sizeof accuracy_cases[0]; a++)
        for (size_t c = 0; c < N_CASES; c++) {
            if (!selected[c] || strcmp(cases[c].name, accuracy_cases[a]) != 0)
                continue;
            double det = max_rel_error(&st[c], SB_FAMILY_DET, 2);
            double loose = max_rel_error(&st[c], SB_FAMILY_LOOSE, 2);
            printf("%-20s %12.3g %12.3g\n", cases[c].name, det, loose);
            if (json)
                fprintf(json, "%s    {\"op\": \"%s\", \"max_rel_error\": {\"det\": %.3g, "
                              "\"loose_2_threads\": %.3g}}",
                        sep, cases[c].name, det, loose);
            sep = ",\n";
        }
    if (json) {
        fprintf(json, "\n  ]\n}\n");
        fclose(json);
    }
    for (size_t c = 0; c < N_CASES; c++)
        if (selected[c])
            state_free(&st[c]);
    free(st);
    free(sec);
    return EXIT_SUCCESS;
}
