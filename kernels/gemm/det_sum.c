/* The det sums of sb_gemm.h over a run of floats: chunks of SB_GEMM_KC, each
 * summed left to right from +0, the chunk sums added in chunk order; and the
 * same sums for several rows or columns at a time. */
#include "sb_common.h"
#include "gemm/sb_gemm.h"

#define KC SB_GEMM_KC

float sb_sum_det(const float *x, ptrdiff_t stride, size_t n, float init)
{
    float acc = init;
    for (size_t i0 = 0; i0 < n; i0 += KC) {
        size_t i1 = n - i0 < KC ? n : i0 + KC;
        float s = 0.0f;
        for (size_t i = i0; i < i1; i++)
            s += x[(ptrdiff_t)i * stride];
        acc += s;
    }
    return acc;
}

/* Rows a block of sb_sum_det_rows sums side by side, and the most chunks a
 * row may have for that (longer rows are summed one after the other). */
enum { SUM_ROWS = 8, SUM_CHUNKS_MAX = 8 };

float sb_sum_det_rows(const float *x, ptrdiff_t ld, int rows, size_t n, float init)
{
    float acc = init;
    size_t chunks = (n + KC - 1) / KC;
    int r = 0;
    if (chunks <= SUM_CHUNKS_MAX)
        for (; r + SUM_ROWS <= rows; r += SUM_ROWS) {
            /* the chunk sums of SUM_ROWS rows: independent chains, one add
             * of each per element instead of one chain waiting on itself */
            float s[SUM_CHUNKS_MAX][SUM_ROWS];
            for (size_t j = 0; j < chunks; j++) {
                size_t i1 = n - j * KC < KC ? n : (j + 1) * KC;
                for (int u = 0; u < SUM_ROWS; u++)
                    s[j][u] = 0.0f;
                for (size_t i = j * KC; i < i1; i++)
                    for (int u = 0; u < SUM_ROWS; u++)
                        s[j][u] += x[(r + u) * ld + (ptrdiff_t)i];
            }
            /* then onto acc in sb_sum_det's order: row by row, chunk by chunk */
            for (int u = 0; u < SUM_ROWS; u++)
                for (size_t j = 0; j < chunks; j++)
                    acc += s[j][u];
        }
    for (; r < rows; r++)
        acc = sb_sum_det(x + r * ld, 1, n, acc);
    return acc;
}
