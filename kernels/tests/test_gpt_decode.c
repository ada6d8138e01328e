/* KV-cache decoding of the character-level GPT (model/gpt_decode.h) on a
 * small model (2 blocks, 2 heads, width 32, context 40, random weights and
 * tokens): det's logits of every position, from a prefill followed by one
 * token a step, alone or second in a batch of four requests of other
 * lengths, at 1 and 3 threads, have the bits of the forward pass over the
 * whole window; loose's agree with them to rounding but for the planted
 * fault of the second request's cache row, which the batch shows. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "model/gpt_decode.h"
#include "sb_rng.h"

Suite *make_gpt_decode_suite(void);

enum { T = 40, PROMPT = 6, OTHERS = 3 };

static sb_train_config small_config(void)
{
    sb_train_config cfg;
    sb_gpt_config_defaults(&cfg);
    cfg.batch = 1;
    cfg.gpt.layers = 2;
    cfg.gpt.heads = 2;
    cfg.gpt.width = 32;
    cfg.gpt.context = T;
    cfg.seed = 3;
    return cfg;
}

static int32_t token(uint64_t seq, int i)
{
    return (int32_t)(sb_rng_u32(11, 0, (uint32_t)seq, (uint64_t)i) % SB_TEXT_VOCAB);
}

/* Weights from the initialiser, then every parameter moved by a uniform
 * draw, so that biases and layer norms are not 0 and 1. */
static void model_new(sb_gpt *g, sb_family f, sb_train_config *cfg)
{
    const sb_model_probe none = {.hook = NULL};
    ck_assert_int_eq(sb_gpt_alloc(g, sb_kernels(f), cfg, SB_TEXT_VOCAB), SB_OK);
    sb_gpt_init(g, &none);
    for (size_t i = 0; i < g->total; i++)
        g->params[i] += 0.2f * (sb_rng_uniform(13, 0, 0, i) - 0.5f);
}

/* The logits of the forward pass over the window of sequence 0. */
static float *forward_logits(sb_gpt *g)
{
    const sb_model_probe none = {.hook = NULL};
    for (int i = 0; i < T; i++)
        g->tokens[i] = token(0, i);
    sb_gpt_forward(g, 1, T, 0, NULL, &none);
    float *out = malloc((size_t)T * SB_TEXT_VOCAB * sizeof *out);
    ck_assert_ptr_nonnull(out);
    memcpy(out, g->logits, (size_t)T * SB_TEXT_VOCAB * sizeof *out);
    return out;
}

/* Sequence 0 decoded from a prefill of PROMPT tokens, with `others` other
 * requests (sequences 1.., prompts of 3, 10, 17 tokens) in each step, the
 * sequence second; logits of positions PROMPT.. into out [T][V]. */
static void decode_logits(float *out, sb_gpt *g, sb_attn_decode_fn *attend, int others,
                          sb_decode_fault fault)
{
    sb_gpt_decoder d;
    ck_assert_int_eq(sb_gpt_decoder_alloc(&d, g, attend, others + 1, others + 1), SB_OK);
    d.fault = fault;
    int32_t seq[T];
    int pos[OTHERS + 1];
    for (int i = 0; i < T; i++)
        seq[i] = token(0, i);
    sb_gpt_prefill(&d, 0, seq, PROMPT);
    for (int j = 1; j <= others; j++) {
        int32_t p[T];
        pos[j] = 3 + 7 * (j - 1);
        for (int i = 0; i < pos[j]; i++)
            p[i] = token((uint64_t)j, i);
        sb_gpt_prefill(&d, j, p, pos[j]);
    }
    const int mine = others > 0 ? 1 : 0;
    for (int at = PROMPT; at < T; at++) {
        sb_gpt_request req[OTHERS + 1];
        for (int r = 0, j = 1; r <= others; r++) {
            if (r == mine) {
                req[r] = (sb_gpt_request){0, at, seq[at]};
                continue;
            }
            /* an other request that reaches the end starts again at 0 */
            if (pos[j] == T)
                pos[j] = 0;
            req[r] = (sb_gpt_request){j, pos[j], token((uint64_t)j, pos[j])};
            pos[j]++, j++;
        }
        sb_gpt_decode_step(&d, req, others + 1);
        memcpy(out + (size_t)at * SB_TEXT_VOCAB, d.logits + (size_t)mine * SB_TEXT_VOCAB,
               SB_TEXT_VOCAB * sizeof *out);
    }
    sb_gpt_decoder_free(&d);
}

static double max_diff(const float *a, const float *b)
{
    double m = 0.0;
    for (size_t i = (size_t)PROMPT * SB_TEXT_VOCAB; i < (size_t)T * SB_TEXT_VOCAB; i++)
        m = fmax(m, fabs((double)a[i] - (double)b[i]));
    return m;
}

START_TEST(test_det_decode_is_the_forward_pass)
{
    sb_train_config cfg = small_config();
    sb_gpt g;
    model_new(&g, SB_FAMILY_DET, &cfg);
    omp_set_num_threads(1);
    float *ref = forward_logits(&g);
    float *out = calloc((size_t)T * SB_TEXT_VOCAB, sizeof *out);
    ck_assert_ptr_nonnull(out);
    const int threads[] = {1, 3};
    for (int k = 0; k < 2; k++) {
        omp_set_num_threads(threads[k]);
        for (int others = 0; others <= OTHERS; others += OTHERS) {
            decode_logits(out, &g, sb_attn_decode_det, others, SB_DECODE_FAULT_NONE);
            ck_assert_msg(memcmp(out + PROMPT * SB_TEXT_VOCAB, ref + PROMPT * SB_TEXT_VOCAB,
                                 (size_t)(T - PROMPT) * SB_TEXT_VOCAB * sizeof *out) == 0,
                          "det decode at %d threads with %d others: max diff %g",
                          threads[k], others, max_diff(out, ref));
        }
    }
    omp_set_num_threads(1);
    free(out);
    free(ref);
    sb_gpt_free(&g);
}
END_TEST

/* Logits of order 1 here: split-KV and split-K move them by a few ulps of
 * the values summed, far below 1e-4; a wrong softmax or cache row moves
 * them by far more. */
START_TEST(test_loose_decode_agrees_to_rounding)
{
    sb_train_config cfg = small_config();
    sb_gpt g;
    model_new(&g, SB_FAMILY_LOOSE, &cfg);
    omp_set_num_threads(3);
    float *ref = forward_logits(&g);
    float *out = calloc((size_t)T * SB_TEXT_VOCAB, sizeof *out);
    ck_assert_ptr_nonnull(out);
    decode_logits(out, &g, sb_attn_decode_loose, OTHERS, SB_DECODE_FAULT_NONE);
    double d = max_diff(out, ref);
    ck_assert_msg(d < 1e-4, "loose decode: max diff %g", d);
    ck_assert_msg(d > 0.0, "loose decode has the forward pass's bits: the split is not exercised");
    decode_logits(out, &g, sb_attn_decode_loose, OTHERS,
                  SB_DECODE_FAULT_SECOND_REQUEST_CACHE_SHIFT);
    d = max_diff(out, ref);
    ck_assert_msg(d > 1e-2, "the shifted cache row moved the logits by only %g", d);
    omp_set_num_threads(1);
    free(out);
    free(ref);
    sb_gpt_free(&g);
}
END_TEST

/* loose's split count follows the cache length and the number of requests. */
START_TEST(test_loose_splits_follow_the_step)
{
    ck_assert_int_eq(sb_attn_decode_splits(7, 1, 4, 8), 1);
    ck_assert_int_eq(sb_attn_decode_splits(64, 1, 4, 8), 8);
    ck_assert_int_eq(sb_attn_decode_splits(512, 1, 4, 8), 8);
    ck_assert_int_eq(sb_attn_decode_splits(512, 4, 4, 8), 2);
    ck_assert_int_eq(sb_attn_decode_splits(512, 16, 4, 8), 1);
}
END_TEST

Suite *make_gpt_decode_suite(void)
{
    Suite *s = suite_create("gpt_decode");
    TCase *tc = tcase_create("gpt_decode");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_det_decode_is_the_forward_pass);
    tcase_add_test(tc, test_loose_decode_agrees_to_rounding);
    tcase_add_test(tc, test_loose_splits_follow_the_step);
    suite_add_tcase(s, tc);
    return s;
}
