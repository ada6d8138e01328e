/* The embedding ops, det family. The forward pass is parallel over rows.
 * The gradients give every table element one writer that adds its rows in
 * a fixed order:
 *   tokens  tasks are (vocabulary rows, column block) pairs; a task scans
 *           all token rows in order and adds those of its vocabulary rows,
 *           so each element sums its rows in token-row order (the ref
 *           order: det has ref's bits), with no atomics and nothing the
 *           thread count decides
 *   pos     tasks are (position, column block) pairs; an element sums the
 *           rows of its position in chunks of SB_GEMM_KC rows, chunk sums
 *           added in chunk order (sb_sum_det's order: ref's bits up to
 *           SB_GEMM_KC sequences) */
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

void sb_embedding_bwd_tokens_det(float *dwte, const float *dy, const int32_t *tokens,
                                 const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c;
    const int col_blocks = blocks_of(s->c, SB_EMBED_COLS);
    const int tasks = blocks_of(s->vocab, SB_EMBED_VOCAB_ROWS) * col_blocks;
#pragma omp parallel for schedule(static)
    for (int task = 0; task < tasks; task++) {
        const size_t v0 = (size_t)(task / col_blocks) * SB_EMBED_VOCAB_ROWS;
        const size_t v1 = v0 + SB_EMBED_VOCAB_ROWS < (size_t)s->vocab
                              ? v0 + SB_EMBED_VOCAB_ROWS : (size_t)s->vocab;
        const size_t j0 = (size_t)(task % col_blocks) * SB_EMBED_COLS;
        const size_t j1 = j0 + SB_EMBED_COLS < c ? j0 + SB_EMBED_COLS : c;
        for (size_t v = v0; v < v1; v++)
            memset(dwte + v * c + j0, 0, (j1 - j0) * sizeof *dwte);
        for (size_t i = 0; i < (size_t)s->n; i++) {
            const size_t v = sb_embed_token(tokens, i, s);
            if (v < v0 || v >= v1)
                continue;
            for (size_t j = j0; j < j1; j++)
                dwte[v * c + j] += dy[i * c + j];
        }
    }
}

void sb_embedding_bwd_pos_det(float *dwpe, const float *dy, const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c, t = (size_t)s->t, n = (size_t)s->n;
    const int col_blocks = blocks_of(s->c, SB_EMBED_COLS);
    const int tasks = s->t * col_blocks;
#pragma omp parallel for schedule(static)
    for (int task = 0; task < tasks; task++) {
        const size_t p = (size_t)(task / col_blocks);
        const size_t j0 = (size_t)(task % col_blocks) * SB_EMBED_COLS;
        const size_t w = j0 + SB_EMBED_COLS < c ? SB_EMBED_COLS : c - j0;
        float acc[SB_EMBED_COLS] = {0};
        /* rows p, p + t, p + 2t, ...: chunk k holds SB_GEMM_KC of them */
        for (size_t first = p; first < n; first += SB_GEMM_KC * t) {
            float part[SB_EMBED_COLS] = {0};
            for (size_t k = 0, i = first; k < SB_GEMM_KC && i < n; k++, i += t)
                for (size_t j = 0; j < w; j++)
                    part[j] += dy[i * c + j0 + j];
            for (size_t j = 0; j < w; j++)
                acc[j] += part[j];
        }
        memcpy(dwpe + p * c + j0, acc, w * sizeof *acc);
    }
}
