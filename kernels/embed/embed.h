/* The embedding area's shared pieces, for its own files, its tests and the
 * mutants of its ops (kernels/mutants/): the token check and the row of the
 * forward pass, which every family runs, so that the families differ only
 * in how they loop and sum. */
#ifndef SB_EMBED_H
#define SB_EMBED_H

#include <stddef.h>

#include "op_kernels.h"

/* Columns of the position gradient one det task owns (a cache line of
 * floats): tasks are (position, column block) pairs, so every element has
 * one writer whatever the thread count. */
#define SB_EMBED_COLS 16

/* Token of row i, checked: an id outside the table is a broken invariant
 * (the harness and the model draw them in range), never a stray write. */
static inline size_t sb_embed_token(const int32_t *tokens, size_t i, const sb_embed_shape *s)
{
    const int32_t v = tokens[i];
    SB_ASSERT(v >= 0 && v < s->vocab);
    return (size_t)v;
}

/* The gradient-table row that token row i adds into: its token, or with
 * tokens NULL (the position table) its position */
static inline size_t sb_embed_table_row(const int32_t *tokens, size_t i, const sb_embed_shape *s)
{
    return tokens ? sb_embed_token(tokens, i, s) : i % (size_t)s->t;
}

/* y row i = wte[tokens[i]] + wpe[i % t]: one add per element, exact
 * whatever the loop order */
static inline void sb_embed_row(float *y, const int32_t *tokens, const float *wte,
                                const float *wpe, const sb_embed_shape *s, size_t i)
{
    const size_t c = (size_t)s->c;
    const float *tok = wte + sb_embed_token(tokens, i, s) * c;
    const float *pos = wpe + (i % (size_t)s->t) * c;
    for (size_t j = 0; j < c; j++)
        y[i * c + j] = tok[j] + pos[j];
}

#endif
