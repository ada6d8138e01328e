/* The det sums of sb_gemm.h over a run of floats: chunks of SB_GEMM_KC, each
 * summed left to right from +0, the chunk sums added in chunk order; and the
 * same sums for several rows or columns at a time. */
#include <omp.h>
#include <stdlib.h>

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

/* Columns a block of sb_sum_det_cols sums side by side: 64 floats of a row,
 * four AVX-512 or eight AVX2 vectors of chains, each adding a row per step. */
enum { SUM_COLS = 64 };

/* out[j] = sb_sum_det(x + j, ld, rows, 0.0f) for j < cols <= SUM_COLS: each
 * column's chunk sums and their total in a lane of their own, a row at a
 * time (the same additions in the same order as sb_sum_det's; 0 + the first
 * chunk's sum is sb_sum_det's init + that sum). */
SB_ALWAYS_INLINE void sum_cols_block(float *restrict out, const float *restrict x, ptrdiff_t ld,
                                     size_t rows, int cols)
{
    float acc[SUM_COLS], s[SUM_COLS];
    for (int j = 0; j < cols; j++)
        acc[j] = 0.0f;
    for (size_t i0 = 0; i0 < rows; i0 += KC) {
        size_t i1 = rows - i0 < KC ? rows : i0 + KC;
        for (int j = 0; j < cols; j++)
            s[j] = 0.0f;
        for (size_t i = i0; i < i1; i++) {
            const float *xi = x + (ptrdiff_t)i * ld;
#pragma omp simd
            for (int j = 0; j < cols; j++)
                s[j] += xi[j];
        }
        for (int j = 0; j < cols; j++)
            acc[j] += s[j];
    }
    for (int j = 0; j < cols; j++)
        out[j] = acc[j];
}

/* A whole block with its width a constant (the chains stay in registers),
 * or the last columns */
SB_ISA_VARIANTS(sum_cols, (float *out, const float *x, ptrdiff_t ld, size_t rows, int cols),
                (out, x, ld, rows, cols))
{
    if (cols == SUM_COLS)
        sum_cols_block(out, x, ld, rows, SUM_COLS);
    else
        sum_cols_block(out, x, ld, rows, cols);
}

/* At 2 threads or more over 2 chunks or more: tasks are (chunk, column
 * block) pairs, chunk-major, so that a thread's static share is a run of
 * chunks, rows that the row-parallel ops before it left in its cache (a
 * split by columns had every thread read every row); each task's sum
 * (0 + the chunk's, sum_cols over one chunk) goes to part, then the
 * chunks' sums are added in chunk order from +0. That is sb_sum_det's
 * order: a chunk's sum s and 0 + s differ only for s = -0, and adding
 * either leaves a running sum that started from +0 unchanged, as no such
 * sum is ever -0. */
static void sum_cols_by_chunks(float *out, const float *x, ptrdiff_t ld, size_t rows, int cols,
                               int blocks)
{
    const int chunks = (int)((rows + KC - 1) / KC), tasks = chunks * blocks;
    float *part = sb_floats_new((size_t)chunks * (size_t)cols);
#pragma omp parallel for schedule(static)
    for (int task = 0; task < tasks; task++) {
        const int k = task / blocks, j0 = task % blocks * SUM_COLS;
        const int n = cols - j0 < SUM_COLS ? cols - j0 : SUM_COLS;
        const size_t i0 = (size_t)k * KC, len = rows - i0 < KC ? rows - i0 : KC;
        sum_cols(part + (size_t)k * (size_t)cols + j0, x + (ptrdiff_t)i0 * ld + j0, ld, len, n);
    }
    for (int j = 0; j < cols; j++) {
        float acc = 0.0f;
        for (int k = 0; k < chunks; k++)
            acc += part[(size_t)k * (size_t)cols + (size_t)j];
        out[j] = acc;
    }
    free(part);
}

void sb_sum_det_cols(float *out, const float *x, ptrdiff_t ld, size_t rows, int cols)
{
    int blocks = (cols + SUM_COLS - 1) / SUM_COLS;
    if (rows > KC && omp_get_max_threads() > 1) {
        sum_cols_by_chunks(out, x, ld, rows, cols, blocks);
        return;
    }
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int b = 0; b < blocks; b++) {
        int j0 = b * SUM_COLS, n = cols - j0 < SUM_COLS ? cols - j0 : SUM_COLS;
        sum_cols(out + j0, x + j0, ld, rows, n);
    }
}
