/* Helpers shared by the kernel tests that drive ops through sb_op_call. */
#ifndef OP_TEST_H
#define OP_TEST_H

#include "sb_kernels.h"

/* uniform in [-1, 1) from a fixed-seed LCG: reproducible, no RNG dependency */
void op_test_fill_uniform(float *x, size_t n, uint64_t seed);

/* c->op and its parameters set: describes the call (which must succeed),
 * allocates every input filled with op_test_fill_uniform and output 0. */
void op_test_call_alloc(sb_op_call *c);
void op_test_call_free(sb_op_call *c);

/* a fresh copy of the op's output 0 under a family and a thread count */
float *op_test_run(const sb_op_call *c, sb_family f, int threads);

/* Two summation orders of one element differ by at most its bound, so a
 * parallel family against ref must lie within it: the bound is the
 * tolerance. Non-finite values fail. */
void op_test_assert_within_bound(const sb_op_call *c, const float *got, const float *ref,
                                 const float *bound, const char *what);

#endif
