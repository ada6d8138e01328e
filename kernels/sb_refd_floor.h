/* What the precision test (harness/NUMERICS.md, "Precision loss or
 * reordering") needs from an op call whose output the run computed: the
 * error of that output against the double-precision value of the same
 * inputs, the error of the serial ref kernel on those inputs, and the
 * probabilistic reordering floor: the op's forward error bound (its
 * sb_refd evaluation, the loose family's rounding paths, which any order
 * of its sums stays within) with every gamma(m) replaced by Higham and
 * Mary's probabilistic gamma at lambda = SB_PRECISION_LAMBDA. */
#ifndef SB_REFD_FLOOR_H
#define SB_REFD_FLOOR_H

#include <stdbool.h>

#include "sb_kernels.h"

/* Every float order of a sum stays within the floor except with
 * probability at most 2 exp(-lambda^2 (1 - u)^2 / 2) = 3.9e-22 per rounding
 * (Higham & Mary's model: rounding errors independent, of mean zero). */
#define SB_PRECISION_LAMBDA 10.0

/* From here on sb_gamma(m) is min(gamma(m), exp(lambda sqrt(m) u + m u^2 /
 * (1 - u)) - 1); lambda 0 restores the worst case. Returns the previous
 * lambda. Not for concurrent callers: set it around one evaluation. */
double sb_gamma_lambda_set(double lambda);

/* |got - v| with v the double value: 0 where both are NaN or infinities of
 * one sign, inf where only one is non-finite. */
double sb_refd_error(float got, double v);

/* For c's output 0 (count elements), got the run's values of it:
 * err = |got - v|, seq_err = |ref kernel's value - v| and floor, each
 * rounded up to float. False when c's op has no double evaluation
 * (sb_refd_supported) or memory runs out. */
bool sb_refd_precision_eval(float *err, float *seq_err, float *floor, const sb_op_call *c,
                            const float *got);

#endif
