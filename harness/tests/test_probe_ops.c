/* The probe helpers of sb_probe_ops.h: op name, inputs named by the latest
 * probe of their data pointer (SB_TRACE_UNTRACED when none), the kernel
 * list's bound, an update op's parameter as its input, a bad shape refused. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "sb_harness.h"

Suite *make_probe_ops_suite(void);

enum { N = 3, IN = 4, OUT = 2, MAX_SEEN = 8 };

/* What the hook was handed: each probe's name, op, inputs and bound. */
typedef struct seen {
    int n;
    char name[MAX_SEEN][32], op[MAX_SEEN][32], inputs[MAX_SEEN][96];
    bool has_bound[MAX_SEEN], exact[MAX_SEEN];
    float bound[MAX_SEEN][N * OUT];
    int n_input_tensors[MAX_SEEN];
} seen;

static void collect(void *ctx, const sb_probe_point *p)
{
    seen *s = ctx;
    ck_assert_int_lt(s->n, MAX_SEEN);
    int i = s->n++;
    snprintf(s->name[i], sizeof s->name[i], "%s", p->name);
    snprintf(s->op[i], sizeof s->op[i], "%s", p->op);
    s->inputs[i][0] = '\0';
    for (int k = 0; k < p->n_inputs; k++) {
        size_t len = strlen(s->inputs[i]);
        snprintf(s->inputs[i] + len, sizeof s->inputs[i] - len, "%s%s", k ? "," : "",
                 p->inputs[k]);
    }
    s->has_bound[i] = p->bound != NULL;
    s->exact[i] = p->exact;
    if (p->bound && sb_tensor_count(p->tensor) <= N * OUT)
        p->bound(s->bound[i], p->bound_ctx, p->out_index);
    s->n_input_tensors[i] = p->n_input_tensors;
}

START_TEST(dense_fwd_named_and_bounded)
{
    float x[N * IN], w[IN * OUT], b[OUT], y[N * OUT], want[N * OUT];
    for (int i = 0; i < N * IN; i++)
        x[i] = (float)i - 5.5f;
    for (int i = 0; i < IN * OUT; i++)
        w[i] = 0.25f * (float)i;
    for (int i = 0; i < OUT; i++)
        b[i] = 1.0f;
    memset(y, 0, sizeof y);
    seen s = {0};
    sb_probes pc = sb_probes_begin(collect, &s);
    ck_assert_int_eq(sb_probe_source(&pc, 0, "x", sb_f32(x, N, IN)), SB_OK);
    ck_assert_int_eq(sb_probe_source(&pc, 0, "w", sb_f32(w, IN, OUT)), SB_OK);
    /* b never probed: untraced */
    const sb_dense_shape shape = {N, IN, OUT};
    ck_assert_int_eq(sb_probe_dense_fwd(&pc, 0, "fc.out", y, x, w, b, &shape), SB_OK);
    ck_assert_int_eq(sb_probes_end(&pc), SB_OK);
    ck_assert_int_eq(s.n, 3);
    ck_assert_str_eq(s.op[0], "source");
    ck_assert_str_eq(s.inputs[0], "");
    ck_assert_str_eq(s.name[2], "fc.out");
    ck_assert_str_eq(s.op[2], "dense_fwd");
    ck_assert_str_eq(s.inputs[2], "x,w," SB_TRACE_UNTRACED);
    ck_assert_int_eq(s.n_input_tensors[2], 3);
    ck_assert(s.has_bound[2]);
    sb_dense_fwd_bound(want, x, w, b, &shape);
    ck_assert_int_eq(memcmp(s.bound[2], want, sizeof want), 0);
}
END_TEST

/* A later probe of the same pointer renames it; an op without a reduction
 * has no bound; an update names the parameter's previous probe. */
START_TEST(latest_name_and_update)
{
    float g[N], w[N], h[N];
    for (int i = 0; i < N; i++)
        g[i] = w[i] = (float)i;
    seen s = {0};
    sb_probes pc = sb_probes_begin(collect, &s);
    sb_probe_source(&pc, 0, "init.w", sb_f32(w, N));
    sb_probe_source(&pc, 0, "g", sb_f32(g, N));
    ck_assert_int_eq(sb_probe_relu_fwd(&pc, 0, "h", h, g, N), SB_OK);
    ck_assert_int_eq(sb_probe_relu_fwd(&pc, 0, "g2", g, h, N), SB_OK);  /* g now "g2" */
    const sb_optim_params sgd = {.kind = SB_OPTIM_SGD, .lr = 0.5f};
    ck_assert_int_eq(sb_probe_sgd_update(&pc, 0, "w", w, NULL, g, &sgd, N), SB_OK);
    ck_assert_int_eq(sb_probe_sgd_update(&pc, 1, "w", w, NULL, g, &sgd, N), SB_OK);
    ck_assert_int_eq(sb_probes_end(&pc), SB_OK);
    ck_assert_int_eq(s.n, 6);
    ck_assert_str_eq(s.inputs[2], "g");
    ck_assert(!s.has_bound[2]);
    ck_assert_str_eq(s.inputs[3], "h");
    ck_assert_str_eq(s.op[4], "sgd_update");
    ck_assert_str_eq(s.inputs[4], "g2,init.w");
    ck_assert_str_eq(s.inputs[5], "g2,w");
    ck_assert_int_eq(s.n_input_tensors[5], 1);
}
END_TEST

START_TEST(absurd_shape_refused)
{
    float y[4] = {0}, x[4] = {0};
    seen s = {0};
    sb_probes pc = sb_probes_begin(collect, &s);
    const sb_dense_shape bad = {-1, IN, OUT};
    ck_assert_int_eq(sb_probe_dense_fwd(&pc, 2, "fc.out", y, x, x, x, &bad), SB_ERR_SHAPE);
    ck_assert_int_eq(sb_probe_relu_fwd(&pc, 2, "r", y, x, 4), SB_OK);
    ck_assert_int_eq(s.n, 1);      /* the bad one not probed, the next one is */
    ck_assert_int_eq(sb_probes_end(&pc), SB_ERR_SHAPE);
}
END_TEST

/* An op of the user's own: its name, its bound, inputs by pointer. */
static void half_bound(float *bound, const void *ctx, int out_index)
{
    (void)ctx;
    (void)out_index;
    bound[0] = 0.5f;
}

START_TEST(own_op)
{
    float a[2] = {1, 2}, out = 3;
    seen s = {0};
    sb_probes pc = sb_probes_begin(collect, &s);
    sb_probe_source(&pc, 0, "a", sb_f32(a, 2));
    sb_tensor in[] = {sb_f32(a, 2)};
    ck_assert_int_eq(sb_probe_op(&pc, 0, "sum", "my_sum", sb_f32(&out, 1), 1, in, half_bound,
                                 NULL), SB_OK);
    ck_assert_int_eq(sb_probes_end(&pc), SB_OK);
    ck_assert_str_eq(s.op[1], "my_sum");
    ck_assert_str_eq(s.inputs[1], "a");
    ck_assert(s.has_bound[1]);
    ck_assert(!s.exact[1]);
    ck_assert_int_eq(memcmp(&s.bound[1][0], &(float){0.5f}, sizeof(float)), 0);
}
END_TEST

/* An own op with no bound is exact (any difference a bug); data restored
 * from a checkpoint is named as its probe before the stop, with no record. */
START_TEST(own_exact_op_and_restored_names)
{
    float w[2] = {1, 2}, v[2] = {0, 0};
    seen s = {0};
    sb_probes pc = sb_probes_begin(collect, &s);
    ck_assert_int_eq(sb_probes_restored(&pc, w, "w"), SB_OK);
    ck_assert_int_eq(sb_probes_restored(&pc, v, "sgd.v"), SB_OK);
    sb_tensor in[] = {sb_f32(v, 2), sb_f32(w, 2)};
    ck_assert_int_eq(sb_probe_op(&pc, 3, "sgd.v", "momentum", sb_f32(v, 2), 2, in, NULL, NULL),
                     SB_OK);
    ck_assert_int_eq(sb_probes_end(&pc), SB_OK);
    ck_assert_int_eq(s.n, 1);
    ck_assert_str_eq(s.inputs[0], "sgd.v,w");
    ck_assert(!s.has_bound[0] && s.exact[0]);
}
END_TEST

Suite *make_probe_ops_suite(void)
{
    Suite *s = suite_create("probe_ops");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, dense_fwd_named_and_bounded);
    tcase_add_test(tc, latest_name_and_update);
    tcase_add_test(tc, absurd_shape_refused);
    tcase_add_test(tc, own_op);
    tcase_add_test(tc, own_exact_op_and_restored_names);
    suite_add_tcase(s, tc);
    return s;
}
