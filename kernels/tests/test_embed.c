/* embedding: the definitions on hand-computed values; det and loose against
 * ref within the op's bound at 1..8 threads; det bitwise across thread
 * counts (and ref's bits, its order being ref's); loose thread-dependent;
 * the gradients against finite differences of the forward in double. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "op_test.h"
#include "sb_kernels.h"
#include "sb_refd.h"

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

/* ---- the definitions ------------------------------------------------------- */

/* Two sequences of two tokens over a vocabulary of 4 (token 3 unused, so its
 * gradient row is 0); small integers, so every sum is exact in any order and
 * every family must give these bits. */
START_TEST(test_hand_values)
{
    const sb_embed_shape s = {.n = 4, .t = 2, .vocab = 4, .c = 2};
    const int32_t tokens[4] = {2, 0, 2, 1};
    const float wte[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const float wpe[4] = {10, 20, 30, 40};
    const float dy[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* y row i = wte[token i] + wpe[i % 2] */
    const float want_y[8] = {15, 26, 31, 42, 15, 26, 33, 44};
    /* token 0: row 1; token 1: row 3; token 2: rows 0 and 2; token 3: none */
    const float want_dwte[8] = {3, 4, 7, 8, 6, 8, 0, 0};
    /* position 0: rows 0 and 2; position 1: rows 1 and 3 */
    const float want_dwpe[4] = {6, 8, 10, 12};
    const int threads[] = {1, 3};
    for (int f = 0; f < SB_FAMILY_COUNT; f++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            const sb_kernel_table *k = sb_kernels((sb_family)f);
            float y[8], dwte[8], dwpe[4];
            op_test_fill_uniform(y, 8, 1);
            op_test_fill_uniform(dwte, 8, 2); /* overwritten, not added to */
            op_test_fill_uniform(dwpe, 4, 3);
            omp_set_num_threads(threads[t]);
            k->embedding_fwd(y, tokens, wte, wpe, &s);
            k->embedding_bwd_tokens(dwte, dy, tokens, &s);
            k->embedding_bwd_pos(dwpe, dy, &s);
            ck_assert_msg(op_test_same_bits(y, want_y, 8), "%s fwd", sb_family_name((sb_family)f));
            ck_assert_msg(op_test_same_bits(dwte, want_dwte, 8), "%s tokens",
                          sb_family_name((sb_family)f));
            ck_assert_msg(op_test_same_bits(dwpe, want_dwpe, 4), "%s pos",
                          sb_family_name((sb_family)f));
        }
}
END_TEST

/* ---- families against ref ---------------------------------------------------- */

/* det and loose within the bound of ref at 1..8 threads (5 and 7 too), det
 * bitwise the same at each */
START_TEST(test_families)
{
    for (size_t o = 0; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, embed_ops[o], shapes[_i]);
        op_test_check_families_within_bound(&c, 8);
        op_test_check_det_bitwise(&c, 8);
        op_test_call_free(&c);
    }
}
END_TEST


/* det's token gradient adds each element's rows in token-row order, ref's
 * order: ref's bits at every shape. Its position gradient sums chunks of
 * SB_GEMM_KC rows, one chunk (ref's order) up to 256 sequences. */
START_TEST(test_det_has_ref_bits_in_ref_order)
{
    for (size_t i = 0; i < N_SHAPES; i++) {
        const bool one_chunk = shapes[i].n / shapes[i].t <= 256;
        for (size_t o = 1; o < N_OPS; o++) {
            if (embed_ops[o] == SB_OP_embedding_bwd_pos && !one_chunk)
                continue;
            sb_op_call c;
            call_new(&c, embed_ops[o], shapes[i]);
            float *ref = op_test_run(&c, SB_FAMILY_REF, 1);
            float *det = op_test_run(&c, SB_FAMILY_DET, 7);
            ck_assert_msg(op_test_same_bits(ref, det, sb_tensor_count(&c.out[0])), "%s shape %zu",
                          sb_op_name(c.op), i);
            free(ref);
            free(det);
            op_test_call_free(&c);
        }
    }
}
END_TEST

/* loose splits the rows over the threads: its bits must move with the
 * thread count at the model's shape (about 16 rows a token, 16 a position) */
START_TEST(test_loose_depends_on_threads)
{
    for (size_t o = 1; o < N_OPS; o++) {
        sb_op_call c;
        call_new(&c, embed_ops[o], shapes[0]);
        op_test_check_loose_moves(&c, 4);
        op_test_call_free(&c);
    }
}
END_TEST

/* ---- gradients against finite differences -------------------------------------
 * L(wte, wpe) = sum_ij r_ij y_ij, evaluated in double from the definition
 * y_i = wte[token i] + wpe[i % t]; its gradients are the backward ops with
 * dy = r. L is linear in both tables, so the central difference with step
 * h = 2^-6 (w +- h exact in double) has no truncation error: it differs from
 * the gradient by the rounding of L's n*c terms, under
 * 2 (n c + 2) 2^-53 S / h with S = sum |r| (|wte| + |wpe| + h) over the terms.
 * The float gradient errs from the exact one by at most its double
 * evaluation's bound (sb_refd_eval); the tolerance is the sum of both. */

typedef struct fd_embed {
    sb_embed_shape s;
    const int32_t *tokens;
    double *wte, *wpe;
    const float *r;
} fd_embed;

/* L, and S in *magnitude */
static double embed_loss(const fd_embed *p, double h, double *magnitude)
{
    const size_t c = (size_t)p->s.c;
    double loss = 0.0, mag = 0.0;
    for (size_t i = 0; i < (size_t)p->s.n; i++)
        for (size_t j = 0; j < c; j++) {
            const double a = p->wte[(size_t)p->tokens[i] * c + j];
            const double b = p->wpe[(i % (size_t)p->s.t) * c + j];
            loss += (double)p->r[i * c + j] * (a + b);
            mag += fabs((double)p->r[i * c + j]) * (fabs(a) + fabs(b) + h);
        }
    *magnitude = mag;
    return loss;
}

/* every element of table (p's wte or wpe) against the float gradient */
static void check_table(const fd_embed *p, double *table, size_t count, const float *grad,
                        const double *bound, const char *what)
{
    const double h = 0x1p-6, n_terms = (double)p->s.n * p->s.c;
    for (size_t e = 0; e < count; e++) {
        const double keep = table[e];
        double mag_plus, mag_minus;
        table[e] = keep + h;
        const double plus = embed_loss(p, h, &mag_plus);
        table[e] = keep - h;
        const double minus = embed_loss(p, h, &mag_minus);
        table[e] = keep;
        const double fd = (plus - minus) / (2.0 * h);
        const double tol =
            bound[e] + 2.0 * (n_terms + 2.0) * 0x1p-53 * fmax(mag_plus, mag_minus) / h;
        ck_assert_msg(fabs((double)grad[e] - fd) <= tol,
                      "%s[%zu]: %a vs finite difference %a (tol %g)", what, e, (double)grad[e],
                      fd, tol);
    }
}

START_TEST(test_gradients_finite_difference)
{
    const sb_embed_shape s = {.n = 12, .t = 4, .vocab = 7, .c = 5};
    sb_op_call fwd = {.op = SB_OP_embedding_fwd, .embed = s};
    sb_op_call tok = {.op = SB_OP_embedding_bwd_tokens, .embed = s};
    sb_op_call pos = {.op = SB_OP_embedding_bwd_pos, .embed = s};
    op_test_call_alloc(&fwd);
    op_test_call_alloc(&tok);
    op_test_call_alloc(&pos);
    /* one set of tokens and one r for the three */
    memcpy(tok.in[1].data, fwd.in[0].data, sb_tensor_bytes(&fwd.in[0]));
    memcpy(pos.in[0].data, tok.in[0].data, sb_tensor_bytes(&tok.in[0]));
    fd_embed p = {.s = s, .tokens = fwd.in[0].data, .r = tok.in[0].data,
                  .wte = op_test_doubles(&fwd.in[1]), .wpe = op_test_doubles(&fwd.in[2])};
    const size_t n_wte = sb_tensor_count(&fwd.in[1]), n_wpe = sb_tensor_count(&fwd.in[2]);
    double *value = malloc(n_wte * sizeof *value), *bound = malloc(n_wte * sizeof *bound);
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        float *g = op_test_run(&tok, (sb_family)f, 3);
        sb_refd_eval(value, bound, &tok, 0, (sb_family)f);
        check_table(&p, p.wte, n_wte, g, bound, "dwte");
        free(g);
        g = op_test_run(&pos, (sb_family)f, 3);
        sb_refd_eval(value, bound, &pos, 0, (sb_family)f);
        check_table(&p, p.wpe, n_wpe, g, bound, "dwpe");
        free(g);
    }
    /* and the float forward is the definition the loss uses: one rounded add */
    float *y = op_test_run(&fwd, SB_FAMILY_DET, 3);
    for (size_t i = 0; i < (size_t)s.n; i++)
        for (size_t j = 0; j < (size_t)s.c; j++) {
            const double want = p.wte[(size_t)p.tokens[i] * (size_t)s.c + j] +
                                p.wpe[(i % (size_t)s.t) * (size_t)s.c + j];
            ck_assert(fabs((double)y[i * (size_t)s.c + j] - want) <= 0x1p-24 * fabs(want));
        }
    free(y);
    free(value);
    free(bound);
    free(p.wte);
    free(p.wpe);
    op_test_call_free(&fwd);
    op_test_call_free(&tok);
    op_test_call_free(&pos);
}
END_TEST

Suite *make_embed_suite(void)
{
    Suite *s = suite_create("embed");
    TCase *def = tcase_create("definitions");
    tcase_add_test(def, test_hand_values);
    tcase_add_test(def, test_gradients_finite_difference);
    suite_add_tcase(s, def);
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_families, 0, N_SHAPES);
    tcase_add_test(tc, test_det_has_ref_bits_in_ref_order);
    tcase_add_test(tc, test_loose_depends_on_threads);
    suite_add_tcase(s, tc);
    return s;
}
