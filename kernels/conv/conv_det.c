/* conv2d, det family: im2col + the det GEMM, one writer per output element.
 *
 * fwd and bwd_data: images are independent, so threads take whole images and
 * each image runs the serial det GEMM (its bits fixed by sb_gemm.h).
 * bwd_filter and bwd_bias reduce over images; bwd_filter sums fixed groups of
 * SB_CONV_GROUP images into one partial each and adds the partials in group
 * order, bwd_bias gives each channel one writer. Nothing depends on the
 * thread count but the assignment of whole units of work.
 *
 * Threads take their images (or groups) in a static schedule: each thread
 * then writes the same half of a tensor at every call, and the ops before
 * and after it (relu, pooling, all split statically) touch that half on the
 * same core. A dynamic schedule dealt the images out in turn, and an
 * image's output lines moved between the cores' caches from one call to
 * the next: on a 2-core Zen 5 EPYC, conv1.fwd at 2 threads ran at 62-65
 * GFLOP/s, no faster than at one; static, 105-138.
 *
 * The forward pass and the weight gradient never materialise the column
 * matrix: the GEMM's B panels are cut from the image (implicit im2col), and
 * the filters and output gradients are read in place (sb_gemm_det_direct):
 * the det GEMM's arithmetic on the column matrix, packed another way. The
 * data gradient writes an image's column matrix and adds it into dx
 * (col2im); its product reads the output gradient in place as B
 * (sb_gemm_det_direct_b_rows). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "gemm/sb_data_move.h"
#include "gemm/sb_gemm.h"

static size_t image_size(const sb_conv_shape *s) { return (size_t)s->c * s->h * s->w; }
static size_t out_size(const sb_conv_shape *s) { return (size_t)s->k * s->p * s->q; }
static size_t taps(const sb_conv_shape *s) { return (size_t)s->c * s->r * s->s; }

/* An image and its shape: the source of an implicit column matrix. */
typedef struct conv_src {
    const float *x;
    const sb_conv_shape *s;
} conv_src;

/* B = col [crs][pq]: panels of nr positions, one row per tap. */
static void pack_col(float *dst, const void *src, int p0, int kc, int j0, int nc, int nr)
{
    const conv_src *cs = src;
    for (int j = j0; j < j0 + nc; j += nr, dst += (ptrdiff_t)kc * nr) {
        int cols = j0 + nc - j < nr ? j0 + nc - j : nr;
        sb_im2col_block(dst, nr, 1, cs->x, cs->s, p0, kc, j, cols);
        if (cols < nr)
            for (int p = 0; p < kc; p++)
                memset(dst + (ptrdiff_t)p * nr + cols, 0, (size_t)(nr - cols) * sizeof(float));
    }
}

/* Eight taps from t0 over kc positions from p0, transposed into a panel of
 * width nr, straight from the image: at stride 1 without padding, with q,
 * p0 and kc multiples of 8, every eight positions in a row of the panel
 * lie in one output row, so each 8 x 8 block is eight image runs. */
SB_ALWAYS_INLINE void col_trans_block_direct(float *dst, int nr, const float *x,
                                             const sb_conv_shape *s, int t0, int p0, int kc)
{
    const float *tap[8];
    for (int i = 0; i < 8; i++)
        tap[i] = x + sb_conv_tap_offset(s, sb_conv_tap_of(s, t0 + i));
    int oh = p0 / s->q, ow = p0 % s->q;
    for (int p = 0; p < kc; p += 8) {
        const float *run[8];
        for (int i = 0; i < 8; i++)
            run[i] = tap[i] + (ptrdiff_t)oh * s->w + ow;
        sb_transpose8_rows(dst + (ptrdiff_t)p * nr, nr, run);
        if ((ow += 8) == s->q)
            ow = 0, oh++;
    }
}

/* B = col^T [pq][crs]: panels of nr taps, one row per position. Eight taps
 * at a time are cut from the image as rows of positions (contiguous runs),
 * then transposed into the panel; in the plain case above, without the
 * copy in between. */
_Static_assert(SB_GEMM_NR % 8 == 0 && SB_GEMM_NRN % 8 == 0, "panels hold whole 8-tap blocks");
SB_ISA_VARIANTS(pack_col_trans, (float *dst, const void *src, int p0, int kc, int j0, int nc, int nr),
                (dst, src, p0, kc, j0, nc, nr))
{
    const conv_src *cs = src;
    const sb_conv_shape *s = cs->s;
    bool direct = s->stride == 1 && s->pad == 0 && s->q % 8 == 0 && p0 % 8 == 0 && kc % 8 == 0;
    float rows[8 * SB_GEMM_KC];
    SB_ASSERT(kc <= SB_GEMM_KC);
    for (int j = j0; j < j0 + nc; j += nr, dst += (ptrdiff_t)kc * nr) {
        int cols = j0 + nc - j < nr ? j0 + nc - j : nr;
        for (int t = 0; t < nr; t += 8) {
            int nt = cols - t; /* taps of this block inside the panel's columns */
            nt = nt < 0 ? 0 : nt > 8 ? 8 : nt;
            if (direct && nt == 8) {
                col_trans_block_direct(dst + t, nr, cs->x, s, j + t, p0, kc);
                continue;
            }
            if (nt > 0)
                sb_im2col_block(rows, kc, 1, cs->x, s, j + t, nt, p0, kc);
            memset(rows + (ptrdiff_t)nt * kc, 0, (size_t)(8 - nt) * (size_t)kc * sizeof(float));
            int p = 0;
            for (; p + 8 <= kc; p += 8)
                sb_transpose8(dst + (ptrdiff_t)p * nr + t, nr, rows + p, kc);
            for (; p < kc; p++)
                for (int i = 0; i < 8; i++)
                    dst[(ptrdiff_t)p * nr + t + i] = rows[i * kc + p];
        }
    }
}

/* y_n [k][pq] = b + W [k][crs] col_n [crs][pq]; the bias enters before chunk
 * 0, added as the first chunk's sums are stored: a separate pass filling y
 * with the bias first took a third of conv1's forward time. */
void sb_conv2d_fwd_det(float *y, const float *x, const float *w, const float *b,
                       const sb_conv_shape *s)
{
    int pq = s->p * s->q, crs = (int)taps(s);
#pragma omp parallel
    {
        float *bbuf = sb_floats_new(sb_gemm_b_buf_floats(pq, crs));
#pragma omp for schedule(static)
        for (int img = 0; img < s->n; img++) {
            conv_src src = {x + img * image_size(s), s};
            sb_gemm_det_direct(y + img * out_size(s), sb_matview_rows(w, crs),
                               (sb_gemm_b){pack_col, &src}, bbuf, pq, s->k, pq, crs, false,
                               (sb_gemm_bias){b, false});
        }
        free(bbuf);
    }
}

void sb_conv2d_bwd_data_image(float *dxn, float *col, float *b_buf, const float *dyn,
                              const float *w, const sb_conv_shape *s)
{
    int pq = s->p * s->q, crs = (int)taps(s);
    sb_gemm_det_direct_b_rows(col, sb_matview_trans(w, crs), sb_matview_rows(dyn, pq), b_buf,
                              pq, crs, pq, s->k, false);
    sb_col2im(dxn, col, s);
}

void sb_conv2d_bwd_data_det(float *dx, const float *dy, const float *w, const sb_conv_shape *s)
{
    int pq = s->p * s->q;
#pragma omp parallel
    {
        float *col = sb_floats_new(taps(s) * (size_t)pq);
        float *bbuf = sb_floats_new(sb_gemm_b_buf_floats(pq, s->k));
#pragma omp for schedule(static)
        for (int img = 0; img < s->n; img++)
            sb_conv2d_bwd_data_image(dx + img * image_size(s), col, bbuf, dy + img * out_size(s),
                                     w, s);
        free(bbuf);
        free(col);
    }
}

void sb_conv2d_bwd_filter_images(float *part, float *b_buf, const float *dy, const float *x,
                                 const sb_conv_shape *s, int i0, int i1, bool onto)
{
    int pq = s->p * s->q, crs = (int)taps(s);
    for (int img = i0; img < i1; img++) {
        /* part [k][crs] (+)= dy_n [k][pq] col_n^T [pq][crs] */
        conv_src src = {x + img * image_size(s), s};
        sb_gemm_det_direct(part, sb_matview_rows(dy + img * out_size(s), pq),
                           (sb_gemm_b){pack_col_trans, &src}, b_buf, crs, s->k, crs, pq,
                           onto || img > i0, SB_GEMM_NO_BIAS);
    }
}

void sb_conv2d_bwd_filter_groups(float *dw, float *part, const float *dy, const float *x,
                                 const sb_conv_shape *s, bool onto)
{
    int groups = (s->n + SB_CONV_GROUP - 1) / SB_CONV_GROUP;
    size_t nw = (size_t)s->k * taps(s);
#pragma omp parallel
    {
        float *bbuf = sb_floats_new(sb_gemm_b_buf_floats((int)taps(s), s->p * s->q));
#pragma omp for schedule(static)
        for (int g = 0; g < groups; g++) {
            int i0 = g * SB_CONV_GROUP;
            int i1 = i0 + SB_CONV_GROUP < s->n ? i0 + SB_CONV_GROUP : s->n;
            sb_conv2d_bwd_filter_images(part + nw * (size_t)g, bbuf, dy, x, s, i0, i1, onto);
        }
        free(bbuf);
        /* group partials in group order, one writer per weight */
        sb_partials_sum(dw, part, nw, groups);
    }
}

void sb_conv2d_bwd_filter_det(float *dw, const float *dy, const float *x, const sb_conv_shape *s)
{
    int groups = (s->n + SB_CONV_GROUP - 1) / SB_CONV_GROUP;
    float *part = sb_floats_new((size_t)s->k * taps(s) * (size_t)groups);
    sb_conv2d_bwd_filter_groups(dw, part, dy, x, s, false);
    free(part);
}

void sb_conv2d_bwd_bias_det(float *db, const float *dy, const sb_conv_shape *s)
{
    size_t pq = (size_t)s->p * s->q;
#pragma omp parallel for schedule(static)
    for (int f = 0; f < s->k; f++)
        db[f] = sb_sum_det_rows(dy + (size_t)f * pq, (ptrdiff_t)(s->k * pq), s->n, pq, 0.0f);
}
