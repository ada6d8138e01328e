#include "op_test.h"

#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sb_rng.h"

float *op_test_alloc_floats(size_t n)
{
    float *p = malloc(n * sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

void op_test_fill_rng(float *x, size_t n, float lo, float hi, uint64_t seed, uint32_t step)
{
    for (size_t i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * sb_rng_uniform(seed, SB_STREAM_CASE_INPUT, step, i);
}

bool op_test_same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

bool op_test_feq(float a, float b)
{
    return !(a < b) && !(a > b) && !isnan(a) && !isnan(b);
}

void op_test_fill_uniform(float *x, size_t n, uint64_t seed)
{
    uint64_t st = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        x[i] = (float)(st >> 40) * 0x1p-23f - 1.0f;
    }
}

void op_test_call_alloc(sb_op_call *c)
{
    ck_assert_int_eq(sb_op_call_describe(c), SB_OK);
    for (int i = 0; i < c->n_in; i++) {
        size_t n = sb_tensor_count(&c->in[i]);
        c->in[i].data = malloc(n * sizeof(float));
        op_test_fill_uniform(c->in[i].data, n, (uint64_t)c->op * 16 + (uint64_t)i);
        if (c->in[i].dtype == SB_DTYPE_I32) {
            int32_t *labels = c->in[i].data;
            const uint32_t range = (uint32_t)sb_op_call_label_range(c);
            for (size_t j = 0; j < n; j++)
                labels[j] = (int32_t)(sb_rng_u32((uint64_t)c->op, SB_STREAM_CASE_INPUT, 1, j) %
                                      range);
        }
    }
    c->out[0].data = malloc(sb_tensor_bytes(&c->out[0]));
}

void op_test_call_free(sb_op_call *c)
{
    for (int i = 0; i < c->n_in; i++)
        free(c->in[i].data);
    free(c->out[0].data);
}

float *op_test_run(const sb_op_call *c, sb_family f, int threads)
{
    omp_set_num_threads(threads);
    sb_op_call_run(sb_kernels(f), c);
    float *copy = malloc(sb_tensor_bytes(&c->out[0]));
    memcpy(copy, c->out[0].data, sb_tensor_bytes(&c->out[0]));
    return copy;
}

/* Elements are checked in plain C and reported once: every ck_assert is a
 * write to Check's log. */
void op_test_assert_within_bound(const sb_op_call *c, const float *got, const float *ref,
                                 const float *bound, const char *what)
{
    for (size_t i = 0; i < sb_tensor_count(&c->out[0]); i++) {
        if (!isfinite(got[i]) || !isfinite(ref[i]))
            ck_abort_msg("%s %s [%zu] not finite: %g, ref %g", sb_op_name(c->op), what, i,
                         (double)got[i], (double)ref[i]);
        if (!(fabsf(got[i] - ref[i]) <= bound[i]))
            ck_abort_msg("%s %s [%zu]: %a vs ref %a, bound %a", sb_op_name(c->op), what, i,
                         (double)got[i], (double)ref[i], (double)bound[i]);
    }
}

void op_test_check_families_within_bound(const sb_op_call *c, int max_threads)
{
    float *ref = op_test_run(c, SB_FAMILY_REF, 1);
    float *bound = malloc(sb_tensor_bytes(&c->out[0]));
    sb_op_call_bound(bound, c, 0);
    for (int threads = 1; threads <= max_threads; threads++) {
        float *det = op_test_run(c, SB_FAMILY_DET, threads);
        float *loose = op_test_run(c, SB_FAMILY_LOOSE, threads);
        op_test_assert_within_bound(c, det, ref, bound, "det");
        op_test_assert_within_bound(c, loose, ref, bound, "loose");
        free(det);
        free(loose);
    }
    free(ref);
    free(bound);
}

void op_test_check_det_bitwise(const sb_op_call *c, int max_threads)
{
    float *one = op_test_run(c, SB_FAMILY_DET, 1);
    for (int threads = 2; threads <= max_threads; threads++) {
        float *many = op_test_run(c, SB_FAMILY_DET, threads);
        ck_assert_msg(memcmp(one, many, sb_tensor_bytes(&c->out[0])) == 0,
                      "%s det: 1 and %d threads differ", sb_op_name(c->op), threads);
        free(many);
    }
    free(one);
}

void op_test_check_loose_moves(const sb_op_call *c, int max_threads)
{
    float *one = op_test_run(c, SB_FAMILY_LOOSE, 1);
    int differing = 0;
    for (int threads = 2; threads <= max_threads; threads++) {
        float *many = op_test_run(c, SB_FAMILY_LOOSE, threads);
        differing += !op_test_same_bits(one, many, sb_tensor_count(&c->out[0]));
        free(many);
    }
    ck_assert_msg(differing > 0, "%s loose: the same bits at 1..%d threads", sb_op_name(c->op),
                  max_threads);
    free(one);
}

double *op_test_doubles(const sb_tensor *t)
{
    const size_t n = sb_tensor_count(t);
    double *d = malloc(n * sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (size_t e = 0; e < n; e++)
        d[e] = (double)((const float *)t->data)[e];
    return d;
}

/* Row r of a per-sample input holds sample `sample`: drawn by sample, so a
 * sample has the same inputs in every batch. */
static void batch_input_fill(sb_tensor *t, int i, int n, int r, uint32_t sample, int classes)
{
    size_t per = sb_tensor_count(t) / (size_t)n;
    uint64_t seed = 16 + (uint64_t)i;
    if (t->dtype == SB_DTYPE_I32) {
        int32_t *row = (int32_t *)t->data + (size_t)r * per;
        for (size_t j = 0; j < per; j++)
            row[j] = (int32_t)(sb_rng_u32(seed, SB_STREAM_CASE_INPUT, sample, j) %
                               (uint32_t)classes);
        return;
    }
    op_test_fill_rng((float *)t->data + (size_t)r * per, per, -1.0f, 1.0f, seed, sample);
}

static bool row_listed(int r, const int *rows, int n_rows)
{
    for (int i = 0; i < n_rows; i++)
        if (rows[i] == r)
            return true;
    return false;
}

float *op_test_batch_rows(const sb_op_call *base, const sb_kernel_table *k, int n,
                          const int *rows, int n_rows, int threads)
{
    sb_op_call c = *base;
    sb_op_call_set_batch(&c, n);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    const sb_op_roles roles = sb_op_roles_of(c.op);
    for (int i = 0; i < c.n_in; i++) {
        c.in[i].data = malloc(sb_tensor_bytes(&c.in[i]));
        ck_assert_ptr_nonnull(c.in[i].data);
        if (!sb_role_per_sample(c.op, roles.in[i])) {
            op_test_fill_uniform(c.in[i].data, sb_tensor_count(&c.in[i]), 16 + (uint64_t)i);
            continue;
        }
        /* the other rows: other samples, a different run for each first row */
        for (int r = 0; r < n; r++)
            batch_input_fill(&c.in[i], i, n, r,
                             row_listed(r, rows, n_rows) ? 0u : (uint32_t)(1 + r + rows[0] * n),
                             sb_op_call_label_range(&c));
    }
    c.out[0].data = malloc(sb_tensor_bytes(&c.out[0]));
    ck_assert_ptr_nonnull(c.out[0].data);
    omp_set_num_threads(threads);
    sb_op_call_run(k, &c);
    size_t per = sb_tensor_count(&c.out[0]) / (size_t)n;
    float *out = op_test_alloc_floats(per * (size_t)n_rows);
    for (int j = 0; j < n_rows; j++)
        memcpy(out + (size_t)j * per, (const float *)c.out[0].data + (size_t)rows[j] * per,
               per * sizeof *out);
    for (int i = 0; i < c.n_in; i++)
        free(c.in[i].data);
    free(c.out[0].data);
    return out;
}

float *op_test_batch_row(const sb_op_call *base, const sb_kernel_table *k, int n, int row,
                         int threads)
{
    return op_test_batch_rows(base, k, n, &row, 1, threads);
}

size_t op_test_batch_row_count(const sb_op_call *base)
{
    sb_op_call c = *base;
    sb_op_call_set_batch(&c, 1);
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    return sb_tensor_count(&c.out[0]);
}
