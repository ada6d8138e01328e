/* Tail paths for the mutants: a separately written loop for the last
 * thread's share of the work (as vectorised kernels keep a "tail" apart
 * from the main loop), which computes something else than det. On one
 * thread there is no tail, so a mutant built on these gives det's bits.
 *
 * Remainders: each thread's own share of the work cut as a hand-vectorised
 * loop cuts it, a main loop over whole groups from the share's start and a
 * separately written remainder loop over what is left, which computes
 * something else than det. On one thread over a multiple of the group
 * there is no remainder: det's bits. */
#ifndef SB_MUTANT_TAIL_PATHS_H
#define SB_MUTANT_TAIL_PATHS_H

#include <omp.h>
#include <stdbool.h>

#include "loss/nll.h"
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

/* ---- remainders */

/* the elements (or positions) a step of the main loop takes: eight vectors
 * of eight floats */
#define SB_MUTANT_GROUP 64

/* [lo, hi) of a thread's main loop (remainder false) or remainder loop */
typedef void sb_mutant_span_fn(void *ctx, size_t lo, size_t hi, bool remainder);

/* each thread's share of [0, n), thread j of T taking [n j / T, n (j + 1) / T),
 * through `span`: its whole groups of `group`, then the rest */
void sb_mutant_share_with_remainder(size_t n, size_t group, sb_mutant_span_fn *span, void *ctx);

/* one element of an elementwise op of two inputs */
typedef float sb_mutant_pair_fn(float u, float v);

/* out[i] = main(u[i], v[i]), or remainder(u[i], v[i]) in the remainder loops
 * (groups of SB_MUTANT_GROUP) */
void sb_mutant_pairs_with_remainder(float *out, const float *u, const float *v, size_t n,
                                    sb_mutant_pair_fn *main, sb_mutant_pair_fn *remainder);

/* one position's term of the negative log-likelihood (sb_nll_term, nll.h) */
typedef float sb_mutant_nll_term_fn(const float *logprob, const int32_t *labels,
                                    const float *weight, const sb_nll_shape *s, size_t e);

/* terms[e] = det's sb_nll_term, or remainder's in the remainder loops
 * (groups of SB_MUTANT_GROUP positions) */
void sb_mutant_nll_terms_with_remainder(float *terms,            /* [n][d] */
                                        const float *logprob,    /* [n][k][d] */
                                        const int32_t *labels,   /* [n][d] */
                                        const float *weight,     /* [k] */
                                        const sb_nll_shape *s,
                                        sb_mutant_nll_term_fn *remainder);
/* one element of an elementwise op, i, from the op's inputs */
typedef float sb_mutant_element_fn(const float *const *in, size_t i);

/* an elementwise op's loop, one writer an element, each element through
 * `main`, or `tail` in the last thread's elements */
void sb_mutant_elements_with_tail(float *y, const float *const *in, size_t n,
                                  sb_mutant_element_fn *main, sb_mutant_element_fn *tail);

#endif
