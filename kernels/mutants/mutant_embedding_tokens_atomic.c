/* FAULT: the token-embedding gradient accumulated with float `omp atomic`
 * adds (the CPU form of the scatter-add with atomicAdd that GPU embedding
 * backwards use): threads take blocks of token rows as they come and add
 * each row of dy into its token's row of the shared dwte, so the order in
 * which a token's rows arrive, and with it the bits, changes from run to
 * run at any thread count above one. Every order is a reordering of det's
 * sum. On one thread the rows come in token-row order, det's, and so do the
 * bits. (Blocks of 64 rows, not single rows: threads that take rows one by
 * one add a token's rows in the order they were handed out nearly always,
 * so the race would show only now and then.) */
#include <string.h>

#include "embed/embed.h"
#include "mutants.h"

void sb_mutant_embedding_tokens_atomic(float *dwte,             /* [vocab][c] */
                                       const float *dy,         /* [n][c] */
                                       const int32_t *tokens,   /* [n] */
                                       const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c;
    memset(dwte, 0, (size_t)s->vocab * c * sizeof *dwte);
#pragma omp parallel for schedule(dynamic, 64)
    for (int i = 0; i < s->n; i++) {
        float *row = dwte + sb_embed_token(tokens, (size_t)i, s) * c;
        for (size_t j = 0; j < c; j++) {
#pragma omp atomic
            row[j] += dy[(size_t)i * c + j];
        }
    }
}
