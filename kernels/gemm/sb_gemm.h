/* The GEMM core shared by conv and dense: C = [C +] A B in single precision.
 *
 * The det summation order (the definition every det GEMM result follows,
 * whatever the thread count, tile position or ISA):
 *   the reduction index p = 0..k-1 is cut into chunks of SB_GEMM_KC;
 *   chunk j is one fmaf chain in p order starting from +0:
 *       s_j = fmaf(a[i][p], b[p][jj], s_j)
 *   and C is updated chunk after chunk in chunk order:
 *       C = s_0 (or C + s_0 when accumulating), then C = C + s_1, ...
 * A long reduction (dense K = 9216) so costs about (SB_GEMM_KC + k/SB_GEMM_KC)
 * roundings on its worst path instead of k, and the bits depend on the
 * inputs only: threads split the output, or share out whole chunks whose
 * sums then enter C in chunk order (sb_gemm_det), never a chunk's chain.
 *
 * Fixed-size chunks need no partial buffers: the chunk is also the K cache
 * block, so the register tile of one chunk is added into C when it ends. */
#ifndef SB_GEMM_H
#define SB_GEMM_H

#include <stdbool.h>
#include <stddef.h>

/* The summation chunk (part of the det definition; changing it changes bits). */
#define SB_GEMM_KC 256

/* The register tiles (rows x columns of C), and so the widths of packed
 * panels: the wide tile, and the narrow one for products of at most
 * SB_GEMM_NRN columns. Free to change: an element's arithmetic does not
 * depend on them. The wide tile's rows (the height of packed A panels)
 * depend on the instruction set: SB_GEMM_MR, or SB_GEMM_MR_AVX2 where the
 * tile is four blocks of 6 rows (gemm_tile_body.h); buffers are sized for
 * SB_GEMM_MR_MAX, the larger. */
#define SB_GEMM_MR 8
#define SB_GEMM_MR_AVX2 24
#define SB_GEMM_MR_MAX 24
#define SB_GEMM_NR 48
#define SB_GEMM_MRN 16
#define SB_GEMM_NRN 16
/* The tall tile, for products of at most SB_GEMM_NRT columns; it reads B
 * panels SB_GEMM_NRN wide. */
#define SB_GEMM_MRT 32
#define SB_GEMM_NRT 12
/* The panel rest, for the last at most SB_GEMM_NRP columns of a wider
 * product whose A lies by rows: it reads the wide tiles' packed A. */
#define SB_GEMM_NRP 4
/* The short tile, for a reduction of at most SB_GEMM_KS steps: its rows;
 * it reads B panels SB_GEMM_NR wide. */
#define SB_GEMM_KS 12
#define SB_GEMM_MRS 48

/* A read-only matrix view: element (i, j) is at p[i*rs + j*cs], so a
 * transpose is a view with the strides swapped. */
typedef struct sb_matview {
    const float *p;
    ptrdiff_t rs, cs;
} sb_matview;

static inline sb_matview sb_matview_rows(const float *p, ptrdiff_t ld)
{
    return (sb_matview){p, ld, 1};   /* row-major, leading dimension ld */
}

static inline sb_matview sb_matview_trans(const float *p, ptrdiff_t ld)
{
    return (sb_matview){p, 1, ld};   /* transpose of a row-major matrix */
}

/* A bias the first chunk's sums are stored onto (when not accumulating):
 * one per row of C (conv's channels, bias[i]) or one per column (dense's
 * outputs, bias[j]); p NULL for none. C = bias + A B has the bits of
 * filling C with the bias and accumulating, without that pass over C. */
typedef struct sb_gemm_bias {
    const float *p;
    bool per_column;
} sb_gemm_bias;

#define SB_GEMM_NO_BIAS ((sb_gemm_bias){NULL, false})

/* The bias of the block of C from row i and column j on. */
static inline sb_gemm_bias sb_gemm_bias_at(sb_gemm_bias bias, int i, int j)
{
    if (bias.p)
        bias.p += bias.per_column ? j : i;
    return bias;
}

/* The bias of element (i, j); bias.p not NULL. */
static inline float sb_gemm_bias_of(sb_gemm_bias bias, int i, int j)
{
    return bias.p[bias.per_column ? j : i];
}

/* Packing buffers of one serial GEMM; one per thread, reused across calls
 * whose m, n, k are no larger than those it was made for. */
typedef struct sb_gemm_work sb_gemm_work;
sb_gemm_work *sb_gemm_work_new(int m, int n, int k);   /* NULL when out of memory */
void sb_gemm_work_free(sb_gemm_work *w);

/* Serial det GEMM into row-major C (leading dimension ldc):
 *   c: [m][ldc]   a: [m][k] view   b: [k][n] view
 * accumulate: false writes C = A B, true writes C = C + A B (C's old value
 * enters before chunk 0, e.g. a bias). */
void sb_gemm_det_serial(float *c, sb_matview a, sb_matview b, sb_gemm_work *w,
                        ptrdiff_t ldc, int m, int n, int k, bool accumulate);

/* The same result, over the threads of a new OpenMP team: a product below
 * 2^21 multiply-adds runs serially on the direct path below; one whose K is
 * long against its output (k >= 4 max(m, n), as many chunks as threads)
 * hands whole chunks to the threads and adds their sums into C in chunk
 * order; any other splits the output into rectangles, one per thread. All
 * give the same bits. SB_ASSERT on out of memory. */
void sb_gemm_det(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m,
                 int n, int k, bool accumulate);

/* sb_gemm_det storing C = bias + A B (dense's forward pass: the bias enters
 * before chunk 0). */
void sb_gemm_det_biased(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m, int n,
                        int k, sb_gemm_bias bias);

/* ---- A in place, B from its source ------------------------------------
 * For a product repeated with one operand fixed (a conv's filters, image after
 * image), A is read where it lies, shared read-only by the threads, and B is
 * packed straight from its source (an implicit im2col) instead of from a
 * materialised matrix. Small products (below the parallel threshold of
 * sb_gemm_det) take this path too: packing A would cost as much as the
 * product. The arithmetic is the det definition above; only the register
 * tile differs (gemm_tile.h): SB_GEMM_NR columns wide (the short tile for k
 * <= SB_GEMM_KS), or for n <= 16 the narrow or (n <= 12) the tall one. */

/* Packs B[p0 .. p0+kc)[j0 .. j0+nc) into panels of nr columns,
 * [panel][kc][nr], columns past nc zero. src is the source's own description
 * (a matview, an image and its conv shape, ...). */
typedef void sb_gemm_pack_b_fn(float *dst, const void *src, int p0, int kc, int j0, int nc,
                               int nr);

typedef struct sb_gemm_b {
    sb_gemm_pack_b_fn *pack;
    const void *src;
} sb_gemm_b;

/* The packer of a matview B: src is a const sb_matview *. */
sb_gemm_pack_b_fn sb_gemm_pack_b_view;

/* Floats of the B packing buffer sb_gemm_det_direct needs for n, k. */
size_t sb_gemm_b_buf_floats(int n, int k);

/* Serial det GEMM C [m][ldc] (+)= A B, A read in place (its rows or its
 * columns contiguous: a.cs == 1 or a.rs == 1), B packed into b_buf by
 * b.pack, a panel over all its chunks or a block of panels over one chunk
 * (gemm.c); with a bias (accumulate false), C = bias + A B. */
void sb_gemm_det_direct(float *c, sb_matview a, sb_gemm_b b, float *b_buf, ptrdiff_t ldc,
                        int m, int n, int k, bool accumulate, sb_gemm_bias bias);

/* sb_gemm_det_direct (no bias) on a B by rows that comes from memory and
 * serves few row tiles: read where it lies where A lies by columns, B's rows
 * are whole cache lines apart, n is a whole number of SB_GEMM_BLOCK_COLS
 * and m a few hundred rows at most (gemm.c); else packed into b_buf
 * (sb_gemm_b_buf_floats(n, k) floats) as there. The same bits either way. */
void sb_gemm_det_direct_b_rows(float *c, sb_matview a, sb_matview b, float *b_buf,
                               ptrdiff_t ldc, int m, int n, int k, bool accumulate);

/* The loose GEMM: split-K over omp_get_max_threads() threads, per-thread
 * partial products combined in thread order; a product of fewer than
 * SB_GEMM_MR rows (a batch of a few samples) serially, as a BLAS's GEMV
 * path. Bits follow the thread count, and the batch size. */
void sb_gemm_loose(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m,
                   int n, int k, bool accumulate);
/* The loose GEMM of a product whose rows are a batch's samples (a dense
 * layer's forward pass): sb_gemm_loose, except that a tall product (2048
 * rows or more) splits its rows over the threads, each row over all of K,
 * as BLAS libraries thread a tall GEMM. Its bits do not follow the thread
 * count; a sample's follow whether its batch made the product tall. */
void sb_gemm_loose_batch(float *c, sb_matview a, sb_matview b, ptrdiff_t ldc, int m,
                         int n, int k, bool accumulate);

/* Det sum of n floats x[i*stride]: chunks of SB_GEMM_KC summed left to right
 * from +0, chunk sums added in chunk order onto `init`. */
float sb_sum_det(const float *x, ptrdiff_t stride, size_t n, float init);

/* The same bits as init = sb_sum_det(x + r*ld, 1, n, init) for r = 0..rows-1
 * (conv's bias gradient: one row per image), several rows at a time. */
float sb_sum_det_rows(const float *x, ptrdiff_t ld, int rows, size_t n, float init);

/* The same bits as out[j] = sb_sum_det(x + j, ld, rows, 0.0f) for j =
 * 0..cols-1 (dense's bias gradient: a column per output, summed down the
 * batch), the columns side by side, blocks of them over the threads of a
 * new OpenMP team. */
void sb_sum_det_cols(float *out, const float *x, ptrdiff_t ld, size_t rows, int cols);

#endif
