/* FAULT: each thread's share of the elements is cut down to whole vectors
 * of 16 (the width the body is written for) and the scalar loop for the
 * remainder is missing: up to 15 elements at the end of every share are
 * never written. On one thread the share is the whole tensor, whose
 * length a multiple of 16 leaves no remainder (det's bits); from two, a
 * share that does not end on a multiple of 16 leaves its last elements as
 * the buffer held them. */
#include <omp.h>

#include "elementwise/elementwise.h"
#include "mutants.h"

#define VECTOR 16

void sb_mutant_silu_bwd_vector_remainder_dropped(float *dx,          /* [n] */
                                                 const float *dy,    /* [n] */
                                                 const float *x,     /* [n] forward input */
                                                 size_t n)
{
#pragma omp parallel
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        const size_t lo = n * me / team, hi = n * (me + 1) / team;
        const size_t body = (hi - lo) / VECTOR * VECTOR;
        for (size_t i = lo; i < lo + body; i++)
            dx[i] = sb_silu_grad(dy[i], x[i]);
    }
}
