/* The embedding ops, det family. The forward pass is parallel over rows.
 * The gradients give every table element one writer that adds its rows in
 * a fixed order:
 *   tokens  the token rows are grouped by token, in token-row order; a
 *           task owns one vocabulary row and adds its group's rows in
 *           that order (the ref order: det has ref's bits), with no
 *           atomics and nothing the thread count decides
 *   pos     tasks are (position, column block) pairs; an element sums the
 *           rows of its position in chunks of SB_GEMM_KC rows, chunk sums
 *           added in chunk order (sb_sum_det's order: ref's bits up to
 *           SB_GEMM_KC sequences) */
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "gemm/sb_gemm.h"

void sb_embedding_fwd_det(float *y, const int32_t *tokens, const float *wte, const float *wpe,
                          const sb_embed_shape *s)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        sb_embed_row(y, tokens, wte, wpe, s, (size_t)i);
}

static int blocks_of(int count, int block)
{
    return (count + block - 1) / block;
}

/* The token rows grouped by token, each group in token-row order: rows
 * order[first[v]] .. order[first[v + 1] - 1] hold token v (a counting sort;
 * first has vocab + 1 entries). */
static void rows_by_token(int *first, int *order, const int32_t *tokens, const sb_embed_shape *s)
{
    memset(first, 0, ((size_t)s->vocab + 1) * sizeof *first);
    for (size_t i = 0; i < (size_t)s->n; i++)
        first[sb_embed_token(tokens, i, s) + 1]++;
    for (int v = 0; v < s->vocab; v++)
        first[v + 1] += first[v];
    int *next = malloc((size_t)s->vocab * sizeof *next);
    SB_ASSERT(next != NULL);
    memcpy(next, first, (size_t)s->vocab * sizeof *next);
    for (size_t i = 0; i < (size_t)s->n; i++)
        order[next[tokens[i]]++] = (int)i;
    free(next);
}

void sb_embedding_bwd_tokens_det(float *dwte, const float *dy, const int32_t *tokens,
                                 const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c;
    int *first = malloc(((size_t)s->vocab + 1) * sizeof *first);
    int *order = malloc((size_t)s->n * sizeof *order);
    SB_ASSERT(first != NULL && order != NULL);
    rows_by_token(first, order, tokens, s);
    /* a token's row has one writer; frequent and rare tokens differ in
     * work, so threads take tokens as they come (the order of a row's adds
     * is fixed by `order`, not by the schedule) */
#pragma omp parallel for schedule(dynamic, 4)
    for (int v = 0; v < s->vocab; v++) {
        float *row = dwte + (size_t)v * c;
        memset(row, 0, c * sizeof *row);
        for (int k = first[v]; k < first[v + 1]; k++)
            for (size_t j = 0; j < c; j++)
                row[j] += dy[(size_t)order[k] * c + j];
    }
    free(first);
    free(order);
}

/* Position p's sums over columns [j0, j0 + w): rows p, p + t, p + 2t, ...,
 * chunk by chunk of SB_GEMM_KC rows, each chunk from +0, the chunks added in
 * order. Called with w the constant SB_EMBED_COLS for whole blocks, so that
 * the loops over columns vectorise (with w known only at run time they ran
 * at two thirds of loose's speed). */
static inline __attribute__((always_inline)) void
position_sums(float *restrict out, const float *dy, size_t p, size_t j0, size_t w,
              const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c, t = (size_t)s->t, n = (size_t)s->n;
    float acc[SB_EMBED_COLS] = {0};
    for (size_t first = p; first < n; first += SB_GEMM_KC * t) {
        float part[SB_EMBED_COLS] = {0};
        for (size_t k = 0, i = first; k < SB_GEMM_KC && i < n; k++, i += t)
            for (size_t j = 0; j < w; j++)
                part[j] += dy[i * c + j0 + j];
        for (size_t j = 0; j < w; j++)
            acc[j] += part[j];
    }
    memcpy(out, acc, w * sizeof *acc);
}

void sb_embedding_bwd_pos_det(float *dwpe, const float *dy, const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c;
    const int col_blocks = blocks_of(s->c, SB_EMBED_COLS);
    const int tasks = s->t * col_blocks;
#pragma omp parallel for schedule(static)
    for (int task = 0; task < tasks; task++) {
        const size_t p = (size_t)(task / col_blocks);
        const size_t j0 = (size_t)(task % col_blocks) * SB_EMBED_COLS;
        float *out = dwpe + p * c + j0;
        if (j0 + SB_EMBED_COLS <= c)
            position_sums(out, dy, p, j0, SB_EMBED_COLS, s);
        else
            position_sums(out, dy, p, j0, c - j0, s);
    }
}
