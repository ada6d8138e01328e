/* Embedding reordering bounds (sb_dot_bound, sb_kernels.h): a gradient
 * table element is a sum of m rows' values of dy (the rows holding its
 * token, or at its position), so two orders differ by at most
 * 2 gamma(m) sum |dy| over those rows; 0 where no row contributes. The
 * forward pass adds two values once: exact (EXACT in kernels.def). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"

/* bound [rows][c] from the sums of |dy| and the row counts per table row */
static void table_bound(float *bound, size_t rows, const float *dy, const int32_t *tokens,
                        const sb_embed_shape *s)
{
    const size_t c = (size_t)s->c;
    double *abs_sum = calloc(rows * c, sizeof *abs_sum);
    double *count = calloc(rows, sizeof *count);
    SB_ASSERT(abs_sum != NULL && count != NULL);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const size_t r = sb_embed_table_row(tokens, i, s);
        count[r] += 1.0;
        for (size_t j = 0; j < c; j++)
            abs_sum[r * c + j] += fabs((double)dy[i * c + j]);
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < c; j++)
            bound[r * c + j] = sb_dot_bound(count[r], abs_sum[r * c + j]);
    free(abs_sum);
    free(count);
}

void sb_embedding_bwd_tokens_bound(float *dwte, const float *dy, const int32_t *tokens,
                                   const sb_embed_shape *s)
{
    table_bound(dwte, (size_t)s->vocab, dy, tokens, s);
}

void sb_embedding_bwd_pos_bound(float *dwpe, const float *dy, const sb_embed_shape *s)
{
    table_bound(dwpe, (size_t)s->t, dy, NULL, s);
}
