/* Tail paths for the mutants: a separately written loop for the last
 * thread's share of the work (as vectorised kernels keep a "tail" apart
 * from the main loop), which computes something else than det. On one
 * thread there is no tail, so a mutant built on these gives det's bits. */
#ifndef SB_MUTANT_TAIL_PATHS_H
#define SB_MUTANT_TAIL_PATHS_H

#include <omp.h>
#include <stdbool.h>

#include "op_kernels.h"
#include "pool/pool.h"

/* true on the last thread of a team of more than one */
static inline bool sb_mutant_in_tail(void)
{
    return omp_get_num_threads() > 1 && omp_get_thread_num() == omp_get_num_threads() - 1;
}

/* det's pooling loop (pool_det.c), each window through `main`, or `tail`
 * in the last thread's planes */
void sb_mutant_pool_with_tail(float *y, const float *x, const sb_window_shape *s,
                              sb_window_fn *main, sb_window_fn *tail);

/* one statistic of a row of c */
typedef float sb_mutant_row_fn(const float *x, size_t c, float eps);

/* det's loop of a layer norm statistic (norm_det.c), each row through
 * `main`, or `tail` in the last thread's rows */
void sb_mutant_rows_with_tail(float *out, const float *x, const sb_norm_shape *s,
                              sb_mutant_row_fn *main, sb_mutant_row_fn *tail);

/* one element of an elementwise op, i, from the op's inputs */
typedef float sb_mutant_element_fn(const float *const *in, size_t i);

/* an elementwise op's loop, one writer an element, each element through
 * `main`, or `tail` in the last thread's elements */
void sb_mutant_elements_with_tail(float *y, const float *const *in, size_t n,
                                  sb_mutant_element_fn *main, sb_mutant_element_fn *tail);

#endif
