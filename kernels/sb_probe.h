/* The probe hook: the only thing the kernels know about the harness.
 *
 * A model (or a user's own program) calls the hook at every op boundary with
 * the tensor the op produced. The harness hashes it, writes it to the trace,
 * and when asked dumps it together with the op's reordering bound.
 *
 * The harness hashes a tensor as a tree: its bytes cut into leaves of
 * SB_HASH_LEAF_BYTES, each leaf hashed alone, then a root over a header and
 * the leaf digests (harness/FORMATS.md). Re-reading a large tensor from
 * memory after the op wrote it costs more than hashing it, so a kernel may
 * hash each leaf while it is still in cache, with the hook's own leaf hash
 * (an sb_leaf_hash_fn handed down by whoever installed the hook), and pass the
 * digests with the probe: the harness then only computes the root. */
#ifndef SB_PROBE_H
#define SB_PROBE_H

#include "sb_common.h"

/* Bytes per leaf of the tree hash. Leaf k of a float tensor holds elements
 * [k * SB_HASH_LEAF_BYTES / 4, (k + 1) * SB_HASH_LEAF_BYTES / 4). */
#define SB_HASH_LEAF_BYTES ((size_t)1 << 18)

/* The 16-byte digest of one leaf. */
typedef struct sb_leaf_digest {
    unsigned char bytes[16];
} sb_leaf_digest;

/* Hashes one leaf (len <= SB_HASH_LEAF_BYTES bytes); safe to call from
 * several threads at once. */
typedef void sb_leaf_hash_fn(sb_leaf_digest *out, const void *bytes, size_t len);

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
    sb_bound_fn *bound;         /* NULL: no bound; the op is exact when `exact` says so or the
                                 * kernel list knows it without a reduction, else no bound is
                                 * known and a difference is unbounded */
    const void *bound_ctx;
    bool exact;                 /* with bound NULL: the op has no reduction, any difference is
                                 * a bug (its dumped bound is zeros) */
    int out_index;
    /* NULL, or the digests of every leaf of `tensor`, in leaf order, made by
     * the leaf hash the hook handed down; the hook may hash the tensor
     * itself regardless. */
    const sb_leaf_digest *leaves;
} sb_probe_point;

typedef void sb_probe_fn(void *ctx, const sb_probe_point *p);

/* Called right before an op runs, with the step, the probe its output will
 * be and the op's name: a harness that writes it down at once knows which
 * op was running when the process dies inside one. */
typedef void sb_op_start_fn(void *ctx, int64_t step, const char *probe, const char *op);

#endif
