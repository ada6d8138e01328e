/* Fill helpers and the Keras initialisers. Every element is a pure function
 * of its own counter, so threads may split the range any way they like and
 * the bits stay the same. */
#include <math.h>
#include <string.h>

#include "sb_common.h"
#include "rng_block.h"

/* Below this many elements a parallel region costs more than it saves. */
#define FILL_PARALLEL_MIN 16384

/* The uniform fills draw runs of this many elements (sb_rng_uniform_run),
 * few enough that a run is still in L1 when it is mapped to its interval;
 * threads take whole runs. */
#define FILL_RUN 4096

static int64_t fill_runs(size_t n)
{
    return (int64_t)((n + FILL_RUN - 1) / FILL_RUN);
}

static size_t fill_run_len(int64_t run, size_t n)
{
    const size_t first = (size_t)run * FILL_RUN;
    return n - first < FILL_RUN ? n - first : FILL_RUN;
}

void sb_rng_fill_uniform(float *out, size_t n, float lo, float hi,
                         uint64_t seed, uint32_t stream, uint32_t step)
{
    sb_rng_fill_uniform_from(out, n, lo, hi, seed, stream, step, 0);
}

void sb_rng_fill_uniform_from(float *out, size_t n, float lo, float hi, uint64_t seed,
                              uint32_t stream, uint32_t step, uint64_t index0)
{
    const float range = hi - lo;
    SB_ASSERT(lo < hi && isfinite(range));
    /* lo + range*u can round up to hi when u is just below 1; the interval
     * is half-open, so such a value becomes the largest float below hi. */
    const float below_hi = nextafterf(hi, lo);
    const int64_t runs = fill_runs(n);
#pragma omp parallel for schedule(static) if (n >= FILL_PARALLEL_MIN)
    for (int64_t run = 0; run < runs; run++) {
        const size_t first = (size_t)run * FILL_RUN, len = fill_run_len(run, n);
        float *u = out + first;
        sb_rng_uniform_run(u, seed, stream, step, index0 + first, len);
        for (size_t i = 0; i < len; i++) {
            float x = lo + range * u[i];
            u[i] = x < hi ? x : below_hi;
        }
    }
}

/* Keras 2.1 glorot_uniform: U[-limit, limit), limit = sqrt(6/(fan_in+fan_out)),
 * drawn at step 0 of the stream. limit*(2u-1) never reaches limit: 2u-1 is
 * exact and at most 1-2^-23, and limit*(1-2^-23) is at least one ulp below
 * limit, so its rounding cannot climb back to it. */
void sb_init_glorot_uniform(float *w, size_t n, int fan_in, int fan_out,
                            uint64_t seed, uint32_t stream)
{
    SB_ASSERT(fan_in > 0 && fan_out > 0);
    const float limit = (float)sqrt(6.0 / ((double)fan_in + (double)fan_out));
    const int64_t runs = fill_runs(n);
#pragma omp parallel for schedule(static) if (n >= FILL_PARALLEL_MIN)
    for (int64_t run = 0; run < runs; run++) {
        const size_t first = (size_t)run * FILL_RUN, len = fill_run_len(run, n);
        float *u = w + first;
        sb_rng_uniform_run(u, seed, stream, 0, first, len);
        for (size_t i = 0; i < len; i++)
            u[i] = limit * (2.0f * u[i] - 1.0f);
    }
}

/* Keras 2.1 he_normal: truncated normal with stddev sqrt(2/fan_in); a draw
 * more than 2 sd from 0 is redrawn. Redraw r of element i is the normal at
 * counter (stream, step = r, index = i): attempt 0 is step 0, the first
 * redraw step 1, and so on, so each element's value depends on its index
 * alone. */
void sb_init_he_normal(float *w, size_t n, int fan_in, uint64_t seed, uint32_t stream)
{
    SB_ASSERT(fan_in > 0);
    const float stddev = (float)sqrt(2.0 / (double)fan_in);
#pragma omp parallel for schedule(static) if (n >= FILL_PARALLEL_MIN)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        float z;
        uint32_t attempt = 0;
        do {
            /* 4.6% of draws are redrawn; 2^32 redraws in a row cannot happen */
            SB_ASSERT(attempt != UINT32_MAX);
            z = sb_rng_normal(seed, stream, attempt++, (uint64_t)i);
        } while (!(fabsf(z) <= 2.0f));
        w[i] = stddev * z;
    }
}

void sb_init_normal(float *w, size_t n, float stddev, uint64_t seed, uint32_t stream)
{
#pragma omp parallel for schedule(static) if (n >= FILL_PARALLEL_MIN)
    for (int64_t i = 0; i < (int64_t)n; i++)
        w[i] = stddev * sb_rng_normal(seed, stream, 0, (uint64_t)i);
}

void sb_init_constant(float *w, size_t n, float value)
{
    for (size_t i = 0; i < n; i++)
        w[i] = value;
}

void sb_init_zeros(float *w, size_t n)
{
    memset(w, 0, n * sizeof *w);
}
