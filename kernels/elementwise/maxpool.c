/* 2x2 max pooling with stride 2 over NCHW planes. Odd heights and widths are
 * floored: the last row or column of x feeds no window and gets gradient 0.
 *
 * Tie rule: when several elements of a window hold its maximum, the first in
 * scan order (row-major within the window: top-left, top-right, bottom-left,
 * bottom-right) is the argmax: the output has its bits (+0 and -0 tie) and it
 * receives the window's whole gradient; the others get 0.
 *
 * NaN rule: a NaN anywhere in a window makes the window's output NaN (the
 * first NaN in scan order, payload kept), and the backward routes the
 * window's gradient to that NaN element. A max built from `>` alone would
 * drop a NaN silently unless it came first in the window.
 *
 * A max is exact, so no evaluation order can change a bit: one loop, parallel
 * over planes (each plane of y and dx has one writer), serves every family. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "elementwise.h"

/* The maximum of the window whose top-left element is row 2i, column 2j of a
 * plane w wide, under the tie and NaN rules: scan order, and a later element
 * wins only if it is larger or the first NaN. */
static inline float window_max(const float *x, size_t w, size_t i, size_t j)
{
    const size_t top = 2 * i * w + 2 * j;
    const size_t at[4] = {top, top + 1, top + w, top + w + 1};
    size_t best = at[0];
    for (int t = 1; t < 4; t++) {
        float v = x[at[t]], b = x[best];
        if (v > b || (isnan(v) && !isnan(b)))
            best = at[t];
    }
    return x[best];
}

/* Whether element v holds the window's maximum m. When m is a number no
 * element of the window is NaN and v >= m means v equals m; when m is NaN the
 * NaNs match. */
static inline int is_max(float v, float m)
{
    return (v >= m) | isnan(v);
}

/* ---- eight windows at a time ----------------------------------------------
 * The same rules on GNU vectors (GCC >= 12, clang), element by element:
 * compares give all-ones or zero lanes and selects pick bits, so a vector
 * lane computes exactly what window_max and plane_bwd's flags compute for
 * its window. The plane loops take eight windows a step; a row whose
 * window count is not a multiple of eight ends with the last eight windows,
 * overlapping ones already done (they get the same values again, as x is
 * not written: outputs must not overlap x, see check_apart).
 * Helpers take vectors by pointer: a 32-byte vector passed by value has a
 * different ABI with and without AVX, which compilers warn about even where
 * the helper is inlined. */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* the even and odd columns of 16 floats from row on */
SB_ALWAYS_INLINE void load_pairs(const float *row, v8f *even, v8f *odd)
{
    v8f lo, hi;
    memcpy(&lo, row, sizeof lo);
    memcpy(&hi, row + 8, sizeof hi);
    *even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
    *odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
}

/* even and odd interleaved into 16 floats from row on */
SB_ALWAYS_INLINE void store_pairs(float *row, const v8f *even, const v8f *odd)
{
    v8f lo = __builtin_shufflevector(*even, *odd, 0, 8, 1, 9, 2, 10, 3, 11);
    v8f hi = __builtin_shufflevector(*even, *odd, 4, 12, 5, 13, 6, 14, 7, 15);
    memcpy(row, &lo, sizeof lo);
    memcpy(row + 8, &hi, sizeof hi);
}

/* NaN lanes all ones: only a NaN is not <= itself (and `v != v` trips
 * -Wfloat-equal) */
#define NAN_LANES(v) (~((v) <= (v)))

/* m = the bits of v where `take`, of m elsewhere */
SB_ALWAYS_INLINE void select8(v8f *m, const v8i *take, const v8f *v)
{
    *m = (v8f)(((v8i)*v & *take) | ((v8i)*m & ~*take));
}

/* window_max's step: v replaces the best so far m if larger or the first NaN */
SB_ALWAYS_INLINE void later_wins(v8f *m, const v8f *v)
{
    v8i take = (*v > *m) | (NAN_LANES(*v) & ~NAN_LANES(*m));
    select8(m, &take, v);
}

/* the maximum of windows a b / c d (scan order) */
SB_ALWAYS_INLINE void window_max8(v8f *m, const v8f *a, const v8f *b, const v8f *c,
                                  const v8f *d)
{
    *m = *a;
    later_wins(m, b);
    later_wins(m, c);
    later_wins(m, d);
}

/* Windows [j, j + 8) of window row i. */
SB_ALWAYS_INLINE void windows_fwd(float *y, const float *x0, const float *x1, size_t j)
{
    v8f a, b, c, d, m;
    load_pairs(x0 + 2 * j, &a, &b);
    load_pairs(x1 + 2 * j, &c, &d);
    window_max8(&m, &a, &b, &c, &d);
    memcpy(y + j, &m, sizeof m);
}

SB_ALWAYS_INLINE void windows_bwd(float *d0, float *d1, const float *dy, const float *x0,
                                  const float *x1, size_t j)
{
    v8f a, b, c, d, m, g;
    load_pairs(x0 + 2 * j, &a, &b);
    load_pairs(x1 + 2 * j, &c, &d);
    memcpy(&g, dy + j, sizeof g);
    window_max8(&m, &a, &b, &c, &d);
    /* is_max, lane by lane, then the first match takes g */
    v8i first = (a >= m) | NAN_LANES(a);
    v8i second = ~first & ((b >= m) | NAN_LANES(b));
    v8i third = ~(first | second) & ((c >= m) | NAN_LANES(c));
    v8i fourth = ~(first | second | third);
    /* g where the flag is set, +0 elsewhere */
    v8f ga = (v8f)((v8i)g & first), gb = (v8f)((v8i)g & second);
    v8f gc = (v8f)((v8i)g & third), gd = (v8f)((v8i)g & fourth);
    store_pairs(d0 + 2 * j, &ga, &gb);
    store_pairs(d1 + 2 * j, &gc, &gd);
}

SB_ISA_CLONES
static void plane_fwd(float *y,         /* [h/2][w/2] */
                      const float *x,   /* [h][w] */
                      size_t h, size_t w)
{
    const size_t ph = h / 2, pw = w / 2;
    for (size_t i = 0; i < ph; i++) {
        float *yi = y + i * pw;
        if (pw < 8) {
            for (size_t j = 0; j < pw; j++)
                yi[j] = window_max(x, w, i, j);
            continue;
        }
        const float *x0 = x + 2 * i * w, *x1 = x0 + w;
        for (size_t j = 0; j + 8 <= pw; j += 8)
            windows_fwd(yi, x0, x1, j);
        if (pw % 8)
            windows_fwd(yi, x0, x1, pw - 8);
    }
}

/* The backward finds the max, then gives the gradient to the first element
 * that matches it, with flags rather than the argmax's index: on real
 * activations the winner's position is unpredictable, and branching on it
 * made this loop 2.5 times slower. Every element of dx is written: the four
 * of each window (twice where a row's last eight-window step overlaps the
 * one before), then the row and column an odd size leaves out. */
SB_ISA_CLONES
static void plane_bwd(float *dx,        /* [h][w] */
                      const float *dy,  /* [h/2][w/2] */
                      const float *x,   /* [h][w] */
                      size_t h, size_t w)
{
    const size_t ph = h / 2, pw = w / 2;
    for (size_t i = 0; i < ph; i++) {
        const float *x0 = x + 2 * i * w, *x1 = x0 + w;
        float *d0 = dx + 2 * i * w, *d1 = d0 + w;
        if (pw >= 8) {
            for (size_t j = 0; j + 8 <= pw; j += 8)
                windows_bwd(d0, d1, dy + i * pw, x0, x1, j);
            if (pw % 8)
                windows_bwd(d0, d1, dy + i * pw, x0, x1, pw - 8);
            continue;
        }
        for (size_t j = 0; j < pw; j++) {
            const float m = window_max(x, w, i, j), g = dy[i * pw + j];
            const int first = is_max(x0[2 * j], m);
            const int second = (1 - first) & is_max(x0[2 * j + 1], m);
            const int third = (1 - first - second) & is_max(x1[2 * j], m);
            const int fourth = 1 - first - second - third;
            d0[2 * j] = first ? g : 0.0f;
            d0[2 * j + 1] = second ? g : 0.0f;
            d1[2 * j] = third ? g : 0.0f;
            d1[2 * j + 1] = fourth ? g : 0.0f;
        }
    }
    if (w % 2)
        for (size_t r = 0; r < 2 * ph; r++)
            dx[r * w + w - 1] = 0.0f;
    if (h % 2)
        for (size_t c = 0; c < w; c++)
            dx[(h - 1) * w + c] = 0.0f;
}

/* The output (n_out floats) and x (n_in) must not overlap: the last
 * eight-window step of a row reads x after the step before it stored. */
static void check_apart(const float *out, size_t n_out, const float *x, size_t n_in)
{
    uintptr_t o = (uintptr_t)out, i = (uintptr_t)x;
    SB_ASSERT(o + n_out * sizeof(float) <= i || i + n_in * sizeof(float) <= o);
}

static size_t plane_count(const sb_pool_shape *s)
{
    SB_ASSERT(s->n >= 0 && s->c >= 0 && s->h >= 0 && s->w >= 0);
    return (size_t)s->n * (size_t)s->c;
}

void sb_maxpool_fwd_ref(float *y,               /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] */
                        const sb_pool_shape *s)
{
    const size_t planes = plane_count(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t in = h * w, out = (h / 2) * (w / 2);
    check_apart(y, planes * out, x, planes * in);
    for (size_t p = 0; p < planes; p++)
        plane_fwd(y + p * out, x + p * in, h, w);
}

void sb_maxpool_fwd_par(float *y,               /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] */
                        const sb_pool_shape *s)
{
    const size_t planes = plane_count(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t in = h * w, out = (h / 2) * (w / 2);
    check_apart(y, planes * out, x, planes * in);
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < planes; p++)
        plane_fwd(y + p * out, x + p * in, h, w);
}

void sb_maxpool_bwd_ref(float *dx,              /* [n][c][h][w] */
                        const float *dy,        /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] forward input */
                        const sb_pool_shape *s)
{
    const size_t planes = plane_count(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t in = h * w, out = (h / 2) * (w / 2);
    check_apart(dx, planes * in, x, planes * in);
    for (size_t p = 0; p < planes; p++)
        plane_bwd(dx + p * in, dy + p * out, x + p * in, h, w);
}

void sb_maxpool_bwd_par(float *dx,              /* [n][c][h][w] */
                        const float *dy,        /* [n][c][h/2][w/2] */
                        const float *x,         /* [n][c][h][w] forward input */
                        const sb_pool_shape *s)
{
    const size_t planes = plane_count(s), h = (size_t)s->h, w = (size_t)s->w;
    const size_t in = h * w, out = (h / 2) * (w / 2);
    check_apart(dx, planes * in, x, planes * in);
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < planes; p++)
        plane_bwd(dx + p * in, dy + p * out, x + p * in, h, w);
}
