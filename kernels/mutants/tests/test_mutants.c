/* The mutant registry (one entry per line of mutants.def, each replacing
 * exactly one op of the det table), and for each determinism mutant an input on which its
 * output differs from det's, plus the thread counts at which it must still
 * give det's bits (the cases in cases/mutant_*.case expect `identical` there).
 * Bits are compared exactly: the mutants are det kernels except for the fault. */
#include <check.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "mutants/decode_mutants.h"
#include "sb_kernels.h"
#include "sb_model.h"

Suite *make_mutants_suite(void);

/* ---- the registry ------------------------------------------------------------ */

/* The entries of table t that are not det's. */
static int entries_replaced(const sb_kernel_table *t, sb_op *which)
{
    const sb_kernel_table *det = sb_kernels(SB_FAMILY_DET);
    int n = 0;
#define SB_OP(name, ...)                                                                   \
    if (t->name != det->name) {                                                            \
        n++;                                                                               \
        *which = SB_OP_##name;                                                             \
    }
#include "kernels.def"
#undef SB_OP
    return n;
}

START_TEST(registry_lists_fifty_four_mutants_each_replacing_one_op)
{
    int kinds[2] = {0, 0};
    for (int i = 0; i < sb_mutant_count(); i++)
        kinds[sb_mutant_kind_of(i)]++;
    ck_assert_int_eq(kinds[SB_MUTANT_DETERMINISM], 50);
    ck_assert_int_eq(kinds[SB_MUTANT_NUMERICS], 4);
    for (int i = 0; i < sb_mutant_count(); i++) {
        const char *name = sb_mutant_name(i);
        ck_assert_int_eq(sb_mutant_find(name), i);
        ck_assert_int_lt(sb_mutant_op(i), SB_OP_COUNT);
        ck_assert_uint_gt(strlen(sb_mutant_fault(i)), 10);
        const sb_kernel_table *t = sb_kernels_mutant(name);
        ck_assert_ptr_nonnull(t);
        sb_op which = SB_OP_COUNT;
        ck_assert_int_eq(entries_replaced(t, &which), 1);
        ck_assert_int_eq(which, sb_mutant_op(i));
        for (int j = 0; j < i; j++)
            ck_assert_str_ne(sb_mutant_name(j), name);
    }
}
END_TEST

/* The decode mutants (SB_DECODE_MUTANT): three, each with a fault line and
 * either an attention of its own or a decoder fault, never neither. */
START_TEST(registry_lists_three_decode_mutants)
{
    ck_assert_int_eq(sb_decode_mutant_count(), 3);
    for (int i = 0; i < sb_decode_mutant_count(); i++) {
        ck_assert_int_eq(sb_decode_mutant_find(sb_decode_mutant_name(i)), i);
        ck_assert_uint_gt(strlen(sb_decode_mutant_fault(i)), 10);
        ck_assert(sb_decode_mutant_attend(i) != NULL);
        ck_assert(sb_decode_mutant_attend(i) != sb_attn_decode_det ||
                  sb_decode_mutant_fault_kind(i) != SB_DECODE_FAULT_NONE);
    }
    ck_assert_int_eq(sb_decode_mutant_find("decode_nothing"), -1);
}
END_TEST

/* Installing a mutant on top of a table replaces exactly its op's entry. */
START_TEST(install_replaces_one_entry)
{
    for (int i = 0; i < sb_mutant_count(); i++) {
        sb_kernel_table t = *sb_kernels(SB_FAMILY_DET);
        sb_mutant_install(i, &t);
        ck_assert(memcmp(&t, sb_kernels_mutant(sb_mutant_name(i)), sizeof t) == 0);
    }
}
END_TEST

/* The resume mutants (SB_RESUME_MUTANT): three, no kernel among them, each
 * restore changing exactly the one counter its fault names. */
START_TEST(registry_lists_three_resume_mutants_each_changing_one_counter)
{
    ck_assert_int_eq(sb_resume_mutant_count(), 3);
    static const struct {
        const char *name;
        size_t counter;
    } changes[] = {
        {"step_counter_unsaved", offsetof(sb_train_counters, optim_t)},
        {"rng_epoch_restart", offsetof(sb_train_counters, rng_step)},
        {"order_reshuffled", offsetof(sb_train_counters, order_key)},
    };
    for (size_t k = 0; k < sizeof changes / sizeof changes[0]; k++) {
        int i = sb_resume_mutant_find(changes[k].name);
        ck_assert_int_ge(i, 0);
        ck_assert_str_eq(sb_resume_mutant_name(i), changes[k].name);
        ck_assert_uint_gt(strlen(sb_resume_mutant_fault(i)), 10);
        ck_assert_int_eq(sb_mutant_find(changes[k].name), -1);
        ck_assert_ptr_null(sb_kernels_mutant(changes[k].name));
        /* a run resumed at step 7, two steps into its second epoch */
        const sb_train_counters saved = {.step = 7, .optim_t = 7, .rng_step = 7, .epoch = 1,
                                         .epoch_first = 5, .order_key = 1, .position = 256,
                                         .losses = 2, .loss_sum = 4.5};
        sb_train_counters got = saved;
        sb_resume_mutant_restore(i)(&got);
        int64_t before[sizeof saved / sizeof(int64_t)], after[sizeof saved / sizeof(int64_t)];
        memcpy(before, &saved, sizeof before);
        memcpy(after, &got, sizeof after);
        for (size_t w = 0; w < sizeof before / sizeof before[0]; w++)
            ck_assert_msg((before[w] != after[w]) == (w * sizeof(int64_t) == changes[k].counter),
                          "%s: word %zu", changes[k].name, w);
    }
    ck_assert_int_eq(sb_resume_mutant_find("no_such_mutant"), -1);
}
END_TEST

START_TEST(unknown_mutant_is_refused)
{
    ck_assert_int_eq(sb_mutant_find("no_such_mutant"), -1);
    ck_assert_ptr_null(sb_kernels_mutant("no_such_mutant"));
    ck_assert_ptr_null(sb_kernels_mutant(""));
}
END_TEST

/* ---- faults ------------------------------------------------------------------- */

/* One mutant's trigger: the op call, the thread count at which the fault
 * shows, how many calls it takes (a fault carried between calls shows on the
 * second), how many tries (a race needs threads to overlap), and the thread
 * counts at which the mutant must equal det. */
typedef struct trigger {
    const char *mutant;
    sb_op_call call;
    int fault_threads;
    int calls;
    int tries;
    int clean[6];
    int n_clean;
} trigger;

#define CONV(n_, c_, hw, k_) {.n = n_, .c = c_, .h = hw, .w = hw, .k = k_, .r = 3, .s = 3, .stride = 1}

static const trigger triggers[] = {
    {"dropout_thread_rng", {.op = SB_OP_dropout_mask, .n = 1000,
                            .dropout = {.rate = 0.5f, .seed = 3, .stream = 0x200, .step = 1}},
     2, 1, 1, {1}, 1},
    {"conv_bias_reduction", {.op = SB_OP_conv2d_bwd_bias, .conv = CONV(16, 2, 10, 16)},
     4, 1, 1, {1}, 1},
    {"dense_fwd_split_k", {.op = SB_OP_dense_fwd, .dense = {.n = 4, .in = 300, .out = 20}},
     2, 1, 1, {1}, 1},
    /* 128 columns: whole 32-wide tiles per thread at 1, 2, 4 threads, not at 3 */
    {"dense_data_edge_order", {.op = SB_OP_dense_bwd_data, .dense = {.n = 6, .in = 128, .out = 50}},
     3, 1, 1, {1, 2, 4}, 3},
    /* 512 x 160 weights: above the size that goes parallel */
    {"dense_weights_race", {.op = SB_OP_dense_bwd_weights, .dense = {.n = 64, .in = 512, .out = 160}},
     4, 1, 50, {1}, 1},
    /* 1000 = 3 * 333 + 1; 2, 4 and 8 divide it */
    {"relu_chunk_off_by_one", {.op = SB_OP_relu_fwd, .n = 1000}, 3, 1, 1, {2, 4, 8}, 3},
    {"adadelta_one_thread", {.op = SB_OP_adadelta_update, .n = 100}, 1, 1, 1, {2, 4}, 2},
    {"conv_filter_stale_acc", {.op = SB_OP_conv2d_bwd_filter, .conv = CONV(9, 2, 8, 4)},
     1, 2, 1, {0}, 0},
    {"conv_data_fma_path", {.op = SB_OP_conv2d_bwd_data, .conv = CONV(3, 4, 8, 5)},
     2, 1, 1, {1}, 1},
    /* 100 rows in 64 blocks: 3 threads get 33, 33 and 34 rows */
    {"xent_mean_of_means", {.op = SB_OP_xent_loss, .cls = {.n = 100, .k = 10}},
     3, 1, 1, {1}, 1},
    /* 256 images of 32 filters of 32x32 (four det chunks each): milliseconds
     * of adds, long enough for the threads' adds to interleave */
    {"conv_bias_atomic", {.op = SB_OP_conv2d_bwd_bias, .conv = CONV(256, 2, 34, 32)},
     2, 1, 50, {1}, 1},
    /* 2 * 4 * 12 = 96 window rows: every count but 5 and 7 up to 8 divides them */
    {"maxpool_row_split", {.op = SB_OP_maxpool_fwd, .pool = {.n = 2, .c = 4, .h = 24, .w = 24}},
     5, 1, 1, {1, 2, 3, 4, 6, 8}, 6},
    /* 4096 rows over 2 tokens of 64 columns: 64 blocks, the odd ones the second
     * thread's, so a token's 2048 adds a column leave det's order in practice
     * however the threads' timing goes */
    {"embedding_tokens_atomic", {.op = SB_OP_embedding_bwd_tokens,
                                 .embed = {.n = 4096, .t = 64, .vocab = 2, .c = 64}},
     2, 1, 1, {1}, 1},
    /* inputs in [-1, 1): one pass and two passes differ in the last bits of
     * some of the 2-thread tail's rows */
    {"layernorm_one_pass_tail", {.op = SB_OP_layernorm_fwd, .norm = {.n = 64, .c = 128, .eps = 1e-5f}},
     2, 1, 1, {1}, 1},
    /* 64 tokens: four key blocks for the last queries, so two partials
     * bracket them otherwise than det */
    {"attention_thread_split", {.op = SB_OP_attention_fwd, .attn = {.b = 2, .t = 64, .h = 2, .d = 8}},
     2, 1, 1, {1}, 1},
    /* four query heads on one key/value head: two runs of two at 2 threads,
     * one head a run (det's order) at 4 */
    {"attention_group_split", {.op = SB_OP_attention_bwd,
                               .attn = {.b = 2, .t = 16, .h = 4, .d = 8, .kv_heads = 1}},
     2, 1, 1, {1, 4}, 2},
    /* 100003 gradients: 25 blocks, cut into two runs at 2 threads */
    {"grad_norm_thread_order", {.op = SB_OP_grad_norm, .n = 100003}, 2, 1, 1, {1}, 1},
    /* above SB_OPTIM_PARALLEL_MIN: split over the threads */
    {"adamw_peel_unstored_v", {.op = SB_OP_adamw_update, .n = 20000, .t = 1}, 2, 1, 1, {1}, 1},
    /* 200 rows, one det chunk: one run at 1 thread is det's order, two runs
     * of 100 at 2 threads bracket it otherwise */
    {"rmsnorm_gamma_thread_split", {.op = SB_OP_rmsnorm_bwd_gamma,
                                    .norm = {.n = 200, .c = 64, .eps = 1e-5f}},
     2, 1, 1, {1}, 1},
    /* 1024 rows of 64 x 64 weights: two slices at 2 threads, each partial
     * rounded to a 10-bit mantissa */
    {"dense_weights_tf32_partials", {.op = SB_OP_dense_bwd_weights,
                                     .dense = {.n = 1024, .in = 64, .out = 64}},
     2, 1, 1, {1}, 1},
    /* 1000 positions in 64 blocks, weighted: one run of blocks at 1 thread is
     * det's order, two runs of 32 at 2 threads bracket the weights' sum
     * otherwise */
    {"nll_mean_weight_thread_split", {.op = SB_OP_nll_loss_mean,
                                      .nll = {.n = 250, .k = 10, .d = 4, .ignore_index = 3,
                                              .weighted = true}},
     2, 1, 1, {1}, 1},
    /* 1000 terms of 12 outputs: two runs of 500 at 2 threads */
    {"reduce_mean_thread_split", {.op = SB_OP_reduce_mean,
                                  .reduce = {.outer = 4, .r = 1000, .inner = 3}},
     2, 1, 1, {1}, 1},
    /* 1000 classes a row: two runs of 500 at 2 threads */
    {"log_softmax_vocab_split", {.op = SB_OP_log_softmax_fwd, .cls = {.n = 8, .k = 1000}},
     2, 1, 1, {1}, 1},
    /* 8 planes of 13 x 13, 3 x 3 windows at stride 2 */
    {"maxpool_indices_chunk_relative", {.op = SB_OP_maxpool_window_indices,
                                        .window = {.n = 2, .c = 4, .h = 13, .w = 13, .kh = 3,
                                                   .kw = 3, .sh = 2, .sw = 2}},
     2, 1, 1, {1}, 1},
    /* 3 x 3 windows: 1/9 is not a power of two */
    {"avgpool_tail_reciprocal", {.op = SB_OP_avgpool_fwd,
                                 .window = {.n = 2, .c = 4, .h = 13, .w = 13, .kh = 3, .kw = 3,
                                            .sh = 2, .sw = 2}},
     2, 1, 1, {1}, 1},
    /* rows of 256: eight blocks of 32 in det, one chain in the tail */
    {"layernorm_mean_sequential_tail", {.op = SB_OP_layernorm_mean,
                                        .norm = {.n = 64, .c = 256, .eps = 1e-5f}},
     2, 1, 1, {1}, 1},
    /* 1000 elements in [-1, 1): the tanh form parts from erf's off 0 */
    {"gelu_erf_tail_tanh", {.op = SB_OP_gelu_erf_fwd, .n = 1000}, 2, 1, 1, {1}, 1},
    /* 20 rows of sequences of 8: the second thread's share starts at row 10,
     * position 2 */
    {"rope_position_from_chunk", {.op = SB_OP_rope_fwd,
                                  .rope = {.n = 20, .t = 8, .h = 2, .d = 8, .base = 10000.0f}},
     2, 1, 1, {1}, 1},
    /* 1000 elements in [-1, 1): the two SiLU forms round apart on some */
    {"swiglu_tail_exp_sigmoid", {.op = SB_OP_swiglu_fwd, .n = 1000}, 2, 1, 1, {1}, 1},
    {"layernorm_rstd_tail_unbiased", {.op = SB_OP_layernorm_rstd,
                                      .norm = {.n = 64, .c = 256, .eps = 1e-5f}},
     2, 1, 1, {1}, 1},
    /* 3 x 3 windows: the maximum of some of the tail's windows is in their
     * last column */
    {"maxpool_window_short_edge", {.op = SB_OP_maxpool_window_fwd,
                                   .window = {.n = 2, .c = 4, .h = 13, .w = 13, .kh = 3,
                                              .kw = 3, .sh = 2, .sw = 2}},
     2, 1, 1, {1}, 1},
    /* The remainder mutants: 384 elements or positions, 6 groups of 64
     * (RoPE's 48 rows, 6 groups of 8), are whole groups for every thread at 1,
     * 2, 3 and 6 threads and leave each of 4 threads a remainder of 32 (of 4
     * rows) */
    {"gelu_erf_grad_remainder_fma", {.op = SB_OP_gelu_erf_bwd, .n = 384}, 4, 1, 1, {1, 2, 3, 6}, 4},
    {"swiglu_grad_b_remainder_left_to_right", {.op = SB_OP_swiglu_bwd_b, .n = 384},
     4, 1, 1, {1, 2, 3, 6}, 4},
    {"rope_bwd_remainder_forward_turn", {.op = SB_OP_rope_bwd,
                                         .rope = {.n = 48, .t = 8, .h = 2, .d = 8, .base = 10000.0f}},
     4, 1, 1, {1, 2, 3, 6}, 4},
    /* labels 0..9 in turn: class 3 at positions 73, 83 and 93 of the first
     * thread's remainder */
    {"nll_sum_remainder_keeps_ignored", {.op = SB_OP_nll_loss_sum,
                                         .nll = {.n = 96, .k = 10, .d = 4, .ignore_index = 3,
                                                 .weighted = true}},
     4, 1, 1, {1, 2, 3, 6}, 4},
    {"nll_none_remainder_unweighted", {.op = SB_OP_nll_loss_none,
                                       .nll = {.n = 96, .k = 10, .d = 4, .ignore_index = 3,
                                               .weighted = true}},
     4, 1, 1, {1, 2, 3, 6}, 4},
    /* rows of 1000: two runs of 500 columns at 2 threads, each in det's
     * blocks from its own first column */
    {"rmsnorm_row_thread_split", {.op = SB_OP_rmsnorm_fwd,
                                  .norm = {.n = 16, .c = 1000, .eps = 1e-5f}},
     2, 1, 1, {1}, 1},
    /* 20 rows: the second thread's share starts at row 10 */
    {"rmsnorm_data_dy_chunk_relative", {.op = SB_OP_rmsnorm_bwd_data,
                                        .norm = {.n = 20, .c = 64, .eps = 1e-5f}},
     2, 1, 1, {1}, 1},
    /* 1000 elements in [-1, 1): libm's tanhf and sb_tanhf round apart on some */
    {"silu_tail_libm_tanh", {.op = SB_OP_silu_fwd, .n = 1000}, 2, 1, 1, {1}, 1},
    /* 1008 = 63 * 16: no remainder at 1 thread or at 3 (shares of 336);
     * shares of 504 at 2 leave 8 each */
    {"silu_bwd_vector_remainder_dropped", {.op = SB_OP_silu_bwd, .n = 1008}, 2, 1, 1, {1, 3}, 2},
    /* 1000 elements in [-1, 1): (dy D) b and (dy b) D round apart on some */
    {"swiglu_bwd_a_tail_reassociated", {.op = SB_OP_swiglu_bwd_a, .n = 1000}, 2, 1, 1, {1}, 1},
    /* 4 x 3 windows at strides 1 and 2 over 24 planes of 15 x 14: an
     * element that is the argmax of three or more windows on both sides of
     * row 6 sums them in another order at 2 threads */
    {"maxpool_window_bwd_row_split", {.op = SB_OP_maxpool_window_bwd,
                                      .window = {.n = 4, .c = 6, .h = 15, .w = 14, .kh = 4,
                                                 .kw = 3, .sh = 1, .sw = 2}},
     2, 1, 1, {1}, 1},
    /* 1000 positions in 64 blocks, weighted: at 2 threads each half's
     * gradients over that half's weights */
    {"nll_mean_bwd_local_weight", {.op = SB_OP_nll_loss_mean_bwd,
                                   .nll = {.n = 250, .k = 10, .d = 4, .ignore_index = 3,
                                           .weighted = true}},
     2, 1, 1, {1}, 1},
    /* 3 x 3 windows at stride 2: row and column 2 of a plane lose window 0 */
    {"avgpool_bwd_tail_truncated_cover", {.op = SB_OP_avgpool_bwd,
                                          .window = {.n = 2, .c = 4, .h = 13, .w = 13, .kh = 3,
                                                     .kw = 3, .sh = 2, .sw = 2}},
     2, 1, 1, {1}, 1},
    /* 1000 classes a row at 3 positions: two runs of 500 at 2 threads */
    {"log_softmax_bwd_vocab_split", {.op = SB_OP_log_softmax_bwd,
                                     .cls = {.n = 8, .k = 1000, .d = 3}},
     2, 1, 1, {1}, 1},
    /* class 3 ignored: the tail's rows have some */
    {"nll_sum_bwd_tail_no_ignore", {.op = SB_OP_nll_loss_sum_bwd,
                                    .nll = {.n = 250, .k = 10, .d = 4, .ignore_index = 3,
                                            .weighted = true}},
     2, 1, 1, {1}, 1},
    /* 4 positions a row: the tail reads another position's dloss */
    {"nll_none_bwd_tail_row_dloss", {.op = SB_OP_nll_loss_none_bwd,
                                     .nll = {.n = 250, .k = 10, .d = 4, .ignore_index = 3,
                                             .weighted = true}},
     2, 1, 1, {1}, 1},
};
#define N_TRIGGERS ((int)(sizeof triggers / sizeof triggers[0]))

/* Mutants whose fault is to abort the process: where it shows, the test
 * runs in a child of its own (tcase "aborts", Check's fork mode) and must
 * die of SIGABRT. 400 rows: 1, 2 and 4 divide them, 3 does not. */
static const trigger aborting[] = {
    {"accuracy_even_split", {.op = SB_OP_accuracy, .cls = {.n = 400, .k = 10}},
     3, 1, 1, {1, 2, 4}, 3},
};
#define N_ABORTING ((int)(sizeof aborting / sizeof aborting[0]))

/* uniform in [lo, lo + 2) or [0, 1) from a fixed-seed LCG */
static void fill(float *x, size_t n, uint64_t seed, bool non_negative)
{
    uint64_t st = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        float u = (float)(st >> 40) * 0x1p-24f;
        x[i] = non_negative ? u : 2.0f * u - 1.0f;
    }
}

/* labels (classes, tokens) in 0..k-1, each in turn */
static void labels_fill(int32_t *y, size_t n, int k)
{
    for (size_t i = 0; i < n; i++)
        y[i] = (int32_t)(i % (size_t)k);
}

static bool is_update(sb_op op)
{
    return sb_op_updates_in_place(op);
}

static void call_alloc(sb_op_call *c, const trigger *tr)
{
    *c = tr->call;
    if (is_update(c->op))
        sb_optim_defaults(&c->optim, sb_params_optimizer(sb_op_params_of(c->op)));
    ck_assert_int_eq(sb_op_call_describe(c), SB_OK);
    for (int i = 0; i < c->n_in; i++) {
        c->in[i].data = malloc(sb_tensor_bytes(&c->in[i]));
        ck_assert_ptr_nonnull(c->in[i].data);
        if (c->in[i].dtype == SB_DTYPE_I32)
            labels_fill(c->in[i].data, sb_tensor_count(&c->in[i]), sb_op_call_label_range(c));
        else
            fill(c->in[i].data, sb_tensor_count(&c->in[i]), 100 + (uint64_t)i, false);
    }
    for (int j = 0; j < c->n_out; j++) {
        c->out[j].data = malloc(sb_tensor_bytes(&c->out[j]));
        ck_assert_ptr_nonnull(c->out[j].data);
    }
}

/* Outputs before a call: optimiser state (weights either sign, accumulators
 * >= 0); any other output a value no op here writes (a skipped element shows). */
static void outputs_reset(sb_op_call *c)
{
    for (int j = 0; j < c->n_out; j++) {
        float *o = c->out[j].data;
        size_t n = sb_tensor_count(&c->out[j]);
        if (is_update(c->op))
            fill(o, n, 200 + (uint64_t)j, j > 0);
        else
            for (size_t i = 0; i < n; i++)
                o[i] = 7.0f;
    }
}

static void call_free(sb_op_call *c)
{
    for (int i = 0; i < c->n_in; i++)
        free(c->in[i].data);
    for (int j = 0; j < c->n_out; j++)
        free(c->out[j].data);
}

static bool outputs_equal(const sb_op_call *a, const sb_op_call *b)
{
    for (int j = 0; j < a->n_out; j++)
        if (memcmp(a->out[j].data, b->out[j].data, sb_tensor_bytes(&a->out[j])) != 0)
            return false;
    return true;
}

/* Runs det and the mutant (`calls` times) at `threads`; true when they agree. */
static bool agrees_with_det(const trigger *tr, sb_op_call *det, sb_op_call *mut, int threads)
{
    omp_set_num_threads(threads);
    outputs_reset(det);
    sb_op_call_run(sb_kernels(SB_FAMILY_DET), det);
    const sb_kernel_table *k = sb_kernels_mutant(tr->mutant);
    ck_assert_ptr_nonnull(k);
    for (int c = 0; c < tr->calls; c++) {
        outputs_reset(mut);
        sb_op_call_run(k, mut);
    }
    return outputs_equal(det, mut);
}

START_TEST(mutant_differs_from_det_where_its_fault_shows)
{
    const trigger *tr = &triggers[_i];
    int m = sb_mutant_find(tr->mutant);
    ck_assert_int_ge(m, 0);
    ck_assert_int_eq(sb_mutant_op(m), tr->call.op);
    sb_op_call det, mut;
    call_alloc(&det, tr);
    call_alloc(&mut, tr);
    bool differed = false;
    for (int t = 0; t < tr->tries && !differed; t++)
        differed = !agrees_with_det(tr, &det, &mut, tr->fault_threads);
    ck_assert_msg(differed, "%s gave det's bits at %d threads", tr->mutant, tr->fault_threads);
    call_free(&det);
    call_free(&mut);
}
END_TEST

static void equals_det_where_clean(const trigger *tr)
{
    sb_op_call det, mut;
    call_alloc(&det, tr);
    call_alloc(&mut, tr);
    for (int i = 0; i < tr->n_clean; i++)
        ck_assert_msg(agrees_with_det(tr, &det, &mut, tr->clean[i]),
                      "%s differs from det at %d threads", tr->mutant, tr->clean[i]);
    call_free(&det);
    call_free(&mut);
}

START_TEST(mutant_equals_det_where_its_fault_does_not_show)
{
    equals_det_where_clean(&triggers[_i]);
}
END_TEST

START_TEST(aborting_mutant_equals_det_where_its_fault_does_not_show)
{
    equals_det_where_clean(&aborting[_i]);
}
END_TEST

/* Runs in a child of its own (fork mode): only death by SIGABRT passes. */
START_TEST(aborting_mutant_aborts_where_its_fault_shows)
{
    const trigger *tr = &aborting[_i];
    ck_assert_int_eq(sb_mutant_op(sb_mutant_find(tr->mutant)), tr->call.op);
    sb_op_call det, mut;
    call_alloc(&det, tr);
    call_alloc(&mut, tr);
    agrees_with_det(tr, &det, &mut, tr->fault_threads);
    call_free(&det);
    call_free(&mut);
}
END_TEST

/* adamw_peel_unstored_v's fault is in the state alone: where it shows, the
 * weight and the first moment are det's and only the second moment differs,
 * in one element per thread but the first. */
START_TEST(adamw_peel_mutant_corrupts_only_the_second_moment)
{
    const trigger *tr = NULL;
    for (int i = 0; i < N_TRIGGERS; i++)
        if (strcmp(triggers[i].mutant, "adamw_peel_unstored_v") == 0)
            tr = &triggers[i];
    ck_assert_ptr_nonnull(tr);
    sb_op_call det, mut;
    call_alloc(&det, tr);
    call_alloc(&mut, tr);
    for (int threads = 2; threads <= 3; threads++) {
        agrees_with_det(tr, &det, &mut, threads);
        for (int j = 0; j < 2; j++)
            ck_assert_msg(memcmp(det.out[j].data, mut.out[j].data,
                                 sb_tensor_bytes(&det.out[j])) == 0,
                          "output %d differs at %d threads", j, threads);
        const float *dv = det.out[2].data, *mv = mut.out[2].data;
        int differing = 0;
        for (size_t i = 0; i < tr->call.n; i++)
            differing += memcmp(&dv[i], &mv[i], sizeof *dv) != 0;
        ck_assert_int_eq(differing, threads - 1);
    }
    call_free(&det);
    call_free(&mut);
}
END_TEST

/* The NUMERICS mutants are as deterministic as det; the numerics suite
 * triggers them (cases/numerics_*.case). */
/* Mutants whose fault follows the batch size: at every thread count they
 * give a sample the same bits; in a batch of fault_rows the sample's row
 * differs from the sample alone; in a batch of det_rows they are det. */
typedef struct batch_trigger {
    const char *mutant;
    sb_op_call call;            /* the batch n is set per check */
    int fault_rows, det_rows;
} batch_trigger;

static const batch_trigger batch_triggers[] = {
    /* K 1152: 4.5 det chunks, 18 quarter chunks */
    {"gemm_tile_follows_batch", {.op = SB_OP_dense_fwd, .dense = {.in = 1152, .out = 40}}, 16, 32},
    {"dense_tiny_batch_order", {.op = SB_OP_dense_fwd, .dense = {.in = 1152, .out = 40}}, 8, 9},
};
#define N_BATCH_TRIGGERS ((int)(sizeof batch_triggers / sizeof batch_triggers[0]))

START_TEST(batch_mutant_follows_the_batch_not_the_threads)
{
    const batch_trigger *tr = &batch_triggers[_i];
    const sb_kernel_table *k = sb_kernels_mutant(tr->mutant);
    size_t per = op_test_batch_row_count(&tr->call);
    float *alone = op_test_batch_row(&tr->call, k, 1, 0, 1);
    for (int threads = 1; threads <= 4; threads++) {
        float *again = op_test_batch_row(&tr->call, k, 1, 0, threads);
        float *in_batch = op_test_batch_row(&tr->call, k, tr->fault_rows, tr->fault_rows / 2,
                                            threads);
        float *det = op_test_batch_row(&tr->call, sb_kernels(SB_FAMILY_DET), tr->det_rows, 0,
                                       threads);
        float *mut = op_test_batch_row(&tr->call, k, tr->det_rows, 0, threads);
        ck_assert_msg(op_test_same_bits(alone, again, per), "%s: alone at %d threads",
                      tr->mutant, threads);
        ck_assert_msg(!op_test_same_bits(alone, in_batch, per), "%s: batch of %d at %d threads",
                      tr->mutant, tr->fault_rows, threads);
        ck_assert_msg(op_test_same_bits(det, mut, per), "%s: not det in a batch of %d",
                      tr->mutant, tr->det_rows);
        free(again);
        free(in_batch);
        free(det);
        free(mut);
    }
    free(alone);
}
END_TEST

static int triggers_named(const trigger *t, int n, const char *name)
{
    int found = 0;
    for (int i = 0; i < n; i++)
        found += strcmp(t[i].mutant, name) == 0;
    return found;
}

START_TEST(every_determinism_mutant_has_a_trigger)
{
    int n = 0;
    for (int i = 0; i < sb_mutant_count(); i++)
        if (sb_mutant_kind_of(i) == SB_MUTANT_DETERMINISM) {
            const char *name = sb_mutant_name(i);
            int batch = 0;
            for (int k = 0; k < N_BATCH_TRIGGERS; k++)
                batch += strcmp(batch_triggers[k].mutant, name) == 0;
            ck_assert_int_eq(triggers_named(triggers, N_TRIGGERS, name) +
                                 triggers_named(aborting, N_ABORTING, name) + batch, 1);
            n++;
        }
    ck_assert_int_eq(n, N_TRIGGERS + N_ABORTING + N_BATCH_TRIGGERS);
}
END_TEST

Suite *make_mutants_suite(void)
{
    Suite *s = suite_create("mutants");
    TCase *tc = tcase_create("registry");
    tcase_add_test(tc, registry_lists_fifty_four_mutants_each_replacing_one_op);
    tcase_add_test(tc, install_replaces_one_entry);
    tcase_add_test(tc, registry_lists_three_decode_mutants);
    tcase_add_test(tc, registry_lists_three_resume_mutants_each_changing_one_counter);
    tcase_add_test(tc, unknown_mutant_is_refused);
    tcase_add_test(tc, every_determinism_mutant_has_a_trigger);
    suite_add_tcase(s, tc);
    tc = tcase_create("faults");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, mutant_differs_from_det_where_its_fault_shows, 0, N_TRIGGERS);
    tcase_add_test(tc, adamw_peel_mutant_corrupts_only_the_second_moment);
    tcase_add_loop_test(tc, batch_mutant_follows_the_batch_not_the_threads, 0,
                        N_BATCH_TRIGGERS);
    tcase_add_loop_test(tc, mutant_equals_det_where_its_fault_does_not_show, 0, N_TRIGGERS);
    tcase_add_loop_test(tc, aborting_mutant_equals_det_where_its_fault_does_not_show, 0,
                        N_ABORTING);
    suite_add_tcase(s, tc);
    /* Only in fork mode, where each test is a child of a parent that never
     * started an OpenMP pool: the test `mutants_abort` (meson.build) runs
     * this tag alone with CK_FORK=yes, `mutants` leaves it out. */
    tc = tcase_create("aborts");
    tcase_set_tags(tc, "aborts");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test_raise_signal(tc, aborting_mutant_aborts_where_its_fault_shows, SIGABRT,
                                     0, N_ABORTING);
    suite_add_tcase(s, tc);
    return s;
}
