/* Batch invariance of the det family: every op with a per-sample output
 * gives a sample the bits it has alone in a batch of one, whatever the
 * batch size, its row in the batch, the other samples beside it and the
 * thread count. The sizes cross every path of the det GEMM (the serial
 * tiny-product path below 2^21 multiply-adds, the split over output tiles,
 * the split over summation chunks) and every edge of its register tiles;
 * the tile variants give the same bits as each other (test_gemm). The loose
 * GEMM, whose split follows the batch size, does not. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"

Suite *make_batch_suite(void);

static const int sizes[] = {1, 2, 3, 7, 8, 9, 16, 17, 33, 128};
enum { N_SIZES = sizeof sizes / sizeof sizes[0], MAX_THREADS = 3 };

/* Sample 0 at the first, middle and last row of each size at 1..3 threads
 * against sample 0 alone at 1 thread, bit for bit. From 4 rows up the three
 * places are one batch (the sample in each of them, other samples in every
 * other row); in a smaller batch they would leave no row to another sample,
 * so each place is a batch of its own. */
static void check_batch_invariant(const sb_op_call *base)
{
    const sb_kernel_table *det = sb_kernels(SB_FAMILY_DET);
    size_t per = op_test_batch_row_count(base);
    float *alone = op_test_batch_row(base, det, 1, 0, 1);
    for (int i = 0; i < N_SIZES; i++) {
        int n = sizes[i];
        int rows[3] = {0, n / 2, n - 1};
        bool together = n >= 4;
        for (int threads = 1; threads <= MAX_THREADS; threads++)
            for (int r = 0; r < 3; r += together ? 3 : 1) {
                int n_rows = together ? 3 : 1;
                float *got = op_test_batch_rows(base, det, n, rows + r, n_rows, threads);
                for (int j = 0; j < n_rows; j++)
                    ck_assert_msg(op_test_same_bits(got + (size_t)j * per, alone, per),
                                  "%s det: sample at row %d of %d at %d threads differs "
                                  "from the sample alone", sb_op_name(base->op), rows[r + j],
                                  n, threads);
                free(got);
            }
    }
    free(alone);
}

START_TEST(test_dense_batch_invariant)
{
    /* dense1 of the seed CNN (a long K: split into chunks at more threads),
     * dense2 (narrow and tall tiles), and an odd shape with tile edges */
    static const sb_dense_shape shapes[] = {{0, 9216, 128}, {0, 128, 10}, {0, 1152, 131}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        sb_op_call c = {.op = SB_OP_dense_fwd, .dense = shapes[s]};
        check_batch_invariant(&c);
        c.op = SB_OP_dense_bwd_data;
        check_batch_invariant(&c);
    }
}
END_TEST

START_TEST(test_conv_batch_invariant)
{
    static const sb_conv_shape shapes[] = {
        {.c = 1, .h = 28, .w = 28, .k = 32, .r = 3, .s = 3, .stride = 1},   /* conv1 */
        {.c = 32, .h = 12, .w = 12, .k = 64, .r = 3, .s = 3, .stride = 1},  /* conv2, smaller */
        {.c = 3, .h = 9, .w = 7, .k = 5, .r = 3, .s = 2, .stride = 2, .pad = 1},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        sb_op_call c = {.op = SB_OP_conv2d_fwd, .conv = shapes[s]};
        check_batch_invariant(&c);
        c.op = SB_OP_conv2d_bwd_data;
        check_batch_invariant(&c);
    }
}
END_TEST

START_TEST(test_pool_and_classifier_batch_invariant)
{
    sb_op_call c = {.op = SB_OP_maxpool_fwd, .pool = {.c = 64, .h = 24, .w = 24}};
    check_batch_invariant(&c);
    c.op = SB_OP_maxpool_bwd;
    check_batch_invariant(&c);
    /* overlapping 3x3 windows at stride 2, and 2x4 at strides 3, 1 */
    c = (sb_op_call){.op = SB_OP_avgpool_fwd,
                     .window = {.c = 8, .h = 13, .w = 13, .kh = 3, .kw = 3, .sh = 2, .sw = 2}};
    check_batch_invariant(&c);
    c.op = SB_OP_maxpool_window_fwd;
    check_batch_invariant(&c);
    c.op = SB_OP_avgpool_bwd;
    check_batch_invariant(&c);
    c.op = SB_OP_maxpool_window_bwd;
    check_batch_invariant(&c);
    c.window = (sb_window_shape){.c = 3, .h = 10, .w = 9, .kh = 2, .kw = 4, .sh = 3, .sw = 1};
    check_batch_invariant(&c);
    c.op = SB_OP_maxpool_window_fwd;
    check_batch_invariant(&c);
    c = (sb_op_call){.op = SB_OP_softmax_fwd, .cls = {.k = 10}};
    check_batch_invariant(&c);
    c.op = SB_OP_log_softmax_fwd;
    check_batch_invariant(&c);
    c.op = SB_OP_log_softmax_bwd;
    check_batch_invariant(&c);
    c.cls.d = 6; /* (N, C, d) */
    check_batch_invariant(&c);
    c.op = SB_OP_log_softmax_fwd;
    check_batch_invariant(&c);
    /* the unreduced NLL of a row's positions, weighted, one class ignored,
     * and the gradients that are a sample's own (the mean's divides by the
     * batch's weight sum) */
    c = (sb_op_call){.op = SB_OP_nll_loss_none,
                     .nll = {.k = 10, .d = 5, .ignore_index = 2, .weighted = true}};
    check_batch_invariant(&c);
    c.op = SB_OP_nll_loss_none_bwd;
    check_batch_invariant(&c);
    c.op = SB_OP_nll_loss_sum_bwd;
    check_batch_invariant(&c);
}
END_TEST

/* The char GPT's per-row and per-sequence ops: a layer norm's (or an
 * RMSNorm's) row, its mean and rstd, and an attention's sequence (all its
 * heads) are one sample each. */
START_TEST(test_norm_and_attention_batch_invariant)
{
    sb_op_call c = {.op = SB_OP_layernorm_fwd, .norm = {.c = 128, .eps = 1e-5f}};
    check_batch_invariant(&c);
    c.op = SB_OP_layernorm_bwd_data;
    check_batch_invariant(&c);
    c.op = SB_OP_rmsnorm_fwd;
    check_batch_invariant(&c);
    c.op = SB_OP_rmsnorm_bwd_data;
    check_batch_invariant(&c);
    c.op = SB_OP_layernorm_mean;
    check_batch_invariant(&c);
    c.op = SB_OP_layernorm_rstd;
    check_batch_invariant(&c);
    c = (sb_op_call){.op = SB_OP_attention_fwd, .attn = {.t = 64, .h = 4, .d = 32}};
    check_batch_invariant(&c);
    c.op = SB_OP_attention_bwd;
    check_batch_invariant(&c);
}
END_TEST

/* Every op the batch axis takes is covered above (softmax_xent_bwd and
 * nll_loss_mean_bwd are not: the loss gradient carries the batch's 1/n or
 * 1/W). */
START_TEST(test_every_per_sample_op_covered)
{
    static const sb_op covered[] = {SB_OP_dense_fwd, SB_OP_dense_bwd_data, SB_OP_conv2d_fwd,
                                    SB_OP_conv2d_bwd_data, SB_OP_maxpool_fwd,
                                    SB_OP_maxpool_bwd, SB_OP_softmax_fwd, SB_OP_log_softmax_fwd,
                                    SB_OP_nll_loss_none, SB_OP_avgpool_fwd,
                                    SB_OP_maxpool_window_fwd, SB_OP_avgpool_bwd,
                                    SB_OP_maxpool_window_bwd, SB_OP_log_softmax_bwd,
                                    SB_OP_nll_loss_none_bwd, SB_OP_nll_loss_sum_bwd,
                                    SB_OP_layernorm_fwd, SB_OP_layernorm_bwd_data,
                                    SB_OP_rmsnorm_fwd, SB_OP_rmsnorm_bwd_data,
                                    SB_OP_layernorm_mean, SB_OP_layernorm_rstd,
                                    SB_OP_attention_fwd, SB_OP_attention_bwd};
    for (int op = 0; op < SB_OP_COUNT; op++) {
        bool listed = false;
        for (size_t i = 0; i < sizeof covered / sizeof covered[0]; i++)
            listed = listed || covered[i] == (sb_op)op;
        ck_assert_msg(listed == sb_op_per_sample((sb_op)op), "%s: per sample %d, tested %d",
                      sb_op_name((sb_op)op), sb_op_per_sample((sb_op)op), listed);
    }
}
END_TEST

/* Loose's GEMM runs a batch of fewer than 8 rows serially and splits K over
 * the threads above that (and a dense forward's rows from 2048 rows on,
 * test_gemm): at 2 threads a sample's dense1 output is not the same in a
 * batch of 16 as alone. */
START_TEST(test_loose_follows_the_batch)
{
    const sb_kernel_table *loose = sb_kernels(SB_FAMILY_LOOSE);
    sb_op_call c = {.op = SB_OP_dense_fwd, .dense = {0, 9216, 128}};
    size_t per = op_test_batch_row_count(&c);
    float *alone = op_test_batch_row(&c, loose, 1, 0, 2);
    float *in16 = op_test_batch_row(&c, loose, 16, 0, 2);
    float *in3 = op_test_batch_row(&c, loose, 3, 2, 2);
    ck_assert(!op_test_same_bits(alone, in16, per));
    ck_assert(op_test_same_bits(alone, in3, per));  /* both serial */
    free(alone);
    free(in16);
    free(in3);
}
END_TEST

Suite *make_batch_suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_dense_batch_invariant);
    tcase_add_test(tc, test_conv_batch_invariant);
    tcase_add_test(tc, test_pool_and_classifier_batch_invariant);
    tcase_add_test(tc, test_norm_and_attention_batch_invariant);
    tcase_add_test(tc, test_every_per_sample_op_covered);
    tcase_add_test(tc, test_loose_follows_the_batch);
    suite_add_tcase(s, tc);
    return s;
}
