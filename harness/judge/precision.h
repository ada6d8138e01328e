/* The precision test beside the reordering bound (harness/NUMERICS.md,
 * "Precision loss or reordering"): at an origin whose op has a double
 * evaluation, the run's error against the double value is compared with
 * the reordering threshold of each element,
 *   max(F * golden's error, F * serial ref's error, probabilistic floor),
 * F = SB_PRECISION_FACTOR. */
#ifndef SB_JUDGE_PRECISION_H
#define SB_JUDGE_PRECISION_H

#include "sb_harness.h"

#define SB_PRECISION_FACTOR 8.0

/* Fills e's precision fields from [n] arrays: the golden's and the run's
 * errors against the double value, the serial ref kernel's, and the floor
 * (sb_refd_floor.h). Elements where a value is not finite are left to the
 * element diff's non-finite count; elements whose run error equals the
 * golden's or the serial kernel's (the same bits) are left out. */
void sb_elem_precision(sb_elem_diff *e, const float *golden_err, const float *run_err,
                       const float *seq_err, const float *floor, size_t n);

/* e shows a precision loss: tested and its ratio above 1. */
bool sb_elem_precision_lost(const sb_elem_diff *e);

/* " precision ratio R" or, above 1, the loss with the element, the two
 * errors and the threshold; "" when not tested. */
void sb_elem_precision_text(char *out, size_t len, const sb_elem_diff *e);

#endif
