/* RoPE's table of cosines and sines (rope.h). */
#include <math.h>
#include <stdlib.h>

#include "rope.h"

double sb_rope_angle(const sb_rope_shape *s, int p, int k)
{
    return (double)p * pow((double)s->base, -2.0 * k / (double)s->d);
}

float *sb_rope_table_new(const sb_rope_shape *s)
{
    const size_t pairs = (size_t)s->d / 2;
    float *cs = malloc((size_t)s->t * pairs * 2 * sizeof *cs);
    SB_ASSERT(cs != NULL);
    for (int p = 0; p < s->t; p++)
        for (size_t k = 0; k < pairs; k++) {
            const double a = sb_rope_angle(s, p, (int)k);
            cs[2 * ((size_t)p * pairs + k)] = (float)cos(a);
            cs[2 * ((size_t)p * pairs + k) + 1] = (float)sin(a);
        }
    return cs;
}
