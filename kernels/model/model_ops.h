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

/* The whole-set ops of an evaluation over n rows of `classes` logits laid
 * end to end (every evaluation batch's), with the labels already probed as
 * eval.labels: eval.loss (xent_loss), softmax.eval.prob into prob, and
 * eval.accuracy. They name only logits_name, the last batch's logits probe:
 * the earlier batches' probes precede it in program order, so when the first
 * divergence is at a whole-set op they were all identical, and checking the
 * last one completes the check that the op's inputs were identical (naming
 * every batch would not fit a trace record's 64 inputs). */
void sb_model_eval_set(const sb_kernel_table *k, const sb_model_probe *p, int n, int classes,
                       float *logits, float *prob, int32_t *labels, const char *logits_name,
                       float *loss, float *accuracy);

#endif
