/* conv2d, det family: im2col + the det GEMM, one writer per output element.
 *
 * fwd and bwd_data: images are independent, so threads take whole images and
 * each image runs the serial det GEMM (its bits fixed by sb_gemm.h).
 * bwd_filter and bwd_bias reduce over images; bwd_filter sums fixed groups of
 * SB_CONV_GROUP images into one partial each and adds the partials in group
 * order, bwd_bias gives each channel one writer. Nothing depends on the
 * thread count but the assignment of whole units of work. */
#include <stdlib.h>
#include <string.h>

#include "conv_det.h"
#include "conv_im2col.h"
#include "gemm/sb_gemm.h"

/* Images per partial weight gradient: part of the det definition. Small
 * enough to give threads work at batch 128, large enough that the partials
 * (one k*c*r*s copy per group) stay small. */
#define SB_CONV_GROUP 4

static float *floats_new(size_t n)
{
    float *p = malloc(n * sizeof(float));
    SB_ASSERT(p != NULL);
    return p;
}

static size_t image_size(const sb_conv_shape *s) { return (size_t)s->c * s->h * s->w; }
static size_t out_size(const sb_conv_shape *s) { return (size_t)s->k * s->p * s->q; }
static size_t taps(const sb_conv_shape *s) { return (size_t)s->c * s->r * s->s; }

/* y_n [k][pq] = b + W [k][crs] col [crs][pq]; the bias enters before chunk 0 */
void sb_conv2d_fwd_image(float *yn, float *col, sb_gemm_work *wk, const float *xn,
                         const float *w, const float *b, const sb_conv_shape *s)
{
    int pq = s->p * s->q, crs = (int)taps(s);
    sb_im2col(col, xn, s, pq, 1);
    for (int f = 0; f < s->k; f++)
        for (int i = 0; i < pq; i++)
            yn[(size_t)f * pq + i] = b[f];
    sb_gemm_det_serial(yn, sb_matview_rows(w, crs), sb_matview_rows(col, pq), wk,
                       pq, s->k, pq, crs, true);
}

/* dx_n = col2im(W^T [crs][k] dy_n [k][pq]) */
void sb_conv2d_bwd_data_image(float *dxn, float *col, sb_gemm_work *wk,
                              const float *dyn, const float *w, const sb_conv_shape *s)
{
    int pq = s->p * s->q, crs = (int)taps(s);
    sb_gemm_det_serial(col, sb_matview_trans(w, crs), sb_matview_rows(dyn, pq), wk,
                       pq, crs, pq, s->k, false);
    memset(dxn, 0, image_size(s) * sizeof(float));
    sb_col2im_add(dxn, col, s);
}

/* dw [k][crs] (+)= dy_n [k][pq] col_n^T [pq][crs] */
void sb_conv2d_bwd_filter_image(float *dw, float *col, sb_gemm_work *wk,
                                const float *dyn, const float *xn,
                                const sb_conv_shape *s, bool accumulate)
{
    int pq = s->p * s->q, crs = (int)taps(s);
    sb_im2col(col, xn, s, pq, 1);
    sb_gemm_det_serial(dw, sb_matview_rows(dyn, pq), sb_matview_trans(col, pq), wk,
                       crs, s->k, crs, pq, accumulate);
}

static void conv2d_fwd_det(float *y, const float *x, const float *w, const float *b,
                           const sb_conv_shape *s)
{
#pragma omp parallel
    {
        float *col = floats_new(taps(s) * (size_t)s->p * s->q);
        sb_gemm_work *wk = sb_gemm_work_new(s->k, s->p * s->q, (int)taps(s));
        SB_ASSERT(wk != NULL);
#pragma omp for schedule(dynamic)
        for (int img = 0; img < s->n; img++)
            sb_conv2d_fwd_image(y + img * out_size(s), col, wk, x + img * image_size(s),
                                w, b, s);
        sb_gemm_work_free(wk);
        free(col);
    }
}

static void conv2d_bwd_data_det(float *dx, const float *dy, const float *w,
                                const sb_conv_shape *s)
{
#pragma omp parallel
    {
        float *col = floats_new(taps(s) * (size_t)s->p * s->q);
        sb_gemm_work *wk = sb_gemm_work_new((int)taps(s), s->p * s->q, s->k);
        SB_ASSERT(wk != NULL);
#pragma omp for schedule(dynamic)
        for (int img = 0; img < s->n; img++)
            sb_conv2d_bwd_data_image(dx + img * image_size(s), col, wk,
                                     dy + img * out_size(s), w, s);
        sb_gemm_work_free(wk);
        free(col);
    }
}

static void conv2d_bwd_filter_det(float *dw, const float *dy, const float *x,
                                  const sb_conv_shape *s)
{
    int groups = (s->n + SB_CONV_GROUP - 1) / SB_CONV_GROUP;
    size_t nw = (size_t)s->k * taps(s);
    float *part = floats_new(nw * (size_t)groups);
#pragma omp parallel
    {
        float *col = floats_new(taps(s) * (size_t)s->p * s->q);
        sb_gemm_work *wk = sb_gemm_work_new(s->k, (int)taps(s), s->p * s->q);
        SB_ASSERT(wk != NULL);
#pragma omp for schedule(dynamic)
        for (int g = 0; g < groups; g++) {
            int i0 = g * SB_CONV_GROUP;
            int i1 = i0 + SB_CONV_GROUP < s->n ? i0 + SB_CONV_GROUP : s->n;
            for (int img = i0; img < i1; img++)
                sb_conv2d_bwd_filter_image(part + nw * (size_t)g, col, wk,
                                           dy + img * out_size(s), x + img * image_size(s),
                                           s, img > i0);
        }
        sb_gemm_work_free(wk);
        free(col);
        /* group partials in group order, one writer per weight */
#pragma omp for schedule(static)
        for (size_t i = 0; i < nw; i++) {
            float acc = part[i];
            for (int g = 1; g < groups; g++)
                acc += part[nw * (size_t)g + i];
            dw[i] = acc;
        }
    }
    free(part);
}

static void conv2d_bwd_bias_det(float *db, const float *dy, const sb_conv_shape *s)
{
    size_t pq = (size_t)s->p * s->q;
#pragma omp parallel for schedule(static)
    for (int f = 0; f < s->k; f++) {
        float acc = 0.0f;
        for (int img = 0; img < s->n; img++)
            acc = sb_sum_det(dy + ((size_t)img * s->k + f) * pq, 1, pq, acc);
        db[f] = acc;
    }
}

void sb_conv_register(sb_kernel_table *t, sb_family f)
{
    if (f == SB_FAMILY_DET) {
        t->conv2d_fwd = conv2d_fwd_det;
        t->conv2d_bwd_data = conv2d_bwd_data_det;
        t->conv2d_bwd_filter = conv2d_bwd_filter_det;
        t->conv2d_bwd_bias = conv2d_bwd_bias_det;
    } else if (f == SB_FAMILY_LOOSE) {
        /* fwd and bwd_data are parallelised over images the usual way, which
         * splits no reduction: loose shares the det code for them. */
        t->conv2d_fwd = conv2d_fwd_det;
        t->conv2d_bwd_data = conv2d_bwd_data_det;
        t->conv2d_bwd_filter = sb_conv2d_bwd_filter_loose;
        t->conv2d_bwd_bias = sb_conv2d_bwd_bias_loose;
    }
}
