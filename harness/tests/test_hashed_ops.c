/* The hashed mode of the elementwise ops and optimiser updates
 * (sb_op_call_run_hashed) against the harness's hashing: for every op with
 * the mode, at several thread counts and at lengths around the leaf size
 * (zero, shorter than a leaf, one off a whole number of leaves), the outputs
 * are the plain kernel's bits, every digest is the leaf sb_hash_leaf gives
 * for that slice of the tensor, and the root from the digests is
 * sb_hash_tensor's. Kernels without the mode (ref, mutants, a replacement)
 * hash nothing. */
#include <check.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sb_harness.h"
#include "sb_rng.h"

Suite *make_hashed_ops_suite(void);

#define LEAF_FLOATS (SB_HASH_LEAF_BYTES / sizeof(float))

/* Every op the kernel list marks HASHED. */
static const sb_op hashed_ops[] = {
#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, ...)              \
    SB_IF_##hashed(SB_OP_##name,)
#include "kernels.def"
#undef SB_OP
};
enum { N_HASHED_OPS = sizeof hashed_ops / sizeof hashed_ops[0] };

static const size_t lengths[] = {
    0, 1, 1000, LEAF_FLOATS - 1, LEAF_FLOATS, LEAF_FLOATS + 1, 3 * LEAF_FLOATS + 123,
};

static size_t leaf_count(size_t n)
{
    return (n * sizeof(float) + SB_HASH_LEAF_BYTES - 1) / SB_HASH_LEAF_BYTES;
}

static sb_tensor *tensor_at(sb_op_call *c, int k)
{
    return k < c->n_out ? &c->out[k] : &c->in[k - c->n_out];
}

/* The op over n floats, every tensor allocated and drawn from the RNG:
 * inputs in [-1, 1), outputs (optimiser state, updated in place) in [0, 1). */
static sb_op_call make_call(sb_op op, size_t n)
{
    sb_op_call c = {.op = op, .n = n ? n : 1, .t = 3,
                    .dropout = {.rate = 0.25f, .seed = 11, .stream = 5, .step = 2}};
    const sb_optimizer kind = sb_params_optimizer(sb_op_params_of(op));
    if (kind != SB_OPTIM_COUNT)
        sb_optim_defaults(&c.optim, kind);
    c.optim.momentum = 0.9f;
    c.optim.nesterov = true;
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    c.n = n; /* describe refuses an empty op; the kernels take one */
    for (int k = 0; k < c.n_out + c.n_in; k++) {
        sb_tensor *t = tensor_at(&c, k);
        t->dim[0] = (int64_t)n;
        t->data = malloc((n ? n : 1) * sizeof(float));
        ck_assert_ptr_nonnull(t->data);
        sb_rng_fill_uniform(t->data, n, k < c.n_out ? 0.0f : -1.0f, 1.0f, 7, 100 + (uint32_t)k, 0);
    }
    return c;
}

static sb_op_call copy_call(const sb_op_call *a)
{
    sb_op_call c = *a;
    for (int k = 0; k < c.n_out + c.n_in; k++) {
        sb_tensor *t = tensor_at(&c, k);
        void *data = malloc((c.n ? c.n : 1) * sizeof(float));
        ck_assert_ptr_nonnull(data);
        memcpy(data, t->data, c.n * sizeof(float));
        t->data = data;
    }
    return c;
}

static void free_call(sb_op_call *c)
{
    for (int k = 0; k < c->n_out + c->n_in; k++)
        free(tensor_at(c, k)->data);
}

/* A request for the digests of every tensor of c, prefilled with 0xee. */
static sb_leaf_request request_all(const sb_op_call *c)
{
    sb_leaf_request r = {.hash = sb_hash_leaf};
    size_t count = leaf_count(c->n);
    for (int j = 0; j < c->n_out; j++) {
        r.out[j] = malloc((count ? count : 1) * sizeof(sb_leaf_digest));
        ck_assert_ptr_nonnull(r.out[j]);
        memset(r.out[j], 0xee, count * sizeof(sb_leaf_digest));
    }
    for (int i = 0; i < c->n_in; i++) {
        r.in[i] = malloc((count ? count : 1) * sizeof(sb_leaf_digest));
        ck_assert_ptr_nonnull(r.in[i]);
        memset(r.in[i], 0xee, count * sizeof(sb_leaf_digest));
    }
    return r;
}

static void free_request(sb_leaf_request *r)
{
    for (int j = 0; j < SB_OP_MAX_OUT; j++)
        free(r->out[j]);
    for (int i = 0; i < SB_OP_MAX_IN; i++)
        free(r->in[i]);
}

/* d holds t's leaves as the harness cuts and hashes them, and gives its root. */
static void expect_leaves(const sb_tensor *t, const sb_leaf_digest *d, const char *what)
{
    size_t nbytes = sb_tensor_bytes(t);
    for (size_t k = 0; k * SB_HASH_LEAF_BYTES < nbytes; k++) {
        size_t off = k * SB_HASH_LEAF_BYTES;
        size_t len = nbytes - off < SB_HASH_LEAF_BYTES ? nbytes - off : SB_HASH_LEAF_BYTES;
        sb_leaf_digest want;
        sb_hash_leaf(&want, (const unsigned char *)t->data + off, len);
        ck_assert_msg(memcmp(&want, &d[k], sizeof want) == 0, "%s: leaf %zu differs", what, k);
    }
    sb_hash whole = sb_hash_tensor(t), root = sb_hash_tensor_leaves(t, d);
    ck_assert_msg(sb_hash_equal(&whole, &root), "%s: root differs", what);
}

/* The hashed mode of op at n floats and `threads` equals the plain kernel
 * of k, and its digests are the harness's leaves of every tensor. */
static void check_hashed(const sb_kernel_table *k, sb_op op, size_t n, int threads)
{
    omp_set_num_threads(threads);
    sb_op_call plain = make_call(op, n);
    sb_op_call hashed = copy_call(&plain);
    sb_op_call_run(k, &plain);
    sb_leaf_request r = request_all(&hashed);
    ck_assert_msg(sb_op_call_run_hashed(k, &hashed, &r), "%s has no hashed mode", sb_op_name(op));
    char what[96];
    for (int j = 0; j < hashed.n_out; j++) {
        snprintf(what, sizeof what, "%s n=%zu threads=%d out%d", sb_op_name(op), n, threads, j);
        ck_assert_msg(memcmp(plain.out[j].data, hashed.out[j].data, n * sizeof(float)) == 0,
                      "%s: bits differ from the plain kernel", what);
        expect_leaves(&hashed.out[j], r.out[j], what);
    }
    for (int i = 0; i < hashed.n_in; i++) {
        snprintf(what, sizeof what, "%s n=%zu threads=%d in%d", sb_op_name(op), n, threads, i);
        expect_leaves(&hashed.in[i], r.in[i], what);
    }
    free_request(&r);
    free_call(&plain);
    free_call(&hashed);
}

START_TEST(det_digests_are_the_harness_leaves)
{
    int saved = omp_get_max_threads();
    for (int t = 1; t <= 4; t++)
        for (size_t o = 0; o < N_HASHED_OPS; o++)
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
                check_hashed(sb_kernels(SB_FAMILY_DET), hashed_ops[o], lengths[l], t);
    omp_set_num_threads(saved);
}
END_TEST

START_TEST(loose_digests_are_the_harness_leaves)
{
    int saved = omp_get_max_threads();
    for (size_t o = 0; o < N_HASHED_OPS; o++)
        check_hashed(sb_kernels(SB_FAMILY_LOOSE), hashed_ops[o], 2 * LEAF_FLOATS + 5, 2);
    omp_set_num_threads(saved);
}
END_TEST

/* k's kernel for op has no hashed mode: the call runs it (its bits are the
 * plain call's), returns false and leaves every digest untouched. */
static void expect_unhashed(const sb_kernel_table *k, sb_op op, const char *table)
{
    const size_t n = LEAF_FLOATS + 17;
    sb_op_call plain = make_call(op, n);
    sb_op_call hashed = copy_call(&plain);
    sb_op_call_run(k, &plain);
    sb_leaf_request r = request_all(&hashed);
    ck_assert_msg(!sb_op_call_run_hashed(k, &hashed, &r), "%s of %s hashed", sb_op_name(op),
                  table);
    sb_leaf_digest untouched;
    memset(&untouched, 0xee, sizeof untouched);
    for (int j = 0; j < hashed.n_out; j++) {
        ck_assert(memcmp(plain.out[j].data, hashed.out[j].data, n * sizeof(float)) == 0);
        for (size_t b = 0; b < leaf_count(n); b++)
            ck_assert(memcmp(&r.out[j][b], &untouched, sizeof untouched) == 0);
    }
    for (int i = 0; i < hashed.n_in; i++)
        for (size_t b = 0; b < leaf_count(n); b++)
            ck_assert(memcmp(&r.in[i][b], &untouched, sizeof untouched) == 0);
    free_request(&r);
    free_call(&plain);
    free_call(&hashed);
}

START_TEST(only_the_paired_kernels_hash)
{
    for (size_t o = 0; o < N_HASHED_OPS; o++)
        expect_unhashed(sb_kernels(SB_FAMILY_REF), hashed_ops[o], "ref");

    /* a mutant's op runs as the mutant wrote it; the det ops beside it hash */
    int mutants_of_hashed_ops = 0;
    for (int i = 0; i < sb_mutant_count(); i++) {
        const sb_kernel_table *k = sb_kernels_mutant(sb_mutant_name(i));
        for (size_t o = 0; o < N_HASHED_OPS; o++) {
            if (hashed_ops[o] == sb_mutant_op(i)) {
                expect_unhashed(k, hashed_ops[o], sb_mutant_name(i));
                mutants_of_hashed_ops++;
            } else {
                check_hashed(k, hashed_ops[o], LEAF_FLOATS + 3, 2);
            }
        }
    }
    ck_assert_int_ge(mutants_of_hashed_ops, 3); /* relu, dropout mask, adadelta */

    /* a copied det table with one kernel replaced */
    sb_kernel_table k = *sb_kernels(SB_FAMILY_DET);
    k.relu_bwd = sb_relu_bwd_ref;
    expect_unhashed(&k, SB_OP_relu_bwd, "a copied table");
    check_hashed(&k, SB_OP_relu_fwd, LEAF_FLOATS + 3, 2);
}
END_TEST

/* The residual add written over its first input (y = a): a's digests are
 * of a as it was, y's of the sum. */
START_TEST(an_input_written_over_is_hashed_first)
{
    const size_t n = 2 * LEAF_FLOATS + 9;
    sb_op_call plain = make_call(SB_OP_residual_add, n);
    sb_op_call hashed = copy_call(&plain);
    sb_op_call_run(sb_kernels(SB_FAMILY_DET), &plain);
    sb_tensor a_before = hashed.in[0];
    a_before.data = malloc(n * sizeof(float));
    ck_assert_ptr_nonnull(a_before.data);
    memcpy(a_before.data, hashed.in[0].data, n * sizeof(float));
    sb_leaf_request r = request_all(&hashed);
    void *y = hashed.out[0].data;
    hashed.out[0].data = hashed.in[0].data;
    ck_assert(sb_op_call_run_hashed(sb_kernels(SB_FAMILY_DET), &hashed, &r));
    ck_assert(memcmp(plain.out[0].data, hashed.in[0].data, n * sizeof(float)) == 0);
    expect_leaves(&a_before, r.in[0], "residual_add's a, written over");
    expect_leaves(&hashed.in[0], r.out[0], "residual_add's y = a");
    hashed.out[0].data = y;
    free(a_before.data);
    free_request(&r);
    free_call(&plain);
    free_call(&hashed);
}
END_TEST

/* Ops without the mode run plainly and say so. */
START_TEST(ops_without_the_mode_hash_nothing)
{
    sb_op_call c = {.op = SB_OP_maxpool_fwd, .pool = {.n = 1, .c = 2, .h = 4, .w = 4}};
    ck_assert_int_eq(sb_op_call_describe(&c), SB_OK);
    float x[32], y[8], want[8];
    for (int i = 0; i < 32; i++)
        x[i] = (float)((i * 7) % 13);
    c.in[0].data = x;
    c.out[0].data = want;
    sb_op_call_run(sb_kernels(SB_FAMILY_DET), &c);
    c.out[0].data = y;
    sb_leaf_digest d[1];
    sb_leaf_request r = {.hash = sb_hash_leaf, .out = {d}, .in = {d}};
    ck_assert(!sb_op_call_run_hashed(sb_kernels(SB_FAMILY_DET), &c, &r));
    ck_assert(memcmp(y, want, sizeof y) == 0);
}
END_TEST

Suite *make_hashed_ops_suite(void)
{
    Suite *s = suite_create("hashed_ops");
    TCase *tc = tcase_create("hashed_ops");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, det_digests_are_the_harness_leaves);
    tcase_add_test(tc, loose_digests_are_the_harness_leaves);
    tcase_add_test(tc, only_the_paired_kernels_hash);
    tcase_add_test(tc, an_input_written_over_is_hashed_first);
    tcase_add_test(tc, ops_without_the_mode_hash_nothing);
    suite_add_tcase(s, tc);
    return s;
}
