/* What every model assembled from the kernel table shares: running an op
 * through the generic op call, telling the probe hook what came out (with
 * the leaf digests of the tensor when an op hashed them), and saying which
 * op starts. The seed CNN (cnn.c) is written on it; so is any other model. */
#ifndef SB_MODEL_OPS_H
#define SB_MODEL_OPS_H

#include "sb_kernels.h"
#include "sb_probe.h"

/* Where each probe goes, and the step it carries. */
typedef struct sb_model_probe {
    sb_probe_fn *hook;          /* NULL: no probes */
    void *ctx;
    sb_op_start_fn *op_start;   /* NULL: ops start unannounced; else called with ctx */
    sb_leaf_hash_fn *leaf_hash; /* NULL: probes carry no leaf digests */
    int64_t step;
} sb_model_probe;

/* Describes c and points its tensors at out[] and in[]. */
void sb_model_bind(sb_op_call *c, void *const out[], void *const in[]);
/* sb_model_bind, then runs c with k. */
void sb_model_call(const sb_kernel_table *k, sb_op_call *c, void *const out[],
                   void *const in[]);
/* Probe of output out_index of the op call c just run; leaves: its leaf
 * digests, or NULL. */
void sb_model_probe_op(const sb_model_probe *p, const char *name, const sb_op_call *c,
                       int out_index, const char *const inputs[], int n_inputs,
                       const sb_leaf_digest *leaves);
/* Probe of data entering the run: op "source", no inputs, no bound. */
void sb_model_probe_source(const sb_model_probe *p, const char *name, const sb_tensor *t);
/* Tells p->op_start (when set) that op is about to make probe `name`. */
void sb_model_op_start(const sb_model_probe *p, const char *name, sb_op op);

#endif
