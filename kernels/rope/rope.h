/* Rotary position embedding (RoPE), the arithmetic every family runs.
 *
 * Row i of n is at position p = i % t and holds h heads of width d; the pair
 * (x0, x1) = (x[2k], x[2k + 1]) of a head (interleaved pairs, as Meta's
 * LLaMA) turns by the angle p * base^(-2k / d):
 *   fwd  y0 = x0 c - x1 s,    y1 = x0 s + x1 c
 *   bwd  dx0 = dy0 c + dy1 s, dx1 = dy1 c - dy0 s   (the inverse rotation)
 * each product and sum rounding once (-ffp-contract=off). c and s come from
 * one table of t x d/2 pairs (sb_rope_table_new): each angle, its cosine and
 * its sine evaluated in double (libm's cos and sin) and rounded once to
 * float. Given the table nothing reduces, so every family has ref's bits;
 * the table is the one place a libm enters, and a libm whose double cos or
 * sin differs by an ulp moves a float entry only where the double lies
 * within that ulp of a float rounding boundary. */
#ifndef SB_ROPE_H
#define SB_ROPE_H

#include <stddef.h>

#include "op_kernels.h"

/* cos and sin of position p, pair k: table[2 (p d/2 + k)] and the next */
float *sb_rope_table_new(const sb_rope_shape *s);

/* angle of position p, pair k, in double */
double sb_rope_angle(const sb_rope_shape *s, int p, int k);

/* one row of h heads: forward (inverse false) or backward (inverse true) */
static inline void sb_rope_row(float *y, const float *x, const float *cs, const sb_rope_shape *s,
                               int inverse)
{
    const size_t pairs = (size_t)s->d / 2;
    for (size_t j = 0; j < (size_t)s->h; j++)
        for (size_t k = 0; k < pairs; k++) {
            const size_t at = j * (size_t)s->d + 2 * k;
            const float c = cs[2 * k], sn = cs[2 * k + 1], x0 = x[at], x1 = x[at + 1];
            if (inverse) {
                y[at] = x0 * c + x1 * sn;
                y[at + 1] = x1 * c - x0 * sn;
            } else {
                y[at] = x0 * c - x1 * sn;
                y[at + 1] = x0 * sn + x1 * c;
            }
        }
}

#endif
