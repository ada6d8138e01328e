/* The per-row steps shared by softmax and cross-entropy. */
#include <math.h>

#include "classifier.h"

float sb_row_max(const float *z, int k)
{
    float m = z[0];
    for (int j = 1; j < k; j++)
        if (z[j] > m)
            m = z[j];
    return m;
}

float sb_row_expsum(const float *z, float m, int k)
{
    float s = 0.0f;
    for (int j = 0; j < k; j++)
        s += expf(z[j] - m);
    return s;
}
