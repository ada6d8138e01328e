/* Helpers shared by the kernel tests, most for those that drive ops through
 * sb_op_call. */
#ifndef OP_TEST_H
#define OP_TEST_H

#include <stdbool.h>

#include "sb_kernels.h"

/* n floats from malloc; the test fails when there is no memory */
float *op_test_alloc_floats(size_t n);

/* uniform in [lo, hi) from the counter-based RNG (sb_rng_uniform of seed,
 * SB_STREAM_CASE_INPUT, step, element index): reproducible */
void op_test_fill_rng(float *x, size_t n, float lo, float hi, uint64_t seed, uint32_t step);

/* a[0..n) and b[0..n) are the same bits */
bool op_test_same_bits(const float *a, const float *b, size_t n);

/* Numeric equality (+0 equals -0, NaN equals nothing), spelled without ==
 * so that -Wfloat-equal stays on for every comparison that is not meant to
 * be exact. */
bool op_test_feq(float a, float b);

/* uniform in [-1, 1) from a fixed-seed LCG: reproducible, no RNG dependency */
void op_test_fill_uniform(float *x, size_t n, uint64_t seed);

/* c->op and its parameters set: describes the call (which must succeed),
 * allocates every input filled with op_test_fill_uniform (labels: drawn in
 * [0, sb_op_call_label_range)) and output 0. */
void op_test_call_alloc(sb_op_call *c);
void op_test_call_free(sb_op_call *c);

/* a fresh copy of the op's output 0 under a family and a thread count */
float *op_test_run(const sb_op_call *c, sb_family f, int threads);

/* Two summation orders of one element differ by at most its bound, so a
 * parallel family against ref must lie within it: the bound is the
 * tolerance. Non-finite values fail. */
void op_test_assert_within_bound(const sb_op_call *c, const float *got, const float *ref,
                                 const float *bound, const char *what);

/* det and loose at 1..max_threads against ref, within the op's bound. */
void op_test_check_families_within_bound(const sb_op_call *c, int max_threads);

/* det at 2..max_threads bitwise equal to det at 1 thread. */
void op_test_check_det_bitwise(const sb_op_call *c, int max_threads);

/* loose at some thread count in 2..max_threads not the bits of loose at 1:
 * the thread dependence the harness exists to explain. */
void op_test_check_loose_moves(const sb_op_call *c, int max_threads);

/* the float tensor's values as doubles, from malloc */
double *op_test_doubles(const sb_tensor *t);
/* The batch axis: the output row of sample 0 of a batch of n samples in
 * which it sits at `row` (every other row another sample), run by table k
 * at `threads`. base: op and parameters, its batch n ignored. The row's
 * floats are op_test_batch_row_count(base). */
float *op_test_batch_row(const sb_op_call *base, const sb_kernel_table *k, int n, int row,
                         int threads);
/* The same with sample 0 in every one of rows[0..n_rows) (distinct) of one
 * batch: their n_rows output rows, one after the other. */
float *op_test_batch_rows(const sb_op_call *base, const sb_kernel_table *k, int n,
                          const int *rows, int n_rows, int threads);
size_t op_test_batch_row_count(const sb_op_call *base);

#endif
