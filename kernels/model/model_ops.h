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
/* The probes of one parameter's optimiser update: the parameter's
 * ("<opt>.<param>", the model's) and each state's the update writes in
 * place, "<opt>.<param>.<state>" (sb_optimizer_state_name: adadelta.conv2.W.acc,
 * adamw.h0.qkv.W.v). A state starts as zeros, which no probe holds; from the
 * second update on, its probe of the update before is an input of the next. */
#define SB_MODEL_STATE_NAME_SIZE 64
typedef struct sb_model_state_probes {
    char name[SB_OP_MAX_OUT - 1][SB_MODEL_STATE_NAME_SIZE];
    int n;                      /* the update's outputs after the parameter */
    bool probed;                /* each name holds the state's current value */
} sb_model_state_probes;

/* Names the state of `kind`'s update of the parameter probed as `update_name`. */
void sb_model_state_names(sb_model_state_probes *s, sb_optimizer kind, const char *update_name);
/* Probes every output of the update c just run: the parameter as
 * update_name, then each state as s names it. Each lists in_names (the
 * gradient, the parameter's latest probe, ...) and then, after the first
 * update, the state's probes: a name stands for its latest record, so the
 * state's probes also find the parameter's record of this update, made just
 * before them. leaves: NULL, or output j's digests (or NULL) at leaves[j]. */
void sb_model_probe_update(const sb_model_probe *p, const char *update_name,
                           sb_model_state_probes *s, const sb_op_call *c,
                           const char *const in_names[], int n_names,
                           sb_leaf_digest *const leaves[]);
/* The 1-based step t an update of `kind` reads, when it reads one
 * (sb_optimizer_counts_steps), as source probe "<opt>.step" (int32, one
 * element) into `holder`: the updates that read it list it. Its name, or
 * NULL when the update reads no step. */
const char *sb_model_probe_step(const sb_model_probe *p, sb_optimizer kind, int64_t t,
                                int32_t *holder);
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
