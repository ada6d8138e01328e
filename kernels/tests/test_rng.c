/* The counter-based RNG: Philox known answers, the counter layout, runs of
 * uniforms against single draws, the distributions, the Keras initialisers,
 * the permutation, and the same bits for every thread count. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng/rng_block.h"
#include "sb_rng.h"

Suite *make_rng_suite(void);

#define SEED 0x0123456789abcdefull
#define U 0x1p-24 /* resolution of sb_rng_uniform */

static bool same_bits(const float *a, const float *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static void *alloc_or_die(size_t bytes)
{
    void *p = malloc(bytes);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Random123 kat_vectors, the three philox4x32 10 lines: counter, key, output. */
static const struct {
    uint32_t counter[4], key[2], out[4];
} kat[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

START_TEST(test_philox_known_answers)
{
    for (size_t v = 0; v < sizeof kat / sizeof kat[0]; v++) {
        uint32_t out[4];
        sb_philox4x32_10(out, kat[v].counter, kat[v].key);
        for (int i = 0; i < 4; i++)
            ck_assert_msg(out[i] == kat[v].out[i], "vector %zu word %d: %08x, want %08x",
                          v, i, out[i], kat[v].out[i]);
    }
}
END_TEST

/* The layout documented in sb_rng.h: key = seed halves, the block of block
 * index b has counter {b low, b high, step, stream}; u32 i = word i%4 of
 * block i/4, uniform = that word >> 8, normal i = Box-Muller on words
 * 2(i%2), 2(i%2)+1 of block i/2. */
START_TEST(test_counter_layout)
{
    const uint64_t block = 0x0000000500000007ull;
    const uint32_t key[2] = {(uint32_t)SEED, (uint32_t)(SEED >> 32)};
    const uint32_t counter[4] = {7, 5, 11, 0x123};
    uint32_t out[4];
    sb_philox4x32_10(out, counter, key);
    for (uint64_t w = 0; w < 4; w++) {
        ck_assert_uint_eq(sb_rng_u32(SEED, 0x123, 11, 4 * block + w), out[w]);
        float u = sb_rng_uniform(SEED, 0x123, 11, 4 * block + w);
        ck_assert_uint_eq((uint32_t)(u * 0x1p24f), out[w] >> 8);
    }
    /* the normals of block b are elements 2b and 2b+1, from word pairs */
    for (uint64_t half = 0; half < 2; half++) {
        double u1 = 1.0 - (double)(out[2 * half] >> 8) * 0x1p-24;
        double u2 = (double)(out[2 * half + 1] >> 8) * 0x1p-24;
        float want = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925286766559 * u2));
        float z = sb_rng_normal(SEED, 0x123, 11, 2 * block + half);
        ck_assert(same_bits(&z, &want));
    }
    /* interleaved calls (other counters in between) give the same values */
    uint32_t again = sb_rng_u32(SEED, 0x123, 11, 4 * block + 2);
    (void)sb_rng_u32(SEED, 0x124, 11, 4 * block + 2);
    ck_assert_uint_eq(sb_rng_u32(SEED, 0x123, 11, 4 * block + 1), out[1]);
    ck_assert_uint_eq(again, out[2]);
    /* every coordinate reaches the output */
    uint32_t base = sb_rng_u32(SEED, 1, 1, 1);
    ck_assert_uint_ne(base, sb_rng_u32(SEED ^ 1, 1, 1, 1));
    ck_assert_uint_ne(base, sb_rng_u32(SEED ^ (1ull << 40), 1, 1, 1));
    ck_assert_uint_ne(base, sb_rng_u32(SEED, 2, 1, 1));
    ck_assert_uint_ne(base, sb_rng_u32(SEED, 1, 2, 1));
    ck_assert_uint_ne(base, sb_rng_u32(SEED, 1, 1, 2));
    ck_assert_uint_ne(base, sb_rng_u32(SEED, 1, 1, 1 + (1ull << 32)));
}
END_TEST

/* Every element of out[0..n) equals the single draw of its counter, bit
 * for bit, and the GUARD floats on either side are untouched. */
enum { GUARD = 8 };

static void check_run(sb_rng_run_fn run, const char *isa, uint64_t seed, uint32_t stream,
                      uint32_t step, uint64_t index0, size_t n)
{
    float *buf = alloc_or_die((n + 2 * GUARD) * sizeof *buf);
    memset(buf, 0xa5, (n + 2 * GUARD) * sizeof *buf);
    run(buf + GUARD, seed, stream, step, index0, n);
    for (size_t j = 0; j < n; j++) {
        float want = sb_rng_uniform(seed, stream, step, index0 + j);
        ck_assert_msg(same_bits(&buf[GUARD + j], &want),
                      "%s index0 %llu n %zu: element %zu is %a, want %a", isa,
                      (unsigned long long)index0, n, j, (double)buf[GUARD + j], (double)want);
    }
    for (size_t g = 0; g < GUARD; g++) {
        uint32_t before, after;
        memcpy(&before, &buf[g], sizeof before);
        memcpy(&after, &buf[GUARD + n + g], sizeof after);
        ck_assert_msg(before == 0xa5a5a5a5u && after == 0xa5a5a5a5u,
                      "%s index0 %llu n %zu: wrote outside [0, n)", isa,
                      (unsigned long long)index0, n);
    }
    free(buf);
}

/* sb_rng_uniform_run and each of its instruction-set variants this CPU can
 * run: starts inside a block (index0 % 4 = 1, 2, 3), runs shorter than a
 * block, than a group of blocks, and many groups; 2^32 - 3 crosses the 32-bit
 * half of the index, 2^34 - 3 the low counter word (block 2^32 - 1 -> 2^32),
 * in the middle of a group of lanes. */
START_TEST(test_uniform_run_matches_draws)
{
    static const uint64_t index0s[] = {0, 1, 2, 3, 5, (1ull << 32) - 3, (1ull << 34) - 3};
    static const size_t ns[] = {0, 1, 3, 4, 17, 63, 64, 65, 127, 1000};
    sb_rng_run_fn variants[3];
    const int nv = sb_rng_uniform_run_variants(variants);
    ck_assert_int_ge(nv, 1);
    for (int v = 0; v <= nv; v++) {
        /* v = nv: the public entry point, whichever variant it dispatches to */
        sb_rng_run_fn run = v < nv ? variants[v] : sb_rng_uniform_run;
        char isa[48] = "dispatch";
        if (v < nv)
            snprintf(isa, sizeof isa, "variant %d of %d", v, nv);
        for (size_t a = 0; a < sizeof index0s / sizeof index0s[0]; a++)
            for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
                check_run(run, isa, SEED, SB_STREAM_DROPOUT + 2, 7, index0s[a], ns[b]);
        /* every word of the key and the counter reaches the lanes */
        check_run(run, isa, ~SEED, 0xfffffffeu, 0xffffffffu, (1ull << 40) + 6, 333);
    }
}
END_TEST

/* n = 2^18 uniforms. Each is k * 2^-24 with k in [0, 2^24), so the exact
 * mean is (1 - 2^-24)/2 and the variance about 1/12; the sample mean's
 * standard deviation is sqrt(1/(12 n)) = 5.6e-4, and the test allows 5 of
 * them (a false alarm has probability below 1e-6, and the seed is fixed). */
START_TEST(test_uniform_range_and_mean)
{
    const size_t n = (size_t)1 << 18;
    double sum = 0.0;
    float lo = 1.0f, hi = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float u = sb_rng_uniform(SEED, 7, 3, i);
        ck_assert(u >= 0.0f && u < 1.0f);
        float k = u * 0x1p24f, k_int = (float)(uint32_t)k;
        ck_assert(same_bits(&k, &k_int)); /* a multiple of 2^-24 */
        sum += (double)u;
        lo = fminf(lo, u);
        hi = fmaxf(hi, u);
    }
    double mean = sum / (double)n;
    double bound = 5.0 * sqrt(1.0 / (12.0 * (double)n));
    ck_assert_double_le(fabs(mean - (1.0 - U) / 2.0), bound);
    /* no draw within 2^-14 of an end has probability (1 - 2^-14)^n = e^-16 */
    ck_assert_double_le((double)lo, (double)(0x1p-14f));
    ck_assert_double_ge((double)hi, (double)(1.0f - 0x1p-14f));
}
END_TEST

/* n = 2^18 normals. Sample mean: sd 1/sqrt(n); sample variance: sd
 * sqrt(2/n) for a normal; 5 sd allowed for each. Box-Muller's radius is at
 * most sqrt(-2 ln 2^-24) = 5.77, so every value is finite and inside that. */
START_TEST(test_normal_moments)
{
    const size_t n = (size_t)1 << 18;
    double sum = 0.0, sum2 = 0.0;
    const double rmax = sqrt(-2.0 * log(U));
    for (size_t i = 0; i < n; i++) {
        float z = sb_rng_normal(SEED, 9, 0, i);
        ck_assert(isfinite(z));
        ck_assert_double_le(fabs((double)z), rmax);
        sum += (double)z;
        sum2 += (double)z * (double)z;
    }
    double mean = sum / (double)n;
    double var = sum2 / (double)n - mean * mean;
    ck_assert_double_le(fabs(mean), 5.0 / sqrt((double)n));
    ck_assert_double_le(fabs(var - 1.0), 5.0 * sqrt(2.0 / (double)n));
}
END_TEST

START_TEST(test_fill_uniform_range)
{
    const size_t n = 100003;
    float *x = alloc_or_die(n * sizeof *x);
    sb_rng_fill_uniform(x, n, -3.0f, 5.0f, SEED, 1, 2);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        ck_assert(x[i] >= -3.0f && x[i] < 5.0f);
        sum += (double)x[i];
    }
    /* mean 1, sd of the sample mean 8/sqrt(12 n); 5 sd allowed */
    ck_assert_double_le(fabs(sum / (double)n - 1.0), 5.0 * 8.0 / sqrt(12.0 * (double)n));
    /* a range so narrow that lo + range*u rounds up to hi must stay below hi */
    const float lo = 1.0f, hi = nextafterf(1.0f, 2.0f);
    sb_rng_fill_uniform(x, n, lo, hi, SEED, 1, 2);
    for (size_t i = 0; i < n; i++)
        ck_assert(x[i] >= lo && x[i] < hi);
    free(x);
}
END_TEST

/* Glorot: limit = sqrt(6/(100+50)) = 0.2; values in [-limit, limit), mean 0
 * (sd of the mean limit/sqrt(3n), 5 allowed), and the extremes reach within
 * 0.1% of the limit (missing that in 1e5 draws has probability e^-50). */
START_TEST(test_glorot_uniform)
{
    const size_t n = 100000;
    const int fan_in = 100, fan_out = 50;
    const float limit = (float)sqrt(6.0 / 150.0);
    float *w = alloc_or_die(n * sizeof *w);
    sb_init_glorot_uniform(w, n, fan_in, fan_out, SEED, SB_STREAM_INIT + 1);
    double sum = 0.0;
    float lo = 0.0f, hi = 0.0f;
    for (size_t i = 0; i < n; i++) {
        ck_assert(w[i] >= -limit && w[i] < limit);
        sum += (double)w[i];
        lo = fminf(lo, w[i]);
        hi = fmaxf(hi, w[i]);
    }
    ck_assert_double_le(fabs(sum / (double)n), 5.0 * (double)limit / sqrt(3.0 * (double)n));
    ck_assert_double_le((double)lo, (double)(-0.999f * limit));
    ck_assert_double_ge((double)hi, (double)(0.999f * limit));
    free(w);
}
END_TEST

/* he_normal, fan_in 50: sd s = 0.2, truncated at 2s. For a standard normal
 * truncated to [-2, 2], with Z = erf(sqrt 2) and phi(2) = e^-2/sqrt(2 pi):
 *   E z^2 = 1 - 4 phi(2)/Z ~ 0.7737,  E z^4 = 3 E z^2 - 16 phi(2)/Z ~ 1.4162.
 * The sample mean of z^2 over n draws has sd sqrt((E z^4 - (E z^2)^2)/n);
 * 5 allowed. An untruncated normal (E z^2 = 1) is 26 sd away at n = 2^18. */
START_TEST(test_he_normal_truncation)
{
    const size_t n = (size_t)1 << 18;
    const int fan_in = 50;
    const float s = (float)sqrt(2.0 / fan_in);
    float *w = alloc_or_die(n * sizeof *w);
    sb_init_he_normal(w, n, fan_in, SEED, SB_STREAM_INIT + 2);
    double sum = 0.0, sum2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        ck_assert(isfinite(w[i]));
        ck_assert_double_le((double)fabsf(w[i]), (double)(2.0f * s));
        double z = (double)w[i] / (double)s;
        sum += z;
        sum2 += z * z;
    }
    const double pi = 3.14159265358979323846;
    double phi2 = exp(-2.0) / sqrt(2.0 * pi), mass = erf(sqrt(2.0));
    double ez2 = 1.0 - 4.0 * phi2 / mass;
    double ez4 = 3.0 * ez2 - 16.0 * phi2 / mass;
    ck_assert_double_le(fabs(sum / (double)n), 5.0 * sqrt(ez2 / (double)n));
    ck_assert_double_le(fabs(sum2 / (double)n - ez2), 5.0 * sqrt((ez4 - ez2 * ez2) / (double)n));

    /* The documented redraw: element i takes the first normal within 2 sd
     * at steps 0, 1, 2, ... of its stream. */
    int redrawn = 0;
    for (size_t i = 0; i < n && redrawn < 10; i++) {
        if (fabsf(sb_rng_normal(SEED, SB_STREAM_INIT + 2, 0, i)) <= 2.0f)
            continue;
        uint32_t step = 1;
        float z = sb_rng_normal(SEED, SB_STREAM_INIT + 2, step, i);
        while (!(fabsf(z) <= 2.0f))
            z = sb_rng_normal(SEED, SB_STREAM_INIT + 2, ++step, i);
        float want = s * z;
        ck_assert(same_bits(&w[i], &want));
        redrawn++;
    }
    ck_assert_int_eq(redrawn, 10);
    free(w);
}
END_TEST

START_TEST(test_zeros)
{
    float w[37];
    for (int i = 0; i < 37; i++)
        w[i] = NAN;
    sb_init_zeros(w, 37);
    for (int i = 0; i < 37; i++) {
        uint32_t bits;
        memcpy(&bits, &w[i], sizeof bits);
        ck_assert_uint_eq(bits, 0); /* +0.0 */
    }
}
END_TEST

static bool is_permutation(const int64_t *perm, int64_t n)
{
    bool *seen = calloc((size_t)n, 1);
    ck_assert_ptr_nonnull(seen);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        ok = perm[i] >= 0 && perm[i] < n && !seen[perm[i]];
        if (ok)
            seen[perm[i]] = true;
    }
    free(seen);
    return ok;
}

START_TEST(test_permutation)
{
    const int64_t n = 60000;
    int64_t *a = alloc_or_die((size_t)n * sizeof *a);
    int64_t *b = alloc_or_die((size_t)n * sizeof *b);
    sb_rng_permutation(a, n, SEED, SB_STREAM_SHUFFLE, 0);
    ck_assert(is_permutation(a, n));
    int64_t fixed = 0;
    for (int64_t i = 0; i < n; i++)
        fixed += a[i] == i;
    /* fixed points of a uniform permutation: Poisson(1); 10 has p < 1e-7 */
    ck_assert_int_le(fixed, 10);
    sb_rng_permutation(b, n, SEED, SB_STREAM_SHUFFLE, 0);
    ck_assert_int_eq(memcmp(a, b, (size_t)n * sizeof *a), 0);
    sb_rng_permutation(b, n, SEED, SB_STREAM_SHUFFLE, 1);
    ck_assert(is_permutation(b, n));
    ck_assert_int_ne(memcmp(a, b, (size_t)n * sizeof *a), 0);
    sb_rng_permutation(b, 1, SEED, SB_STREAM_SHUFFLE, 0);
    ck_assert_int_eq(b[0], 0);
    sb_rng_permutation(b, 0, SEED, SB_STREAM_SHUFFLE, 0);
    free(a);
    free(b);
}
END_TEST

/* Each of the 6 orders of 3 elements over 6000 steps: count ~ Binomial(6000,
 * 1/6), mean 1000, sd sqrt(6000 * 1/6 * 5/6) = 28.9; 5 sd allowed. A biased
 * swap (e.g. j drawn from [0, i) instead of [0, i]) gives only 2 orders. */
START_TEST(test_permutation_uniform)
{
    int count[6] = {0};
    for (uint32_t step = 0; step < 6000; step++) {
        int64_t p[3];
        sb_rng_permutation(p, 3, SEED, SB_STREAM_SHUFFLE, step);
        ck_assert(is_permutation(p, 3));
        int code = (int)(p[0] * 2 + (p[1] > p[2] ? 1 : 0)); /* p[0] and the order of the rest */
        count[code]++;
    }
    const double sd = sqrt(6000.0 / 6.0 * 5.0 / 6.0);
    for (int c = 0; c < 6; c++)
        ck_assert_double_le(fabs(count[c] - 1000.0), 5.0 * sd);
}
END_TEST

/* Every fill helper, for 1..16 threads, bitwise equal to its 1-thread run. */
enum { FILL_UNIFORM, FILL_GLOROT, FILL_HE, FILL_ZEROS, FILL_COUNT };

static void fill(int which, float *w, size_t n)
{
    switch (which) {
    case FILL_UNIFORM: sb_rng_fill_uniform(w, n, -1.0f, 3.0f, SEED, 5, 6); break;
    case FILL_GLOROT: sb_init_glorot_uniform(w, n, 288, 64, SEED, SB_STREAM_INIT); break;
    case FILL_HE: sb_init_he_normal(w, n, 288, SEED, SB_STREAM_INIT + 1); break;
    case FILL_ZEROS: sb_init_zeros(w, n); break;
    }
}

START_TEST(test_fill_same_bits_any_thread_count)
{
    const size_t n = 40009; /* above the parallel threshold, not a multiple of any thread count tried */
    float *first = alloc_or_die(n * sizeof *first);
    float *w = alloc_or_die(n * sizeof *w);
    const int saved = omp_get_max_threads();
    for (int which = 0; which < FILL_COUNT; which++) {
        omp_set_num_threads(1);
        memset(first, 0xff, n * sizeof *first);
        fill(which, first, n);
        for (int t = 2; t <= 16; t++) {
            omp_set_num_threads(t);
            memset(w, 0xff, n * sizeof *w);
            fill(which, w, n);
            ck_assert_msg(memcmp(w, first, n * sizeof *w) == 0,
                          "fill %d differs at %d threads", which, t);
        }
    }
    omp_set_num_threads(saved);
    free(first);
    free(w);
}
END_TEST

START_TEST(test_permutation_same_any_thread_count)
{
    const int64_t n = 10007;
    int64_t *first = alloc_or_die((size_t)n * sizeof *first);
    int64_t *p = alloc_or_die((size_t)n * sizeof *p);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    sb_rng_permutation(first, n, SEED, SB_STREAM_SHUFFLE, 4);
    for (int t = 2; t <= 16; t++) {
        omp_set_num_threads(t);
        sb_rng_permutation(p, n, SEED, SB_STREAM_SHUFFLE, 4);
        ck_assert_int_eq(memcmp(p, first, (size_t)n * sizeof *p), 0);
    }
    omp_set_num_threads(saved);
    free(first);
    free(p);
}
END_TEST

Suite *make_rng_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("philox");
    tcase_add_test(tc, test_philox_known_answers);
    tcase_add_test(tc, test_counter_layout);
    tcase_add_test(tc, test_uniform_run_matches_draws);
    suite_add_tcase(s, tc);
    tc = tcase_create("distributions");
    tcase_add_test(tc, test_uniform_range_and_mean);
    tcase_add_test(tc, test_normal_moments);
    tcase_add_test(tc, test_fill_uniform_range);
    suite_add_tcase(s, tc);
    tc = tcase_create("initialisers");
    tcase_add_test(tc, test_glorot_uniform);
    tcase_add_test(tc, test_he_normal_truncation);
    tcase_add_test(tc, test_zeros);
    suite_add_tcase(s, tc);
    tc = tcase_create("permutation");
    tcase_add_test(tc, test_permutation);
    tcase_add_test(tc, test_permutation_uniform);
    suite_add_tcase(s, tc);
    tc = tcase_create("threads");
    tcase_add_test(tc, test_fill_same_bits_any_thread_count);
    tcase_add_test(tc, test_permutation_same_any_thread_count);
    suite_add_tcase(s, tc);
    return s;
}
