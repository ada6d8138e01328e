/* Inverted dropout. Element i of the mask is kept when
 * sb_rng_uniform(seed, stream, step, i) >= rate, and a kept element carries
 * 1/(1-rate), so the expected activation is unchanged and nothing is rescaled
 * at test time; rate = 0 keeps every element with scale exactly 1. The draw
 * is a pure function of its counter, not of an RNG state, so any thread may
 * compute any element and the mask bits never depend on the thread count.
 *
 * y = x * mask and dx = dy * mask are products, as in the frameworks that
 * multiply by the mask: an Inf or NaN in a dropped element gives NaN. */
#include "elementwise.h"
#include "leaf_blocks.h"
#include "sb_rng.h"

static float keep_scale(const sb_dropout_params *d)
{
    SB_ASSERT(d->rate >= 0.0f && d->rate < 1.0f);
    return 1.0f / (1.0f - d->rate);
}

static inline float mask_element(const sb_dropout_params *d, float scale, size_t i)
{
    return sb_rng_uniform(d->seed, d->stream, d->step, i) >= d->rate ? scale : 0.0f;
}

/* Masks are drawn in runs of this many uniforms, few enough that a run is
 * still in L1 when it is thresholded. */
#define MASK_SLICE 4096

/* mask[first .. first + n) as mask_element would make it, drawn as runs of
 * uniforms (many Philox blocks at a time) thresholded in place. */
static void mask_run(float *mask, const sb_dropout_params *d, float scale, size_t first,
                     size_t n)
{
    for (size_t done = 0; done < n; done += MASK_SLICE) {
        const size_t len = n - done < MASK_SLICE ? n - done : MASK_SLICE;
        float *m = mask + first + done;
        sb_rng_uniform_run(m, d->seed, d->stream, d->step, first + done, len);
        for (size_t i = 0; i < len; i++)
            m[i] = m[i] >= d->rate ? scale : 0.0f;
    }
}

/* The reference: one draw per element, the definition the runs must match. */
void sb_dropout_mask_ref(float *mask,                   /* [n] */
                         const sb_dropout_params *d,
                         size_t n)
{
    const float scale = keep_scale(d);
    for (size_t i = 0; i < n; i++)
        mask[i] = mask_element(d, scale, i);
}

/* Threads take whole slices. */
void sb_dropout_mask_par(float *mask,                   /* [n] */
                         const sb_dropout_params *d,
                         size_t n)
{
    const float scale = keep_scale(d);
    const int64_t slices = (int64_t)((n + MASK_SLICE - 1) / MASK_SLICE);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < slices; c++) {
        const size_t first = (size_t)c * MASK_SLICE;
        mask_run(mask, d, scale, first, n - first < MASK_SLICE ? n - first : MASK_SLICE);
    }
}

void sb_dropout_mask_hashed(float *mask,                /* [n] */
                            const sb_dropout_params *d,
                            size_t n, const sb_leaf_request *r)
{
    const float scale = keep_scale(d);
    const int64_t blocks = sb_leaf_blocks(n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
        mask_run(mask, d, scale, lo, hi - lo);
        sb_leaf_put(r, r->out[0], b, mask, lo, hi);
    }
}

/* fwd and bwd are the same product: y = x * mask, dx = dy * mask */
static void times_mask_ref(float *out, const float *in, const float *mask, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] * mask[i];
}

static void times_mask_par(float *out, const float *in, const float *mask, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] * mask[i];
}

static void times_mask_hashed(float *out, const float *in, const float *mask, size_t n,
                              const sb_leaf_request *r)
{
    const int64_t blocks = sb_leaf_blocks(n);
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const size_t lo = sb_leaf_begin(b), hi = sb_leaf_end(b, n);
        for (size_t i = lo; i < hi; i++)
            out[i] = in[i] * mask[i];
        sb_leaf_put(r, r->out[0], b, out, lo, hi);
        sb_leaf_put(r, r->in[0], b, in, lo, hi);
        sb_leaf_put(r, r->in[1], b, mask, lo, hi);
    }
}

void sb_dropout_fwd_ref(float *y,               /* [n] */
                        const float *x,         /* [n] */
                        const float *mask,      /* [n] */
                        size_t n)
{
    times_mask_ref(y, x, mask, n);
}

void sb_dropout_fwd_par(float *y,               /* [n] */
                        const float *x,         /* [n] */
                        const float *mask,      /* [n] */
                        size_t n)
{
    times_mask_par(y, x, mask, n);
}

void sb_dropout_bwd_ref(float *dx,              /* [n] */
                        const float *dy,        /* [n] */
                        const float *mask,      /* [n] the forward's mask */
                        size_t n)
{
    times_mask_ref(dx, dy, mask, n);
}

void sb_dropout_bwd_par(float *dx,              /* [n] */
                        const float *dy,        /* [n] */
                        const float *mask,      /* [n] the forward's mask */
                        size_t n)
{
    times_mask_par(dx, dy, mask, n);
}

void sb_dropout_fwd_hashed(float *y, const float *x, const float *mask, size_t n,
                           const sb_leaf_request *r)
{
    times_mask_hashed(y, x, mask, n, r);
}

void sb_dropout_bwd_hashed(float *dx, const float *dy, const float *mask, size_t n,
                           const sb_leaf_request *r)
{
    times_mask_hashed(dx, dy, mask, n, r);
}
