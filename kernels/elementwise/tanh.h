/* tanh in float with the same bits on every CPU, compiler and libm: only +,
 * -, *, / (each correctly rounded, never contracted: kernels/meson.build),
 * comparisons and exponent bits, no branch and no library call. A loop of it
 * vectorises where the compiler if-converts its selects (clang at every
 * width; GCC 12 in every copy of SB_ISA_VARIANTS given -fno-trapping-math,
 * kernels/meson.build, where before the AVX-512 copy alone), and every copy
 * gives the scalar loop's bits. A
 * libm's tanhf is neither vectorised nor the same from one libm (or glibc
 * release) to the next.
 *
 * With a = |x| and the sign of x put back at the end (tanh is odd):
 *   a < 0.625   a + (a z) P(z), z = a^2, P of degree 4: a weighted
 *               least-squares fit of (tanh(a)/a - 1)/z on 400 Chebyshev
 *               nodes of [0, 0.625^2], each coefficient rounded to float;
 *   a >= 0.625  (e - 1) / (e + 1), e = exp(2a), a clamped to 9.5 (tanh
 *               rounds to 1 from 9.02 on, and the clamp keeps e finite; NaN
 *               is clamped too, then passed through): 2a = n ln2 + r with n
 *               = round(2a / ln2), ln2 in two parts whose first has 15
 *               significant bits (n ln2_hi is exact for n < 2^9, here n <=
 *               27, and 2a - n ln2_hi too, the two being within a factor
 *               2), |r| <= ln2/2;
 *               exp(r) = 1 + r + r^2 Q(r), Q of degree 4 fitted as P was;
 *               e = exp(r) 2^n through the exponent bits.
 * Error, in units of 2^-23 |tanh x| (the ulps of kernels/running_error.h),
 * each rounding at most half an ulp of its result's binade (u = 2^-24):
 *   first range: the fit errs by 0.09 u of a; z, the eight roundings of P's
 *   Horner steps and the products a z and (a z) p put at most 4.5 u on a
 *   correction term of at most 0.14 a (0.63 u of a), the final add 1 u:
 *   1.7 u of a, so 1.9 u of tanh a >= 0.89 a: 0.95 units;
 *   second range: e errs relatively by at most 1.73 u (the fit 0.06 u, r's
 *   rounding 0.25 u, Horner 1.42 u); e - 1 and e + 1 carry it with factors
 *   e/(e-1) and e/(e+1), which partly cancel in the quotient: 1.73 u
 *   2e/(e^2-1) <= 1.08 u at e >= exp(1.25), plus 3 roundings: 4.08 u, 2.04
 *   units.
 * Measured over every float: at most 0.69 units in the first range, 1.125 in
 * the second (kernels/tests/test_tanh.c checks a stride of them against
 * tanh in double, and the boundaries whole). */
#ifndef SB_TANH_H
#define SB_TANH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* 2^n for an integer n in [-126, 127], held in a float */
static inline float sb_tanh_pow2(float n)
{
    const uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* exp(y) for y in [0, 19] (see above) */
static inline float sb_tanh_exp(float y)
{
    const float round_magic = 0x1.8p23f;   /* adding it rounds y / ln2 to an integer */
    const float n = (y * 0x1.715476p+0f + round_magic) - round_magic;
    const float ln2_hi = 0x1.62e4p-1f, ln2_lo = 0x1.7f7d1cp-20f;
    const float r = (y - n * ln2_hi) - n * ln2_lo;
    float q = 0x1.687c22p-10f;
    q = q * r + 0x1.123b8ep-7f;
    q = q * r + 0x1.555b58p-5f;
    q = q * r + 0x1.55548ep-3f;
    q = q * r + 0x1.fffff8p-2f;
    q = q * r + 1.0f;
    q = q * r + 1.0f;
    return q * sb_tanh_pow2(n);
}

static inline float sb_tanhf(float x)
{
    const float a = fabsf(x);
    const float z = a * a;
    float p = -0x1.75d1f4p-8f;
    p = p * z + 0x1.522178p-6f;
    p = p * z + -0x1.b83b2ep-5f;
    p = p * z + 0x1.110718p-3f;
    p = p * z + -0x1.555532p-2f;
    const float near_zero = a + (a * z) * p;

    const float clamped = a < 9.5f ? a : 9.5f;   /* NaN included */
    const float e = sb_tanh_exp(clamped + clamped);
    const float far = (e - 1.0f) / (e + 1.0f);

    const float t = a < 0.625f ? near_zero : far;
    return isnan(x) ? x : copysignf(t, x);
}

#endif
