/* The character-level GPT's wiring: on a tiny model (2 blocks, 2 heads,
 * width 16, context 8, 2 windows), the gradient the backward pass leaves in
 * the gradient buffer for each parameter tensor agrees with a central
 * difference of the loss, and the update moves every parameter; the passes
 * give the same bits at 1 and 3 threads. Each for GPT-2's block, the
 * LLaMA-style one (RMSNorm, rotary positions, SwiGLU, one key/value head,
 * no biases) and a mixture (layer norm, rotary positions, SwiGLU with
 * biases). */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "model/gpt.h"
#include "sb_rng.h"

Suite *make_gpt_suite(void);

static const sb_gpt_block_config blocks[] = {
    {.norm = SB_GPT_LAYERNORM},
    {.norm = SB_GPT_RMSNORM, .position = SB_GPT_ROPE, .mlp = SB_GPT_SWIGLU, .kv_heads = 1,
     .no_bias = true},
    {.norm = SB_GPT_LAYERNORM, .position = SB_GPT_ROPE, .mlp = SB_GPT_SWIGLU},
};
#define N_BLOCKS ((int)(sizeof blocks / sizeof blocks[0]))

static sb_train_config tiny_config(int block)
{
    sb_train_config cfg;
    sb_gpt_config_defaults(&cfg);
    cfg.gpt.block = blocks[block];
    cfg.batch = 2;
    cfg.gpt.layers = 2;
    cfg.gpt.heads = 2;
    cfg.gpt.width = 16;
    cfg.gpt.context = 8;
    cfg.seed = 5;
    return cfg;
}

/* Tokens and targets from the RNG: a text of random characters. */
static void tiny_batch(sb_gpt *g)
{
    for (int i = 0; i < g->rows; i++) {
        g->tokens[i] = (int32_t)(sb_rng_u32(9, 0, 0, (uint64_t)i) % SB_TEXT_VOCAB);
        g->targets[i] = (int32_t)(sb_rng_u32(9, 0, 1, (uint64_t)i) % SB_TEXT_VOCAB);
    }
}

static float loss_of(sb_gpt *g)
{
    const sb_model_probe none = {.hook = NULL};
    sb_gpt_forward(g, g->batch, g->context, SB_GPT_TRAIN, NULL, &none);
    return g->loss;
}

/* The ref family in float: a step h of 1e-2 moves the loss (about 4.6) by
 * |g| h; its rounding, 4.6 * 2^-24 ~ 3e-7 per evaluation, over 2h is
 * ~1.4e-5 in the difference quotient, and the curvature term h^2 f'''/6 is
 * far smaller for these weights (|w| ~ 0.02). The element with the largest
 * gradient of each tensor is checked, to 5% of it plus 2e-4. */
START_TEST(test_gradients_match_differences)
{
    const sb_model_probe none = {.hook = NULL};
    sb_train_config cfg = tiny_config(_i);
    sb_gpt g;
    ck_assert_int_eq(sb_gpt_alloc(&g, sb_kernels(SB_FAMILY_REF), &cfg, SB_TEXT_VOCAB), SB_OK);
    sb_gpt_init(&g, &none);
    /* biases and LN parameters away from their initial 0 and 1, so that
     * their gradients are not special cases */
    for (int i = 0; i < g.n_params; i++)
        if (!g.param[i].decay)
            for (size_t j = 0; j < g.param[i].count; j++)
                g.params[g.param[i].offset + j] +=
                    0.1f * (sb_rng_uniform(3, 0, (uint32_t)i, j) - 0.5f);
    tiny_batch(&g);
    loss_of(&g);
    sb_gpt_backward(&g, g.batch, &none);
    float *grads = malloc(g.total * sizeof *grads);
    ck_assert_ptr_nonnull(grads);
    memcpy(grads, g.grads, g.total * sizeof *grads);

    const float h = 1e-2f;
    for (int i = 0; i < g.n_params; i++) {
        const sb_gpt_param *q = &g.param[i];
        size_t at = q->offset;
        for (size_t j = q->offset; j < q->offset + q->count; j++)
            if (fabsf(grads[j]) > fabsf(grads[at]))
                at = j;
        const float w = g.params[at];
        g.params[at] = w + h;
        const double up = (double)loss_of(&g);
        g.params[at] = w - h;
        const double down = (double)loss_of(&g);
        g.params[at] = w;
        const double diff = (up - down) / (2.0 * (double)h);
        const double tol = 0.05 * fabs((double)grads[at]) + 2e-4;
        ck_assert_msg(fabs(diff - (double)grads[at]) <= tol,
                      "block %d %s: gradient %g, difference %g", _i, q->name, (double)grads[at],
                      diff);
        ck_assert_msg(fabsf(grads[at]) > 0.0f, "block %d %s: no gradient", _i, q->name);
    }
    free(grads);
    sb_gpt_free(&g);
}
END_TEST

/* Every tensor of one step (forward, backward, update) at `threads`. */
static float *one_step(int block, int threads, size_t *n)
{
    omp_set_num_threads(threads);
    const sb_model_probe none = {.hook = NULL};
    sb_train_config cfg = tiny_config(block);
    sb_gpt g;
    ck_assert_int_eq(sb_gpt_alloc(&g, sb_kernels(SB_FAMILY_DET), &cfg, SB_TEXT_VOCAB), SB_OK);
    sb_gpt_init(&g, &none);
    tiny_batch(&g);
    float *before = malloc(g.total * sizeof *before);
    ck_assert_ptr_nonnull(before);
    memcpy(before, g.params, g.total * sizeof *before);
    loss_of(&g);
    sb_gpt_backward(&g, g.batch, &none);
    sb_gpt_update(&g, &none);
    /* AdamW's first step moves every weight by about lr */
    for (size_t j = 0; j < g.total; j++)
        ck_assert_msg(memcmp(&g.params[j], &before[j], sizeof before[j]) != 0,
                      "element %zu did not move", j);
    free(before);
    *n = 2 * g.total;
    float *out = malloc(*n * sizeof *out);
    ck_assert_ptr_nonnull(out);
    memcpy(out, g.params, g.total * sizeof *out);
    memcpy(out + g.total, g.grads, g.total * sizeof *out);
    sb_gpt_free(&g);
    return out;
}

START_TEST(test_det_step_same_bits)
{
    size_t n1, n3;
    float *a = one_step(_i, 1, &n1), *b = one_step(_i, 3, &n3);
    ck_assert_uint_eq(n1, n3);
    ck_assert(memcmp(a, b, n1 * sizeof *a) == 0);
    free(a);
    free(b);
}
END_TEST

START_TEST(test_sizes_refused)
{
    sb_train_config cfg = tiny_config(0);
    sb_gpt g;
    cfg.gpt.heads = 3; /* 16 is not a multiple */
    ck_assert_int_eq(sb_gpt_alloc(&g, sb_kernels(SB_FAMILY_REF), &cfg, SB_TEXT_VOCAB),
                     SB_ERR_SHAPE);
    cfg = tiny_config(0);
    cfg.gpt.layers = SB_GPT_MAX_LAYERS + 1;
    ck_assert_int_eq(sb_gpt_alloc(&g, sb_kernels(SB_FAMILY_REF), &cfg, SB_TEXT_VOCAB),
                     SB_ERR_SHAPE);
    cfg = tiny_config(1);
    cfg.gpt.block.kv_heads = 3; /* not dividing 2 heads */
    ck_assert_int_eq(sb_gpt_alloc(&g, sb_kernels(SB_FAMILY_REF), &cfg, SB_TEXT_VOCAB),
                     SB_ERR_SHAPE);
    cfg = tiny_config(1);
    cfg.gpt.block.kv_heads = 0;
    cfg.gpt.heads = 16; /* heads of width 1: no pairs to rotate */
    ck_assert_int_eq(sb_gpt_alloc(&g, sb_kernels(SB_FAMILY_REF), &cfg, SB_TEXT_VOCAB),
                     SB_ERR_SHAPE);
}
END_TEST

Suite *make_gpt_suite(void)
{
    Suite *s = suite_create("gpt");
    TCase *tc = tcase_create("gpt");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_gradients_match_differences, 0, N_BLOCKS);
    tcase_add_loop_test(tc, test_det_step_same_bits, 0, N_BLOCKS);
    tcase_add_test(tc, test_sizes_refused);
    suite_add_tcase(s, tc);
    return s;
}
