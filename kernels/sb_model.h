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

/* Data-parallel training: R ranks (processes) each run forward and backward
 * on their share of every global batch, the gradients are combined across
 * ranks, and every rank applies the same update. The global batch and the
 * data order do not depend on R. The library knows nothing of how ranks talk
 * (harness/mpi/ does, over MPI): it calls the combine hook. */
typedef enum sb_grad_reduce {
    SB_REDUCE_NONE,     /* not data parallel: the plain training loop */
    SB_REDUCE_DET,      /* each fixed chunk of `chunk` samples gets its own forward and
                         * backward, over exactly that chunk; the chunk partial
                         * gradients are gathered and added in chunk order, whichever
                         * rank owns a chunk: the bits depend on neither R nor T */
    SB_REDUCE_LOOSE,    /* each rank's share in one pass, its gradient summed over the
                         * ranks as users write it (MPI_Allreduce, MPI_SUM) */
} sb_grad_reduce;

/* How ranks combine what they computed; every rank calls each function the
 * same number of times with the same sizes. */
typedef struct sb_grad_combine {
    int rank, ranks;
    /* loose: g[0..n) replaced on every rank by its sum over the ranks */
    void (*sum)(void *ctx, float *g, size_t n);
    /* det: partials [chunks][n]; on entry the rows of this rank's chunks
     * (sb_chunks_owned) are filled, on return every row is, on every rank */
    void (*gather)(void *ctx, float *partials, size_t n, int chunks);
    void *ctx;
} sb_grad_combine;

/* The op name of a combined-gradient probe (allreduce.<param>). */
#define SB_ALLREDUCE_OP "allreduce"

/* A deliberate fault in the det data-parallel step, for the rank mutants
 * of kernels/mutants/mutants.def (SB_RANK_MUTANT). */
typedef enum sb_rank_fault {
    SB_RANK_FAULT_NONE,
    SB_RANK_FAULT_ALLREDUCE_RANK_ASSOCIATION,
    SB_RANK_FAULT_RANK_SKIPS_LAST_CHUNK,
    SB_RANK_FAULT_COUNT
} sb_rank_fault;
/* The fault of rank mutant i (sb_rank_mutant_find, sb_kernels.h). */
sb_rank_fault sb_rank_mutant_fault_kind(int i);

/* The chunks of a batch rank `rank` of `ranks` computes: a contiguous run
 * [*first, *first + *count) of chunks 0..chunks-1, the runs in rank order. */
void sb_chunks_owned(int rank, int ranks, int chunks, int *first, int *count);
/* The samples of an n-sample batch a loose rank computes: [*first, *first + *count). */
void sb_share_owned(int rank, int ranks, int n, int *first, int *count);

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
    sb_grad_reduce reduce; /* SB_REDUCE_NONE unless data parallel */
    int chunk;          /* SB_REDUCE_DET: samples per chunk (16) */
    const sb_grad_combine *combine; /* data parallel: the ranks' hook; NULL: one rank */
    sb_rank_fault rank_fault;   /* SB_REDUCE_DET: a rank mutant's fault; SB_RANK_FAULT_NONE */
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

/* The steps sb_model_train takes on n_train samples: full batches, then a
 * smaller last one, each epoch, cut at max_steps. */
int64_t sb_model_train_steps(const sb_train_config *cfg, int64_t n_train);

#endif
