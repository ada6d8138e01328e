/* The seed model, assembled from the kernel table of one family:
 * the Keras MNIST CNN (Conv 32 3x3 relu, Conv 64 3x3 relu, MaxPool 2x2,
 * Dropout, Flatten, Dense 128 relu, Dropout, Dense 10, softmax with
 * categorical cross-entropy), trained step by step with a probe at every op
 * boundary. */
#ifndef SB_MODEL_H
#define SB_MODEL_H

#include "sb_dataset.h"
#include "sb_kernels.h"
#include "sb_probe.h"

typedef struct sb_train_config {
    sb_optim_params optim;
    int batch;          /* 128 */
    int epochs;         /* 12 */
    uint64_t seed;      /* weights, dropout masks and the epoch order */
    float dropout1;     /* 0.25, after the pool */
    float dropout2;     /* 0.5, after dense 128 */
    int64_t max_steps;  /* stop after this many steps in all (0: no limit) */
    bool cut_unevaluated; /* an epoch max_steps stops early gets no evaluation and no
                           * metrics (for a run cut short only to compare its steps) */
} sb_train_config;

typedef struct sb_epoch_metrics {
    int epoch;          /* 1-based */
    int64_t steps;      /* steps done so far */
    double train_loss;  /* mean of the epoch's batch losses */
    double test_loss;
    double test_accuracy;
} sb_epoch_metrics;

void sb_train_config_defaults(sb_train_config *cfg); /* the Keras example's settings */

/* Trains from fresh weights; metrics[e] is filled after each epoch, and
 * *epochs_done says how many were (fewer when max_steps stops early; a partly
 * done epoch still gets its evaluation and metrics unless cut_unevaluated). hook may be NULL; the probes it sees,
 * in order, are listed in kernels/model/README.md. op_start: NULL, or called
 * with hook_ctx before every op the model runs. leaf_hash: NULL, or the
 * hook's leaf hash, which the ops that have a hashed mode then use to hash
 * the large tensors while they are in cache; those probes carry the leaf
 * digests (sb_probe_point.leaves). The image size is taken
 * from the data sets (train and test must agree, at least 6x6); labels must
 * be 0..9. SB_ERR_USAGE for a meaningless config, SB_ERR_SHAPE for images
 * the model cannot take, SB_ERR_INPUT for a label out of range. */
sb_status sb_model_train(const sb_kernel_table *k, const sb_train_config *cfg,
                         const sb_dataset *train, const sb_dataset *test,
                         sb_probe_fn *hook, void *hook_ctx, sb_op_start_fn *op_start,
                         sb_leaf_hash_fn *leaf_hash, sb_epoch_metrics *metrics,
                         int *epochs_done);

/* One batch of the model in evaluation mode, for the batch axis: the
 * initial weights of cfg->seed (as sb_model_train starts from), row i the
 * sample samples[i] of data, dropout off (its masks are drawn per element
 * position, so a sample's mask would follow its row: the forward pass a
 * served model runs has none), and the forward pass to the logits. The
 * probes, at step 0: every parameter (sources init.<param>), then x
 * (source) and every per-sample tensor, each [n][...] or a flat vector of
 * n equal rows: conv1.out relu1.out conv2.out relu2.out pool.out dense1.out
 * relu3.out dense2.out. Every model of the project has one such function
 * (harness/run/batch_run.c picks it by the case's model). SB_ERR_USAGE for
 * n < 1 or a sample outside data; else as sb_model_train. */
sb_status sb_model_forward_samples(const sb_kernel_table *k, const sb_train_config *cfg,
                                   const sb_dataset *data, const int64_t *samples, int n,
                                   sb_probe_fn *hook, void *hook_ctx);

/* The steps sb_model_train takes on n_train samples: full batches, then a
 * smaller last one, each epoch, cut at max_steps. */
int64_t sb_model_train_steps(const sb_train_config *cfg, int64_t n_train);

#endif
