/* Shared pieces of the double-precision evaluations: the areas'
 * <area>_refd.c files and refd.c. */
#ifndef SB_REFD_SUMS_H
#define SB_REFD_SUMS_H

#include "op_kernels.h"
#include "sb_refd.h"

#define SB_REFD_U 0x1p-24
/* Half the smallest float subnormal: the absolute error of one float
 * operation whose result underflows (gradual underflow rounds to a multiple
 * of 2^-149). */
#define SB_REFD_UNDERFLOW 0x1p-150

/* Bound of a float sum of m terms (products of floats and/or float values)
 * whose longest rounding path has `path` additions: each product rounds once
 * (or not at all under fmaf), each addition once, so
 *   |error| <= gamma(path + 1) * sum|terms| + m * underflow of the products,
 * plus the error of our own double evaluation (m * 2^-53 * sum|terms|, twice
 * for slack). */
double sb_refd_sum_bound(double abs_sum, double m, double path);

/* Longest rounding path of a reduction of m terms: m for ref and loose (one
 * accumulator, or per-thread accumulators combined: never longer than m), and
 * for det reductions that go through sb_sum_det (`chunks` chunk sums, each of
 * at most SB_GEMM_KC terms, added in order) SB_GEMM_KC + chunks, at most m. */
double sb_refd_sum_path(sb_family f, double m, double chunks);

#define SB_REFD_IN(c, i) ((const float *)(c)->in[i].data)
#define SB_REFD_LABELS(c, i) ((const int32_t *)(c)->in[i].data)

#endif
