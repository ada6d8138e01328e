/* The embedding gradients, loose family: the usual OpenMP code. Threads
 * take equal slices of the token rows and accumulate into private partial
 * tables, which are added in thread order (sb_partials_sum; not a
 * reduction clause, whose combination order follows thread arrival): the
 * bits follow the thread count. */
#include <omp.h>
#include <stdlib.h>

#include "embed.h"

/* out [rows][c]: row r the sum of dy's rows whose table row is r, their
 * token, or with tokens NULL their position */
static void partial_tables(float *out, size_t rows, const float *dy, const int32_t *tokens,
                           const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c;
    const int threads = omp_get_max_threads();
    float *part = calloc(rows * c * (size_t)threads, sizeof *part);
    SB_ASSERT(part != NULL);
#pragma omp parallel num_threads(threads)
    {
        float *mine = part + rows * c * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++) {
            const size_t r = sb_embed_table_row(tokens, (size_t)i, s);
            for (size_t j = 0; j < c; j++)
                mine[r * c + j] += dy[(size_t)i * c + j];
        }
    }
    sb_partials_sum(out, part, rows * c, threads);
    free(part);
}

void sb_embedding_bwd_tokens_loose(float *dwte, const float *dy, const int32_t *tokens,
                                   const sb_embed_shape *s)
{
    partial_tables(dwte, (size_t)s->vocab, dy, tokens, s);
}

void sb_embedding_bwd_pos_loose(float *dwpe, const float *dy, const sb_embed_shape *s)
{
    partial_tables(dwpe, (size_t)s->t, dy, NULL, s);
}
