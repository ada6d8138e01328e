/* The models assembled from the kernel table of one family, each trained
 * step by step with a probe at every op boundary, and the registry that
 * names them (kernels/model/README.md):
 *   keras_mnist_cnn  the seed model, the Keras MNIST CNN (Conv 32 3x3 relu,
 *                    Conv 64 3x3 relu, MaxPool 2x2, Dropout, Flatten, Dense
 *                    128 relu, Dropout, Dense 10, softmax with categorical
 *                    cross-entropy) on an image data set
 *   char_gpt         a character-level GPT (token and position embeddings,
 *                    pre-LN blocks of causal attention and a GELU MLP, final
 *                    LN, a dense head, cross-entropy; AdamW with global-norm
 *                    clipping) on a text data set */
#ifndef SB_MODEL_H
#define SB_MODEL_H

#include "sb_dataset.h"
#include "sb_kernels.h"
#include "sb_probe.h"

/* char_gpt's blocks at most: gradnorm.fwd.norm names every gradient probe
 * as an input, and a trace record holds at most 64 (harness/FORMATS.md):
 * at most 14 per block (a SwiGLU block with biases) and 6 others, 62 for 4
 * blocks. */
#define SB_GPT_MAX_LAYERS 4

/* char_gpt's block (kernels/model/gpt.h): every choice's 0 is GPT-2's. */
typedef enum sb_gpt_norm { SB_GPT_LAYERNORM, SB_GPT_RMSNORM } sb_gpt_norm;
typedef enum sb_gpt_position { SB_GPT_LEARNED, SB_GPT_ROPE } sb_gpt_position;
typedef enum sb_gpt_mlp { SB_GPT_GELU, SB_GPT_SWIGLU } sb_gpt_mlp;
typedef struct sb_gpt_block_config {
    sb_gpt_norm norm;           /* layernorm (w, b) or rmsnorm (w) */
    sb_gpt_position position;   /* learned wpe, or rotary q and k (base 10000) */
    sb_gpt_mlp mlp;             /* fcproj(gelu(fc x)) or fcproj(silu(fc x) * up x) */
    int kv_heads;               /* key/value heads, dividing heads; 0: heads */
    bool no_bias;               /* no dense biases (bias = false) */
} sb_gpt_block_config;

/* char_gpt's sizes and schedule (kernels/model/gpt.h); the CNN reads none. */
typedef struct sb_gpt_config {
    int layers;         /* 2 blocks, at most SB_GPT_MAX_LAYERS */
    int heads;          /* 4; width must be a multiple */
    int width;          /* 128: C, the model width */
    int context;        /* 64: T, tokens per window */
    int64_t steps;      /* training steps, one batch of windows each */
    int eval_every;     /* evaluate every this many steps, and after the last */
    int eval_windows;   /* validation windows of each evaluation */
    float clip;         /* global gradient-norm clip; 0: none */
    sb_gpt_block_config block; /* all 0: GPT-2's block */
} sb_gpt_config;
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

/* ---- checkpoint and resume -----------------------------------------------------
 * A training loop's counters: everything besides the tensors that the next
 * step reads. In a run that never stopped they move together (optim_t and
 * rng_step equal step; the CNN's order_key equals epoch; the GPT's
 * order_key equals step); a checkpoint holds each one, and a resume
 * restores each one (harness/FORMATS.md, "Checkpoints"). */
typedef struct sb_train_counters {
    int64_t step;           /* steps done: the number of the next step */
    int64_t optim_t;        /* optimiser updates done: Adam's and AdamW's next t is optim_t + 1 */
    int64_t rng_step;       /* the step counter the next step's dropout masks are drawn at */
    int64_t epoch;          /* the CNN: the epoch of the next step (0 for the GPT) */
    int64_t epoch_first;    /* the CNN: the step its epoch began at (0 for the GPT) */
    int64_t order_key;      /* the counter the data order is drawn at: the CNN's epoch
                             * shuffle; the GPT's windows of the next step */
    int64_t position;       /* the CNN: samples of the epoch's order consumed (0 for the GPT) */
    int64_t losses;         /* training losses summed since the last evaluation */
    double loss_sum;        /* their sum, for the next metrics line */
} sb_train_counters;

/* A resume mutant's fault (kernels/mutants/mutants.def, SB_RESUME_MUTANT):
 * what a restore does to the counters a checkpoint held. NULL: nothing. */
typedef void sb_resume_fault_fn(sb_train_counters *c);
/* The resume mutants (SB_RESUME_MUTANT of kernels/mutants/mutants.def). */
int sb_resume_mutant_count(void);
int sb_resume_mutant_find(const char *name);            /* index, or -1 if unknown */
const char *sb_resume_mutant_name(int i);               /* i in [0, sb_resume_mutant_count()) */
sb_resume_fault_fn *sb_resume_mutant_restore(int i);    /* the faulty restore */
const char *sb_resume_mutant_fault(int i);              /* one line */

/* One tensor of a model's training state, as a checkpoint holds it. */
typedef struct sb_train_tensor {
    const char *name;       /* "conv1.W", "conv1.W.acc", "adamw.m" ... */
    float *data;
    size_t count;
} sb_train_tensor;

#define SB_TRAIN_MAX_TENSORS 32

/* A model's training state at a step boundary: its counters and every
 * tensor the next step reads (parameters, optimiser state). */
typedef struct sb_train_state {
    sb_train_counters ctr;
    sb_train_tensor tensor[SB_TRAIN_MAX_TENSORS];
    int n_tensors;
} sb_train_state;

/* Where a run stops and from where it resumes (harness/run/checkpoint.c
 * writes and reads the file). stop_at > 0: after step stop_at - 1 (before
 * the evaluation that step may close) save() the state and end the run.
 * load non-NULL: instead of the initial weights (and their step-0 probes),
 * load() fills the state's tensors, whose names and counts it must check,
 * and counters; the run goes on from ctr.step. Either says why in err. */
typedef struct sb_train_checkpoint {
    int64_t stop_at;
    sb_status (*save)(void *ctx, const sb_train_state *s, char *err, size_t errlen);
    sb_status (*load)(void *ctx, sb_train_state *s, char *err, size_t errlen);
    void *ctx;
} sb_train_checkpoint;

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
    sb_gpt_config gpt;  /* char_gpt only */
    sb_grad_reduce reduce; /* SB_REDUCE_NONE unless data parallel */
    int chunk;          /* SB_REDUCE_DET: samples per chunk (16) */
    const sb_grad_combine *combine; /* data parallel: the ranks' hook; NULL: one rank */
    sb_rank_fault rank_fault;   /* SB_REDUCE_DET: a rank mutant's fault; SB_RANK_FAULT_NONE */
    sb_resume_fault_fn *resume_fault; /* a resume mutant's restore fault; NULL */
} sb_train_config;

/* One evaluation: for the CNN after each epoch; for char_gpt every
 * eval_every steps, where "epoch" counts evaluations, the train loss is the
 * mean over the steps since the last one, and the test loss and accuracy are
 * the validation windows' (accuracy: next-token predictions whose most likely
 * token is the true one). */
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
 * relu3.out dense2.out. It is the CNN's samples_forward (sb_model_kind).
 * SB_ERR_USAGE for n < 1 or a sample outside data; else as sb_model_train. */
sb_status sb_model_forward_samples(const sb_kernel_table *k, const sb_train_config *cfg,
                                   const sb_dataset *data, const int64_t *samples, int n,
                                   sb_probe_fn *hook, void *hook_ctx);

/* The steps sb_model_train takes on n_train samples: full batches, then a
 * smaller last one, each epoch, cut at max_steps. */
int64_t sb_model_train_steps(const sb_train_config *cfg, int64_t n_train);

/* ---- the registry -------------------------------------------------------------
 * Every model by name, so that a case, the run child, the numerics mode and
 * the tools take any of them the same way (kernels/model/registry.c). */

/* One training run: the kernels, the settings, the data set by name with
 * its train and test (validation) ranges, and where probes go. */
typedef struct sb_model_run {
    const sb_kernel_table *k;
    const sb_train_config *cfg;
    const char *dataset;        /* a name the model's dataset_ok takes */
    const char *data_dir;       /* NULL: "data" */
    int64_t train_begin, train_end, test_begin, test_end; /* samples or characters */
    sb_probe_fn *hook;          /* NULL: no probes */
    void *hook_ctx;
    sb_op_start_fn *op_start;   /* NULL, or called with hook_ctx before every op */
    sb_leaf_hash_fn *leaf_hash; /* NULL, or the hook's leaf hash (sb_model_train) */
    const char *what;           /* names the run in messages (the case file) */
    const sb_train_checkpoint *checkpoint; /* NULL: from fresh weights to the end */
} sb_model_run;

/* A model's samples for the batch axis: the run they belong to (its
 * settings, data set, ranges and probe hook), the model's opened data, and
 * how many samples the training range holds. */
typedef struct sb_model_samples {
    sb_model_run run;
    void *data;                 /* the model's own (samples_open, samples_close) */
    int64_t count;
} sb_model_samples;

typedef struct sb_model_kind {
    const char *name;           /* "keras_mnist_cnn", the [train] model key */
    const char *datasets;       /* the data sets it takes, for messages */
    bool (*dataset_ok)(const char *dataset);
    /* The model's default settings (the CNN: sb_train_config_defaults). */
    void (*defaults)(sb_train_config *cfg);
    /* The steps a whole run takes with n_train training samples (or characters). */
    int64_t (*steps)(const sb_train_config *cfg, int64_t n_train);
    /* The metric lines a whole run gives at most (epochs, evaluations). */
    int (*evaluations)(const sb_train_config *cfg);
    /* Loads the data set, slices it and trains; metrics gets one line per
     * evaluation (room for evaluations(cfg)), *n_metrics how many. err says
     * why on failure: SB_ERR_INPUT for data or settings the model cannot take. */
    sb_status (*run)(const sb_model_run *r, sb_epoch_metrics *metrics, int *n_metrics,
                     char *err, size_t errlen);
    /* The batch axis (harness/run/batch_run.c); NULL when the model has
     * none. samples_open opens the data set s->run names and keeps its
     * training range: s->count samples (the CNN's images; char_gpt's
     * windows of context characters, window w starting at character w *
     * context). samples_forward runs one batch of n of them, row i sample
     * samples[i], through the forward pass in evaluation mode from the
     * initial weights of s->run.cfg->seed, probing s->run.hook at step 0:
     * every parameter as a source init.<param>, then every per-sample
     * tensor, each [n][...] or a flat vector of n equal rows. Both say why
     * in err on failure (SB_ERR_INPUT for data or sizes the model cannot
     * take). */
    sb_status (*samples_open)(sb_model_samples *s, char *err, size_t errlen);
    sb_status (*samples_forward)(const sb_model_samples *s, const int64_t *samples, int n,
                                 char *err, size_t errlen);
    void (*samples_close)(sb_model_samples *s);
    /* The model has a data-parallel step (sb_grad_combine). */
    bool data_parallel;
} sb_model_kind;

int sb_model_count(void);
const sb_model_kind *sb_model_at(int i);            /* i in [0, sb_model_count()) */
const sb_model_kind *sb_model_find(const char *name); /* NULL if unknown */
/* "keras_mnist_cnn or char_gpt", for messages. */
const char *sb_model_names(void);

/* ---- char_gpt ------------------------------------------------------------------ */

struct sb_gpt;
struct sb_text;
/* What to sample after training: `chars` characters drawn with `seed`
 * (kernels/model/README.md) into out, which has room for chars + 1. */
typedef struct sb_gpt_sample {
    int chars;
    uint64_t seed;
    char *out;
    /* NULL, or called with ctx, the trained model (kernels/model/gpt.h) and
     * the validation text before the characters are drawn */
    void (*trained)(void *ctx, struct sb_gpt *g, const struct sb_text *val);
    void *ctx;
} sb_gpt_sample;

/* char_gpt's run (the registry's), then, when s is not NULL, s->chars
 * characters from the trained model. */
sb_status sb_gpt_run(const sb_model_run *r, sb_epoch_metrics *metrics, int *n_metrics,
                     const sb_gpt_sample *s, char *err, size_t errlen);
/* char_gpt's defaults: 2 layers, 4 heads, width 128, context 64, batch 16,
 * 300 steps evaluated every 100 on 64 windows, AdamW (PyTorch's defaults),
 * clip 1. */
void sb_gpt_config_defaults(sb_train_config *cfg);
/* Whether b is GPT-2's block (every choice at its default). */
bool sb_gpt_block_is_gpt2(const sb_gpt_block_config *b);
/* "layernorm", "rope", ...: the case-file value of each choice. */
const char *sb_gpt_norm_name(sb_gpt_norm n);
const char *sb_gpt_position_name(sb_gpt_position p);
const char *sb_gpt_mlp_name(sb_gpt_mlp m);

#endif
