/* The embedding ops, the readable definitions: serial loops in row order.
 * A gradient table element starts at +0 and takes its rows' values in
 * token-row order. */
#include <string.h>

#include "embed.h"

void sb_embedding_fwd_ref(float *y,                /* [n][c] */
                          const int32_t *tokens,   /* [n] in [0, vocab) */
                          const float *wte,        /* [vocab][c] */
                          const float *wpe,        /* [t][c] */
                          const sb_embed_shape *s)
{
    for (size_t i = 0; i < (size_t)s->n; i++)
        sb_embed_row(y, tokens, wte, wpe, s, i);
}

void sb_embedding_bwd_tokens_ref(float *dwte,             /* [vocab][c] */
                                 const float *dy,         /* [n][c] */
                                 const int32_t *tokens,   /* [n] */
                                 const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c;
    memset(dwte, 0, (size_t)s->vocab * c * sizeof *dwte);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        float *row = dwte + sb_embed_token(tokens, i, s) * c;
        for (size_t j = 0; j < c; j++)
            row[j] += dy[i * c + j];
    }
}

void sb_embedding_bwd_pos_ref(float *dwpe,         /* [t][c] */
                              const float *dy,     /* [n][c] */
                              const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c, t = (size_t)s->t;
    memset(dwpe, 0, t * c * sizeof *dwpe);
    for (size_t i = 0; i < (size_t)s->n; i++)
        for (size_t j = 0; j < c; j++)
            dwpe[(i % t) * c + j] += dy[i * c + j];
}
