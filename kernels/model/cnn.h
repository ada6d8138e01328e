/* The Keras MNIST CNN inside the library: its buffers and its passes.
 * sb_model_train (train.c) drives it; the probe list is in cnn.c. */
#ifndef SB_CNN_H
#define SB_CNN_H

#include <stdbool.h>

#include "model_ops.h"
#include "sb_model.h"

#define SB_CNN_CLASSES 10
#define SB_CNN_CONV1_K 32
#define SB_CNN_CONV2_K 64
#define SB_CNN_HIDDEN 128
#define SB_CNN_KERNEL 3 /* 3x3 filters, stride 1, no padding */

/* The trainable tensors, in the order they are initialised and updated. */
typedef enum sb_cnn_param {
    SB_CNN_CONV1_W, SB_CNN_CONV1_B,
    SB_CNN_CONV2_W, SB_CNN_CONV2_B,
    SB_CNN_DENSE1_W, SB_CNN_DENSE1_B,
    SB_CNN_DENSE2_W, SB_CNN_DENSE2_B,
    SB_CNN_PARAM_COUNT
} sb_cnn_param;

/* A probe held back until the next op has run (cnn.c), so that the op, which
 * reads the tensor while it is still in cache, can hash its leaves. */
#define SB_CNN_MAX_HELD 2
typedef struct sb_cnn_held {
    sb_op_call c;               /* the op call that produced output 0 */
    const char *name;
    const char *in_names[SB_OP_MAX_IN];
    int n_names;
} sb_cnn_held;

/* Leaf digests of one op call: each output, then each input. */
enum { SB_CNN_LEAF_SLOTS = SB_OP_MAX_OUT + SB_OP_MAX_IN };

/* Every buffer is allocated once, for the largest batch; a pass over n <=
 * batch samples uses the first n rows. Activations are NCHW. */
typedef struct sb_cnn {
    const sb_kernel_table *k;
    const sb_train_config *cfg;
    int batch;                  /* rows of every per-sample buffer */
    int h, w;                   /* input image */
    int h1, w1, h2, w2, h3, w3; /* after conv1, conv2, pool */
    int features;               /* 64 * h3 * w3, the flattened pool output */

    sb_train_counters ctr;      /* the loop's counters (train.c); the update reads optim_t,
                                 * the dropout masks rng_step */
    float *param[SB_CNN_PARAM_COUNT];
    float *grad[SB_CNN_PARAM_COUNT];
    float *state[SB_CNN_PARAM_COUNT][2]; /* optimiser accumulators */
    sb_tensor param_view[SB_CNN_PARAM_COUNT]; /* shape of each parameter */
    char update_name[SB_CNN_PARAM_COUNT][48]; /* "adadelta.conv1.W" */
    sb_model_state_probes state_probes[SB_CNN_PARAM_COUNT]; /* "adadelta.conv1.W.acc", ... */
    const char *latest[SB_CNN_PARAM_COUNT];   /* probe holding the current value */
    const char *grad_probe[SB_CNN_PARAM_COUNT]; /* probe of the gradient an update reads */

    /* data parallel (cnn_parallel.c): the gradient of one chunk (det) or of
     * the rank's share (loose) is a row of `partials`: every parameter's
     * gradient at grad_offset[i], then the chunk's part of the batch loss */
    float *partials;            /* [batch / chunk rounded up, or 1][grad_total] */
    size_t grad_offset[SB_CNN_PARAM_COUNT], grad_total;
    char combined_name[SB_CNN_PARAM_COUNT][48]; /* "allreduce.conv1.W" */
    bool masks_given;           /* a pass over rows of a batch whose dropout masks were drawn
                                 * for the whole batch: the forward draws none */
    int mean_over;              /* the rows the loss is the mean over; 0: the pass's own */

    /* forward */
    float *x;           /* [batch][1][h][w] */
    int32_t *labels;    /* [batch] */
    float *conv1, *relu1;       /* [batch][32][h1][w1] */
    float *conv2, *relu2;       /* [batch][64][h2][w2] */
    float *pool, *mask1, *drop1; /* [batch][features] */
    float *dense1, *relu3, *mask2, *drop2; /* [batch][128] */
    float *logits, *prob;       /* [batch][10] */
    float loss;                 /* mean over the batch */

    /* backward: d<tensor> is the gradient of the loss at that tensor */
    float *dlogits;             /* [batch][10] */
    float *ddrop2, *drelu3, *ddense1; /* [batch][128] */
    float *ddrop1, *dpool;      /* [batch][features] */
    float *drelu2, *dconv2;     /* [batch][64][h2][w2] */
    float *drelu1, *dconv1;     /* [batch][32][h1][w1] */

    /* probes held back, oldest first, and room for the leaf digests of the
     * largest tensor in each slot */
    sb_cnn_held held[SB_CNN_MAX_HELD];
    int n_held;
    sb_leaf_digest *leaves[SB_CNN_LEAF_SLOTS];
} sb_cnn;

/* SB_ERR_SHAPE when the images are too small for two 3x3 convolutions and
 * a 2x2 pool; SB_ERR_NOMEM. */
sb_status sb_cnn_alloc(sb_cnn *m, const sb_kernel_table *k,
                       const sb_train_config *cfg, int h, int w);
void sb_cnn_free(sb_cnn *m);

/* Keras initialisers from cfg->seed; probes init.<param> at step 0. */
void sb_cnn_init(sb_cnn *m, const sb_model_probe *p);

/* The training state a checkpoint holds: m->ctr, every parameter by name
 * ("conv1.W") and every optimiser state buffer ("adadelta.conv1.W.acc"). */
void sb_cnn_state(sb_cnn *m, sb_train_state *s);
/* After a checkpoint's state was loaded into m: the probes the next update
 * lists name the values of the last update before it, as in a run that
 * never stopped. */
void sb_cnn_resumed(sb_cnn *m);
/* Trains the run r's model on train, evaluating on test (sb_model_train,
 * with r->checkpoint); err says why on SB_ERR_INPUT from a checkpoint. */
sb_status sb_cnn_train(const sb_model_run *r, const sb_dataset *train, const sb_dataset *test,
                       sb_epoch_metrics *metrics, int *epochs_done, char *err, size_t errlen);

/* eval_batch of a training pass */
#define SB_CNN_TRAIN (-1)
/* eval_batch of sb_model_forward_samples: evaluation, names without a batch */
#define SB_CNN_SAMPLES (-2)
/* Room for any probe name of the model ("eval.b<k>.dense2.out" included). */
#define SB_CNN_NAME_SIZE 48

/* Forward over m->x[0..n). eval_batch SB_CNN_TRAIN: dropout on, softmax and
 * the batch loss (needs m->labels), probes <layer>.fwd.<tensor>. eval_batch
 * k >= 0: test batch k, dropout off, stop at the logits, written to `logits`
 * ([n][10], m->logits when NULL), probes eval.b<k>.<layer>.out.
 * SB_CNN_SAMPLES: as an evaluation, probes <layer>.out. */
void sb_cnn_forward(sb_cnn *m, int n, int eval_batch, float *logits, const sb_model_probe *p);
/* The probe name "eval.b<batch>.<tensor>" of the evaluation pass. */
void sb_cnn_eval_name(char out[SB_CNN_NAME_SIZE], int batch, const char *tensor);
void sb_cnn_backward(sb_cnn *m, int n, const sb_model_probe *p);
/* One optimiser step on every parameter; p->step is the 0-based step. */
void sb_cnn_update(sb_cnn *m, const sb_model_probe *p);

/* Data parallel (cfg->reduce): the forward and backward of this rank's part
 * of the global batch m->x[0..n), the gradients combined over the ranks
 * (cfg->combine) into m->grad, and m->loss the batch loss. Probes, in
 * order: allreduce.<param> for every parameter (the combined gradient). */
void sb_cnn_parallel_step(sb_cnn *m, int n, const sb_model_probe *p);
/* The buffers of the step; called by sb_cnn_alloc. */
bool sb_cnn_parallel_alloc(sb_cnn *m);
/* Both dropout masks of a training step for rows 0..n, unprobed: a pass over
 * some of those rows (masks_given) then uses the rows' own masks, drawn at
 * the samples' places in the batch, whoever computes them. */
void sb_cnn_masks(sb_cnn *m, int n, int64_t step);
/* The op that makes parameter i's gradient over rows 0..n of the backward
 * buffers, bound to them (its output m->grad[i]). */
sb_op_call sb_cnn_grad_call(const sb_cnn *m, sb_cnn_param i, int n);

#endif
