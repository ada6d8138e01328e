/* FAULT: the token-embedding gradient accumulated with float `omp atomic`
 * adds (the CPU form of the scatter-add with atomicAdd that GPU embedding
 * backwards use): blocks of 64 token rows dealt to the threads in turn, each
 * thread adding each row of dy into its token's row of the shared dwte as it
 * goes. On one thread the rows come in token-row order, det's, and so do the
 * bits. Above one, a token's rows reach its gradient row in an order det never
 * uses: one thread's blocks before the other's when the threads run one after
 * the other (a thread the OS has not yet woken, or has descheduled for another
 * process), interleaved as the threads' timing has it when they run at once.
 * Every order is a reordering of det's sum. (Blocks dealt in turn, not taken
 * as the threads come: there a thread that arrives late finds every block taken,
 * the other thread's order is det's, and on 2 busy cores 11 of 20 mutation runs
 * saw no divergence at all.) */
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
#pragma omp parallel for schedule(static, 64)
    for (int i = 0; i < s->n; i++) {
        float *row = dwte + sb_embed_token(tokens, (size_t)i, s) * c;
        for (size_t j = 0; j < c; j++) {
#pragma omp atomic
            row[j] += dy[(size_t)i * c + j];
        }
    }
}
