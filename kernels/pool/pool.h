/* Average and max pooling with any window (kh x kw) and stride (sh, sw),
 * no padding (ONNX's AveragePool and MaxPool with pads 0, ceil_mode 0):
 * x [n][c][h][w], y [n][c][p][q], p = (h - kh) / sh + 1, q = (w - kw) / sw
 * + 1 (floor). One output's window, which every family computes alike:
 *   average  the window's sum from +0 in row-major order, then one division
 *            by kh kw
 *   max      the first maximum in row-major order; a later element wins
 *            only if larger or the first NaN (maxpool_fwd's tie and NaN
 *            rules, elementwise.h): exact, no order changes it; its index
 *            into x (int32: x has at most 2^28 elements) is the argmax */
#ifndef SB_POOL_H
#define SB_POOL_H

#include <math.h>

#include "op_kernels.h"
#include "running_error.h"

static inline void sb_window_shape_check(const sb_window_shape *s)
{
    SB_ASSERT(s->n > 0 && s->c > 0 && s->kh > 0 && s->kw > 0 && s->sh > 0 && s->sw > 0 &&
              s->h >= s->kh && s->w >= s->kw);
}

static inline int sb_window_p(const sb_window_shape *s)
{
    return (s->h - s->kh) / s->sh + 1;
}

static inline int sb_window_q(const sb_window_shape *s)
{
    return (s->w - s->kw) / s->sw + 1;
}

/* the window of output (i, j) of a plane: its top-left element */
static inline const float *sb_window_at(const float *plane, const sb_window_shape *s, int i,
                                        int j)
{
    return plane + (size_t)i * (size_t)s->sh * (size_t)s->w + (size_t)j * (size_t)s->sw;
}

static inline float sb_window_mean(const float *top, const sb_window_shape *s)
{
    float sum = 0.0f;
    for (int a = 0; a < s->kh; a++)
        for (int b = 0; b < s->kw; b++)
            sum += top[(size_t)a * (size_t)s->w + (size_t)b];
    return sum / (float)(s->kh * s->kw);
}

/* the offset from top of the window's maximum (its argmax) */
static inline size_t sb_window_argmax(const float *top, const sb_window_shape *s)
{
    size_t best = 0;
    for (int a = 0; a < s->kh; a++)
        for (int b = 0; b < s->kw; b++) {
            const size_t at = (size_t)a * (size_t)s->w + (size_t)b;
            if (top[at] > top[best] || (isnan(top[at]) && !isnan(top[best])))
                best = at;
        }
    return best;
}

static inline float sb_window_maximum(const float *top, const sb_window_shape *s)
{
    return top[sb_window_argmax(top, s)];
}

/* ONNX's MaxPool Indices (storage_order 0): the argmax of output (i, j) of
 * plane `plane` as an index into the whole of x [n][c][h][w], row-major */
static inline int32_t sb_window_index(const float *x, const sb_window_shape *s, size_t plane,
                                      int i, int j)
{
    const float *xp = x + plane * (size_t)s->h * (size_t)s->w;
    const float *top = sb_window_at(xp, s, i, j);
    return (int32_t)((size_t)(top - x) + sb_window_argmax(top, s));
}

typedef float sb_window_fn(const float *top, const sb_window_shape *s);

/* The gradients with respect to x, from dy [n][c][p][q]: each output's
 * term added into the elements it read, every window of the plane in
 * row-major order (PyTorch's CPU loops), from +0:
 *   average  term fl(dy / (kh kw)) into every element of its window
 *   max      term dy into its window's argmax (the index
 *            maxpool_window_indices gives)
 * Overlapping windows (a stride below the window) make an element's
 * gradient a sum over the windows covering it, so its order matters: every
 * family adds an element's terms in the windows' row-major order; an
 * element no window covers (or, for max, no window's argmax) gets +0. */
static inline float sb_window_share(float dy, const sb_window_shape *s)
{
    return dy / (float)(s->kh * s->kw);
}

/* The windows of a plane covering input row r along an axis of `len`
 * outputs with window k and stride st: outputs [*lo, *hi) (empty if lo >=
 * hi). Columns alike. */
static inline void sb_window_cover(int r, int k, int st, int len, int *lo, int *hi)
{
    *lo = r < k ? 0 : (r - k) / st + 1;
    *hi = r / st + 1 < len ? r / st + 1 : len;
}

/* Plane `plane`'s gradient by the scatter: its dx zeroed, then each output
 * in row-major order adds its term (indices: the argmax indices into x,
 * max; NULL: average). ref's loop, plane by plane; loose's, planes in
 * parallel (a window lies in its plane, so no two threads write one
 * element: no race, and ref's order). */
static inline void sb_window_scatter_plane(float *dx, const float *dy, const int32_t *indices,
                                           const sb_window_shape *s, size_t plane)
{
    const size_t p = (size_t)sb_window_p(s), q = (size_t)sb_window_q(s);
    const size_t hw = (size_t)s->h * (size_t)s->w;
    for (size_t at = plane * hw; at < (plane + 1) * hw; at++)
        dx[at] = 0.0f;
    for (size_t i = 0; i < p; i++)
        for (size_t j = 0; j < q; j++) {
            const size_t o = (plane * p + i) * q + j;
            if (indices != NULL) {
                dx[indices[o]] += dy[o];
                continue;
            }
            const float t = sb_window_share(dy[o], s);
            float *top = dx + plane * hw + i * (size_t)s->sh * (size_t)s->w + j * (size_t)s->sw;
            for (int a = 0; a < s->kh; a++)
                for (int b = 0; b < s->kw; b++)
                    top[(size_t)a * (size_t)s->w + (size_t)b] += t;
        }
}

/* The windows covering input row r: sb_window_cover or, for the mutants, a
 * faulty one */
typedef void sb_window_cover_fn(int r, int k, int st, int len, int *lo, int *hi);

/* Det's gather of one row `row` of x ([n c h] rows of w): each element of
 * the row sums from +0 the terms of the windows covering it (cover), rows
 * of windows then columns in order, the order ref's scatter adds them in;
 * indices: the max's argmax indices, NULL: the average. */
static inline void sb_window_gather_row(float *dx, const float *dy, const int32_t *indices,
                                        const sb_window_shape *s, size_t row,
                                        sb_window_cover_fn *cover)
{
    const int p = sb_window_p(s), q = sb_window_q(s);
    const size_t plane = row / (size_t)s->h;
    const int r = (int)(row % (size_t)s->h);
    const float *dyp = dy + plane * (size_t)p * (size_t)q;
    int ilo, ihi;
    cover(r, s->kh, s->sh, p, &ilo, &ihi);
    for (int t = 0; t < s->w; t++) {
        const size_t at = row * (size_t)s->w + (size_t)t;
        int jlo, jhi;
        cover(t, s->kw, s->sw, q, &jlo, &jhi);
        float sum = 0.0f;
        for (int i = ilo; i < ihi; i++)
            for (int j = jlo; j < jhi; j++) {
                const size_t o = (size_t)i * (size_t)q + (size_t)j;
                if (indices == NULL)
                    sum += sb_window_share(dyp[o], s);
                else if ((size_t)indices[plane * (size_t)p * (size_t)q + o] == at)
                    sum += dyp[o];
            }
        dx[at] = sum;
    }
}

/* The argmax indices of every window, for the max's gradient: from malloc,
 * by det's kernel (exact: every family's indices are the same). */
int32_t *sb_window_indices_alloc(const float *x, const sb_window_shape *s);

/* Each element of x's gradient as the sum of its terms in double
 * (running_error.h), the average's terms each one rounding from
 * dy / (kh kw), the max's exact; count[e]: its terms. sum and count from
 * calloc, x's size; x NULL: the average. */
void sb_window_grad_terms(sb_err_sum *sum, int *count, const float *dy, const float *x,
                          const sb_window_shape *s);

#endif
