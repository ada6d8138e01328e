/* The probe hook: the only thing the kernels know about the harness.
 *
 * A model (or a user's own program) calls the hook at every op boundary with
 * the tensor the op produced. The harness hashes it, writes it to the trace,
 * and when asked dumps it together with the op's reordering bound. */
#ifndef SB_PROBE_H
#define SB_PROBE_H

#include "sb_common.h"

/* Writes the per-element reordering bound of output `out_index` of the op
 * that `ctx` describes into `bound` (as many floats as the output has). */
typedef void sb_bound_fn(float *bound, const void *ctx, int out_index);

typedef struct sb_probe_point {
    int64_t step;               /* training step, 0 for a single-kernel case */
    const char *name;           /* "conv2.fwd.out", "conv2.bwd.dW", "adadelta.conv2.W" */
    const char *op;             /* op name ("conv2d_fwd"), or "source" for data entering the run */
    const sb_tensor *tensor;    /* the probed tensor */
    const char *const *inputs;  /* names of the probes this op read (latest record of each name) */
    int n_inputs;
    const sb_tensor *input_tensors; /* the live input tensors, parallel to inputs, or NULL */
    int n_input_tensors;        /* may be fewer than n_inputs: state updated in place is named but not kept */
    sb_bound_fn *bound;         /* NULL: the op has no reduction, any difference is a bug */
    const void *bound_ctx;
    int out_index;
} sb_probe_point;

typedef void sb_probe_fn(void *ctx, const sb_probe_point *p);

#endif
