/* Shared pieces of the double-precision evaluations (kernels/refd). */
#ifndef REFD_H
#define REFD_H

#include "sb_refd.h"

#define REFD_U 0x1p-24
/* Half the smallest float subnormal: the absolute error of one float
 * operation whose result underflows (gradual underflow rounds to a multiple
 * of 2^-149). */
#define REFD_UNDERFLOW 0x1p-150

/* Bound of a float sum of m terms (products of floats and/or float values)
 * whose longest rounding path has `path` additions: each product rounds once
 * (or not at all under fmaf), each addition once, so
 *   |error| <= gamma(path + 1) * sum|terms| + m * underflow of the products,
 * plus the error of our own double evaluation (m * 2^-53 * sum|terms|, twice
 * for slack). */
double refd_sum_bound(double abs_sum, double m, double path);

/* Longest rounding path of a reduction of m terms: m for ref and loose (one
 * accumulator, or per-thread accumulators combined: never longer than m), and
 * for det reductions that go through sb_sum_det (`chunks` chunk sums, each of
 * at most SB_GEMM_KC terms, added in order) SB_GEMM_KC + chunks, at most m. */
double refd_sum_path(sb_family f, double m, double chunks);

void refd_conv(double *value, double *bound, const sb_op_call *c, sb_family f);
void refd_dense(double *value, double *bound, const sb_op_call *c, sb_family f);
void refd_elementwise(double *value, double *bound, const sb_op_call *c);
void refd_classifier(double *value, double *bound, const sb_op_call *c);

#define REFD_IN(c, i) ((const float *)(c)->in[i].data)
#define REFD_LABELS(c, i) ((const int32_t *)(c)->in[i].data)

#endif
