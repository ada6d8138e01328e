/* Double-precision evaluations of the ref definitions, with the forward error
 * bound of each op's float evaluation: what `samebits numerics` compares a
 * probe with.
 *
 * The value is evaluated from the op's own float inputs, so it judges the op
 * alone (errors carried in from upstream are not its). The bound is the
 * largest |float result - value| the op's float algorithm can produce on
 * those inputs (derivations beside each op), so a ratio above 1 is a
 * numerics bug, not bad luck. u = 2^-24, gamma(m) = m*u/(1-m*u). */
#ifndef SB_REFD_H
#define SB_REFD_H

#include <stdbool.h>

#include "sb_kernels.h"

/* The evaluation of one op (its output 0, the only one of every evaluated
 * op): value and bound get as many doubles as that output has; c->in[*].data
 * are the op's float inputs; f selects the summation algorithm the bound
 * covers (det reductions run in fixed chunks, see refd_sum_path). Each area's
 * <area>_refd.c defines sb_<name>_refd for its REFD ops (kernels.def). */
typedef void sb_refd_fn(double *value, double *bound, const sb_op_call *c, sb_family f);

/* true for the ops evaluated here (REFD in kernels.def). Not evaluated: the
 * optimiser updates (they overwrite their own inputs, the parameter and the
 * accumulators, so the probe no longer holds what they read) and
 * dropout_mask (no float inputs: its values come from the RNG and are
 * exact). */
bool sb_refd_supported(sb_op op);

/* sb_refd_fn of c's op, for output out_index (0). */
void sb_refd_eval(double *value, double *bound, const sb_op_call *c, int out_index,
                  sb_family f);

/* The inputs that produced element `index` of output out_index, as text
 * ("x=1.5 mask=2" or "row: z=[...] label=3"), for reports. */
void sb_refd_describe_inputs(char *buf, size_t len, const sb_op_call *c, int out_index,
                             size_t index);

#endif
