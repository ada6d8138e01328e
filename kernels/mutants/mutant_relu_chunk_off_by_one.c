/* FAULT: hand-made chunks start at multiples of ceil(n/T) but are floor(n/T)
 * long, so when T does not divide n the last element before each later
 * chunk is never written and keeps whatever the buffer held. When T divides
 * n the two sizes agree and the output is det's. */
#include <omp.h>

#include "elementwise/elementwise.h"
#include "mutants.h"

void sb_mutant_relu_chunk_off_by_one(float *y,          /* [n] */
                                     const float *x,    /* [n] */
                                     size_t n)
{
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nth = (size_t)omp_get_num_threads();
        size_t begin = t * ((n + nth - 1) / nth);
        size_t end = begin + n / nth;
        if (end > n)
            end = n;
        for (size_t i = begin; i < end; i++)
            y[i] = sb_relu(x[i]);
    }
}
