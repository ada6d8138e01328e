/* The embedding ops in double, from the float inputs the op read.
 *   fwd          y = wte[token] + wpe[position]: one rounded add,
 *                u |y| plus 2^-150 for a result that underflows
 *   bwd_tokens   a table element is the sum of the m rows of dy holding its
 *                token: sb_refd_sum_bound with path m, as every family
 *                adds them in one chain (det and ref in token-row order,
 *                loose per thread, then the thread partials: no path is
 *                longer than m)
 *   bwd_pos      the sum of the m rows at its position: path m for ref and
 *                loose, and for det (chunks of SB_GEMM_KC rows) the path
 *                of sb_refd_sum_path */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "gemm/sb_gemm.h"
#include "refd_sums.h"

void sb_embedding_fwd_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    (void)f;
    const sb_embed_shape *s = &c->embed;
    const int32_t *tokens = SB_REFD_LABELS(c, 0);
    const float *wte = SB_REFD_IN(c, 1), *wpe = SB_REFD_IN(c, 2);
    const size_t w = (size_t)s->c;
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const size_t v = sb_embed_token(tokens, i, s), p = i % (size_t)s->t;
        for (size_t j = 0; j < w; j++) {
            const size_t e = i * w + j;
            value[e] = (double)wte[v * w + j] + (double)wpe[p * w + j];
            bound[e] = SB_REFD_U * fabs(value[e]) + SB_REFD_UNDERFLOW;
        }
    }
}

/* value and bound [rows][c]: row r sums dy's rows whose table row is r (their
 * token, or with tokens NULL their position); det_chunked: det sums in
 * chunks of SB_GEMM_KC rows */
static void table_sums(double *value, double *bound, size_t rows, const sb_op_call *c,
                       const int32_t *tokens, sb_family f, bool det_chunked)
{
    const sb_embed_shape *s = &c->embed;
    const float *dy = SB_REFD_IN(c, 0);
    const size_t w = (size_t)s->c;
    double *count = calloc(rows, sizeof *count);
    SB_ASSERT(count != NULL);
    memset(value, 0, rows * w * sizeof *value);
    memset(bound, 0, rows * w * sizeof *bound);
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const size_t r = sb_embed_table_row(tokens, i, s);
        count[r] += 1.0;
        for (size_t j = 0; j < w; j++) {
            value[r * w + j] += (double)dy[i * w + j];
            bound[r * w + j] += fabs((double)dy[i * w + j]); /* the sum of |terms| */
        }
    }
    for (size_t r = 0; r < rows; r++) {
        const double m = count[r];
        const double path = det_chunked ? sb_refd_sum_path(f, m, ceil(m / SB_GEMM_KC)) : m;
        for (size_t j = 0; j < w; j++)
            bound[r * w + j] = sb_refd_sum_bound(bound[r * w + j], m, path);
    }
    free(count);
}

void sb_embedding_bwd_tokens_refd(double *value, double *bound, const sb_op_call *c,
                                  sb_family f)
{
    table_sums(value, bound, (size_t)c->embed.vocab, c, SB_REFD_LABELS(c, 1), f, false);
}

void sb_embedding_bwd_pos_refd(double *value, double *bound, const sb_op_call *c, sb_family f)
{
    table_sums(value, bound, (size_t)c->embed.t, c, NULL, f, true);
}
