/* The numerics mode: the double evaluations and bounds (kernels/sb_refd.h), the
 * probe judge, the numerics mutants and their cases, and a test-only
 * variance kernel (no op in the kernel list computes a variance). */
#include <check.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "numerics/numerics.h"
#include "sb_refd.h"
#include "sb_rng.h"

Suite *make_numerics_suite(void);

/* A kernel case built in memory: op and shape, inputs from the RNG. */
static sb_case kernel_case(sb_op_call call, sb_family f, uint64_t seed)
{
    sb_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.path, sizeof c.path, "(test)");
    snprintf(c.name, sizeof c.name, "%s", sb_op_name(call.op));
    c.kind = SB_CASE_KERNEL;
    c.family = f;
    c.call = call;
    c.seed = seed;
    c.reference_threads = 1;
    return c;
}

static void run_case(const sb_case *c, const sb_numerics_case *nc, sb_numerics_result *r, int threads)
{
    sb_numerics_golden g;
    char err[256] = "";
    sb_status st = sb_numerics_run_case(c, nc, c->family, threads, NULL, r, &g, err, sizeof err);
    ck_assert_msg(st == SB_OK, "%s", err);
    ck_assert(!g.compared);     /* no golden for an in-memory case */
}

/* Integer-valued inputs: every product and sum is exact in float and double,
 * so the double value is the integer itself. */
START_TEST(test_refd_dense_exact)
{
    float x[2 * 3] = {1, 2, 3, -4, 5, -6};
    float w[3 * 2] = {1, -1, 2, 0, -3, 4};
    float b[2] = {10, -10};
    sb_op_call c = {.op = SB_OP_dense_fwd, .dense = {.n = 2, .in = 3, .out = 2}};
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    c.in[0].data = x, c.in[1].data = w, c.in[2].data = b;
    double value[4], bound[4];
    sb_refd_eval(value, bound, &c, 0, SB_FAMILY_REF);
    /* row 0: 10 + 1 + 4 - 9 = 6, -10 - 1 + 0 + 12 = 1; row 1: 10 - 4 + 10 + 18 = 34,
     * -10 + 4 + 0 - 24 = -30 */
    const double expect[4] = {6, 1, 34, -30};
    for (int i = 0; i < 4; i++) {
        ck_assert(!(value[i] < expect[i]) && !(value[i] > expect[i]));
        ck_assert(bound[i] > 0.0 && bound[i] < 1e-4);
    }
}
END_TEST

/* The shapes every evaluated op of a params group runs at: a long sum in
 * each direction an op of the group reduces over. */
static const sb_op_call conv_shapes[] = {
    {.conv = {.n = 2, .c = 3, .h = 7, .w = 6, .k = 4, .r = 3, .s = 3, .stride = 1, .pad = 1}},
    {.conv = {.n = 2, .c = 3, .h = 7, .w = 6, .k = 4, .r = 3, .s = 3, .stride = 2, .pad = 0}},
    {.conv = {.n = 3, .c = 2, .h = 6, .w = 6, .k = 4, .r = 3, .s = 3, .stride = 1, .pad = 0}},
    {.conv = {.n = 3, .c = 2, .h = 20, .w = 20, .k = 4, .r = 3, .s = 3, .stride = 1, .pad = 0}},
};
static const sb_op_call dense_shapes[] = {
    {.dense = {.n = 5, .in = 300, .out = 7}}, {.dense = {.n = 5, .in = 30, .out = 7}},
    {.dense = {.n = 300, .in = 6, .out = 7}}, {.dense = {.n = 600, .in = 6, .out = 7}},
};
static const sb_op_call pool_shapes[] = {{.pool = {.n = 2, .c = 3, .h = 7, .w = 6}}};
static const sb_op_call cls_shapes[] = {{.cls = {.n = 50, .k = 10}}};
static const sb_op_call clsd_shapes[] = {{.cls = {.n = 50, .k = 10}},
                                          {.cls = {.n = 6, .k = 300, .d = 7}}};
static const sb_op_call count_shapes[] = {{.n = 1000}, {.n = 100003}};
static const sb_op_call embed_shapes[] = {
    {.embed = {.n = 40, .t = 8, .vocab = 11, .c = 9}},
    {.embed = {.n = 300, .t = 8, .vocab = 3, .c = 9}},
    {.embed = {.n = 600, .t = 2, .vocab = 3, .c = 9}},
};
static const sb_op_call norm_shapes[] = {
    {.norm = {.n = 20, .c = 70, .eps = 1e-5f}}, {.norm = {.n = 300, .c = 7, .eps = 1e-5f}},
};
static const sb_op_call attn_shapes[] = {
    {.attn = {.b = 2, .t = 37, .h = 2, .d = 8}},
    {.attn = {.b = 2, .t = 37, .h = 4, .d = 8, .kv_heads = 2}},
    {.attn = {.b = 1, .t = 37, .h = 4, .d = 8, .kv_heads = 1, .noncausal = true}}};
static const sb_op_call rope_shapes[] = {{.rope = {.n = 70, .t = 33, .h = 3, .d = 16, .base = 1e4f}}};
static const sb_op_call reduce_shapes[] = {
    {.reduce = {.outer = 3, .r = 1000, .inner = 5}}, {.reduce = {.outer = 1, .r = 100003, .inner = 1}},
};
static const sb_op_call window_shapes[] = {
    {.window = {.n = 2, .c = 3, .h = 11, .w = 9, .kh = 3, .kw = 2, .sh = 2, .sw = 1}},
    {.window = {.n = 1, .c = 2, .h = 20, .w = 20, .kh = 7, .kw = 7, .sh = 3, .sw = 3}},
};
static const sb_op_call nll_shapes[] = {
    {.nll = {.n = 300, .k = 10, .d = 1, .ignore_index = -100}},
    {.nll = {.n = 40, .k = 7, .d = 9, .ignore_index = 2, .weighted = true}},
};

typedef struct shape_set {
    const sb_op_call *calls;
    size_t n;
} shape_set;
#define SHAPES(a) {a, sizeof a / sizeof a[0]}
static const shape_set shapes_of_params[SB_PARAMS_COUNT] = {
    [SB_PARAMS_conv] = SHAPES(conv_shapes),   [SB_PARAMS_dense] = SHAPES(dense_shapes),
    [SB_PARAMS_pool] = SHAPES(pool_shapes),   [SB_PARAMS_cls] = SHAPES(cls_shapes),
    [SB_PARAMS_count] = SHAPES(count_shapes), [SB_PARAMS_embed] = SHAPES(embed_shapes),
    [SB_PARAMS_norm] = SHAPES(norm_shapes),   [SB_PARAMS_attn] = SHAPES(attn_shapes),
    [SB_PARAMS_rope] = SHAPES(rope_shapes),   [SB_PARAMS_nll] = SHAPES(nll_shapes),
    [SB_PARAMS_reduce] = SHAPES(reduce_shapes), [SB_PARAMS_window] = SHAPES(window_shapes),
    [SB_PARAMS_clsd] = SHAPES(clsd_shapes),
};

/* Every op the kernel list marks REFD. */
static const sb_op evaluated_ops[] = {
#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, refd, ...)        \
    SB_IF_##refd(SB_OP_##name,)
#include "kernels.def"
#undef SB_OP
};

/* op at every shape of its params group, in family f: within bound and finite. */
static void expect_within_bound(sb_op op, sb_family f)
{
    const shape_set *set = &shapes_of_params[sb_op_params_of(op)];
    ck_assert_msg(set->n > 0, "%s: no test shape for its params group", sb_op_name(op));
    const sb_numerics_case nc = {.expect = SB_FINDING_CLEAN};
    for (size_t i = 0; i < set->n; i++) {
        sb_op_call call = set->calls[i];
        call.op = op;
        sb_case c = kernel_case(call, f, 7 + i);
        sb_numerics_result r;
        run_case(&c, &nc, &r, 2);
        ck_assert_int_eq(r.n_probes, 1);
        ck_assert_msg(r.n_beyond == 0, "%s %s shape %zu: ratio %g", sb_family_name(f),
                      sb_op_name(op), i, r.probes[0].ratio);
        ck_assert(!r.nonfinite.found);
        sb_numerics_result_free(&r);
    }
}

/* Every evaluated op, in every family, on inputs in [-1, 1): within bound and
 * finite. The bounds are worst cases of the float algorithms, so a ratio
 * above 1 here is a kernel or a bound that is wrong. */
START_TEST(test_every_op_within_bound)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (size_t o = 0; o < sizeof evaluated_ops / sizeof evaluated_ops[0]; o++)
            expect_within_bound(evaluated_ops[o], (sb_family)f);
}
END_TEST

/* An int32 index output (max pooling's argmax) is judged exactly: its
 * double values with bound 0, any other index beyond bound (ratio inf),
 * the distance in indices its max_abs and max_ulp. */
/* a == b for doubles that hold small integers, exact, without == (which
 * -Wfloat-equal refuses) */
static bool same_integer(double a, double b)
{
    return !(a < b) && !(a > b);
}

START_TEST(test_index_probe)
{
    int32_t got[3] = {4, 9, 17};
    sb_tensor t = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {3}, .data = got};
    const sb_probe_point p = {.name = "maxpool_window_indices.out0",
                              .op = "maxpool_window_indices", .tensor = &t};
    const double bound[3] = {0, 0, 0};
    const double same[3] = {4, 9, 17}, off[3] = {4, 11, 17};
    sb_numerics_result r;
    sb_numerics_result_init(&r, SB_FAMILY_DET);
    ck_assert_int_eq(sb_numerics_check(&r, &p, same, bound, NULL, NULL), SB_OK);
    ck_assert_int_eq(sb_numerics_check(&r, &p, off, bound, NULL, NULL), SB_OK);
    ck_assert_int_eq(r.n_probes, 2);
    ck_assert(!(r.probes[0].ratio > 0.0) && !(r.probes[0].max_abs > 0.0));
    ck_assert(isinf(r.probes[1].ratio));
    ck_assert(same_integer(r.probes[1].max_abs, 2.0));
    ck_assert(same_integer(r.probes[1].max_ulp, 2.0));
    ck_assert_int_eq(r.probes[1].worst, 1);
    ck_assert(same_integer(r.probes[1].got, 9.0));
    ck_assert(same_integer(r.probes[1].expect, 11.0));
    ck_assert_int_eq(r.n_beyond, 1);
    ck_assert(!r.nonfinite.found);
    ck_assert_int_eq(sb_numerics_finding_of(&r), SB_FINDING_BEYOND_BOUND);
    sb_numerics_result_free(&r);
}
END_TEST

/* Optimiser updates and masks are not evaluated; they are counted as such. */
START_TEST(test_updates_not_evaluated)
{
    sb_op_call call = {.op = SB_OP_adadelta_update, .n = 100};
    sb_optim_defaults(&call.optim, SB_OPTIM_ADADELTA);
    sb_case c = kernel_case(call, SB_FAMILY_DET, 3);
    const sb_numerics_case nc = {.expect = SB_FINDING_CLEAN};
    sb_numerics_result r;
    run_case(&c, &nc, &r, 1);
    ck_assert_int_eq(r.n_probes, 0);
    ck_assert_int_eq(r.n_unchecked, 4 + 3);    /* gradient and 3 state sources, 3 outputs */
    sb_numerics_result_free(&r);
}
END_TEST

/* Each numerics case in cases/ gives the finding it states, at the probe it
 * names; the first non-finite value names its op and describes its inputs. */
START_TEST(test_numerics_cases)
{
    static const char *const paths[] = {
        "cases/numerics_softmax_nomax.case", "cases/numerics_softmax_large_logits.case",
        "cases/numerics_xent_log_of_softmax.case", "cases/numerics_xent_unguarded.case",
        "cases/numerics_xent_wide_logits.case", "cases/numerics_bias_long_sum.case",
        "cases/numerics_bias_long_sum_det.case",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        sb_case c;
        sb_numerics_case nc;
        char err[512];
        ck_assert_msg(sb_case_load(&c, paths[i], err, sizeof err) == SB_OK, "%s", err);
        ck_assert_msg(sb_numerics_case_load(&nc, &c, err, sizeof err) == SB_OK, "%s", err);
        sb_numerics_result r;
        run_case(&c, &nc, &r, 1);
        ck_assert_msg(sb_numerics_finding_of(&r) == nc.expect, "%s: %s", paths[i],
                      sb_numerics_finding_name(sb_numerics_finding_of(&r)));
        if (nc.expect_probe[0])
            ck_assert_str_eq(sb_numerics_finding_probe(&r), nc.expect_probe);
        if (nc.expect == SB_FINDING_NONFINITE) {
            ck_assert_str_eq(r.nonfinite.op, sb_op_name(c.call.op));
            ck_assert(r.nonfinite.have_expect && isfinite(r.nonfinite.expect));
            ck_assert_ptr_nonnull(strstr(r.nonfinite.inputs, "row "));
        }
        if (nc.expect == SB_FINDING_BEYOND_BOUND)
            ck_assert(r.probes[r.first_beyond].ratio > 1.0 && isfinite(r.probes[r.first_beyond].ratio));
        sb_numerics_result_free(&r);
    }
}
END_TEST

/* ---- a test-only variance kernel ---------------------------------------------
 * var = (1/n) sum (x_i - mean)^2 over data with a large offset (1e4 plus
 * [-1, 1)). Two float algorithms:
 *   two_pass: mean by chunked sums (chunks of 256, chunk sums in order), then
 *     the chunked sum of squared deviations;
 *   naive: E[x^2] - E[x]^2, whose two terms are about 1e8 and cancel.
 * Bound of two_pass (n terms, chunk path L = 256 + n/256): the mean errs by
 *   dm <= gamma(L + 1) mean|x| (sum and division); the deviations then carry
 *   the shift: sum (x - m^)^2 = sum (x - m)^2 + n dm^2 exactly, and each
 *   deviation rounds once (u), its square once, the sum in chunks gamma(L),
 *   the division once: |var^ - var| <= dm^2 + gamma(L + 4) (var + dm^2). */
#define VAR_N 4096
#define VAR_CHUNK 256

static float chunked_sum(const float *x, size_t n)
{
    float acc = 0.0f;
    for (size_t i0 = 0; i0 < n; i0 += VAR_CHUNK) {
        float s = 0.0f;
        for (size_t i = i0; i < i0 + VAR_CHUNK && i < n; i++)
            s += x[i];
        acc += s;
    }
    return acc;
}

static float variance_two_pass(const float *x, size_t n, float *scratch)
{
    const float mean = chunked_sum(x, n) / (float)n;
    for (size_t i = 0; i < n; i++)
        scratch[i] = (x[i] - mean) * (x[i] - mean);
    return chunked_sum(scratch, n) / (float)n;
}

static float variance_naive(const float *x, size_t n)
{
    float sum = 0.0f, sum_sq = 0.0f;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        sum_sq += x[i] * x[i];
    }
    const float mean = sum / (float)n;
    return sum_sq / (float)n - mean * mean;
}

static void variance_inputs(char *buf, size_t len, const void *ctx, size_t index)
{
    (void)index;
    const float *x = ctx;
    snprintf(buf, len, "x[0..%d) = %.9g %.9g ...", VAR_N, (double)x[0], (double)x[1]);
}

static double judge_variance(float got, const float *x)
{
    const double u = 0x1p-24;
    const double L = VAR_CHUNK + VAR_N / VAR_CHUNK;
    double mean = 0.0, mean_abs = 0.0, var = 0.0;
    for (int i = 0; i < VAR_N; i++)
        mean += (double)x[i], mean_abs += fabs((double)x[i]);
    mean /= VAR_N, mean_abs /= VAR_N;
    for (int i = 0; i < VAR_N; i++)
        var += ((double)x[i] - mean) * ((double)x[i] - mean);
    var /= VAR_N;
    const double dm = sb_gamma(L + 1.0) * mean_abs * (1.0 + u);
    const double bound = dm * dm + sb_gamma(L + 4.0) * (var + dm * dm);

    sb_tensor t = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {1}, .data = &got};
    sb_probe_point p = {.name = "stats.var", .op = "variance", .tensor = &t};
    sb_numerics_result r;
    sb_numerics_result_init(&r, SB_FAMILY_DET);
    ck_assert_int_eq(sb_numerics_check(&r, &p, &var, &bound, variance_inputs, x), SB_OK);
    ck_assert_int_eq(r.n_probes, 1);
    const double ratio = r.probes[0].ratio;
    ck_assert(r.n_beyond == (ratio > 1.0 ? 1u : 0u));
    sb_numerics_result_free(&r);
    return ratio;
}

START_TEST(test_variance_offset)
{
    float *x = malloc(VAR_N * sizeof *x), *scratch = malloc(VAR_N * sizeof *scratch);
    ck_assert(x && scratch);
    sb_rng_fill_uniform(x, VAR_N, 1e4f - 1.0f, 1e4f + 1.0f, 5, SB_STREAM_CASE_INPUT, 0);
    ck_assert(judge_variance(variance_two_pass(x, VAR_N, scratch), x) <= 1.0);
    ck_assert(judge_variance(variance_naive(x, VAR_N), x) > 1.0);
    free(x);
    free(scratch);
}
END_TEST

/* [numerics] keys are checked, with the line of the bad one. */
START_TEST(test_section_errors)
{
    char path[] = "/tmp/numerics_case_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("[case]\nkind = kernel\nfamily = det\nseed = 1\n[kernel]\nop = relu_fwd\nn = 8\n"
          "[sweep]\nthreads = 1\n[numerics]\ninputs = 2..1\n", f);
    fclose(f);
    sb_case c;
    sb_numerics_case nc;
    char err[512];
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(sb_numerics_case_load(&nc, &c, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":11: expected a value range"));
    unlink(path);
}
END_TEST

Suite *make_numerics_suite(void)
{
    Suite *s = suite_create("numerics");
    TCase *tc = tcase_create("numerics");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_refd_dense_exact);
    tcase_add_test(tc, test_every_op_within_bound);
    tcase_add_test(tc, test_index_probe);
    tcase_add_test(tc, test_updates_not_evaluated);
    tcase_add_test(tc, test_numerics_cases);
    tcase_add_test(tc, test_variance_offset);
    tcase_add_test(tc, test_section_errors);
    suite_add_tcase(s, tc);
    return s;
}
