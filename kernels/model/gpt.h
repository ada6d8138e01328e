/* The character-level GPT inside the library: its parameters, buffers and
 * passes. gpt_train.c drives it (the registry's char_gpt); the probe list is
 * in kernels/model/README.md.
 *
 *   tokens [b][t] -> wte[token] + wpe[position]
 *     -> L blocks of: x + proj(attn(qkv(ln1(x)))), then x + fcproj(gelu(fc(ln2(x))))
 *     -> lnf -> head (dense C -> V) -> softmax, cross-entropy (mean over b*t)
 *
 * That is GPT-2's block, the default; sb_gpt_block_config (sb_model.h)
 * chooses a LLaMA-style one piece by piece: RMSNorm for every layer norm
 * (no beta), rotary positions (no wpe: the embedding adds a constant zero
 * table; q and k rotated after qkv), a SwiGLU MLP (fcproj(silu(fc x) * up x),
 * fc and up C -> 4C), kv_heads key/value heads (qkv C -> (h + 2 kv) d), and
 * no dense biases (the dense layers add a constant zero vector, which is
 * no parameter and has no gradient).
 *
 * Every matrix is dense_fwd's x [n][in] @ w [in][out]; the attention reads
 * the fused qkv [b][t][(h + 2 kv) d]. */
#ifndef SB_GPT_H
#define SB_GPT_H

#include "model_ops.h"
#include "sb_model.h"
#include "sb_text.h"

/* Parameters per block at most: ln1 w b, qkv W b, proj W b, ln2 w b, fc W b,
 * up W b, fcproj W b; besides the blocks: wte, wpe, lnf w b, head W b. */
#define SB_GPT_BLOCK_PARAMS 14
#define SB_GPT_OTHER_PARAMS 6
#define SB_GPT_MAX_PARAMS (SB_GPT_OTHER_PARAMS + SB_GPT_BLOCK_PARAMS * SB_GPT_MAX_LAYERS)
#define SB_GPT_NAME_SIZE 48

/* One parameter tensor: a slice of the one parameter buffer (and of the
 * gradient and moment buffers at the same offset). */
typedef struct sb_gpt_param {
    size_t offset, count;
    sb_tensor view;             /* shape, data in the parameter buffer */
    bool decay;                 /* a matrix (embedding or dense weight): weight decay */
    char name[SB_GPT_NAME_SIZE];        /* "h0.qkv.W" */
    char init_name[SB_GPT_NAME_SIZE];   /* "init.h0.qkv.W" */
    char update_name[SB_GPT_NAME_SIZE]; /* "adamw.h0.qkv.W" */
    sb_model_state_probes state_probes; /* "adamw.h0.qkv.W.m", "adamw.h0.qkv.W.v" */
    char grad_name[SB_GPT_NAME_SIZE];   /* "h0.qkv.bwd.dW" */
    char combined_name[SB_GPT_NAME_SIZE]; /* "allreduce.h0.qkv.W": data parallel */
    const char *grad_probe;     /* the probe of the gradient the update reads */
    const char *latest;         /* the probe holding the current value */
} sb_gpt_param;

/* The activations of one block, [rows][...] for the largest batch. */
typedef struct sb_gpt_block {
    float *ln1, *qkv, *attn, *proj, *res1;      /* [n][C], qkv [n][(h + 2 kv) d] */
    float *ln2, *fc, *gelu, *fcproj, *res2;     /* fc, gelu [n][4C]; gelu holds
                                                 * the SwiGLU product */
    float *up;                  /* [n][4C]: SwiGLU only */
    float *qk, *qk_rot, *rotated; /* rotary only: qkv's q and k [n][(h + kv) d]
                                 * before and after the rotation, and the
                                 * attention's input [n][(h + 2 kv) d] */
} sb_gpt_block;

typedef struct sb_gpt {
    const sb_kernel_table *k;
    const sb_train_config *cfg;
    int layers, heads, width, context, vocab;
    int batch;                  /* windows of the largest pass */
    int rows;                   /* batch * context */
    sb_gpt_block_config arch;   /* the block's choices, kv_heads filled in */
    int qkv_width, qk_width;    /* (h + 2 kv) d, (h + kv) d */

    sb_train_counters ctr;      /* the loop's counters (gpt_train.c); the update reads optim_t */
    int n_params;
    sb_gpt_param param[SB_GPT_MAX_PARAMS];
    /* the index in param of each block's parameters (gpt.c's B_*) and of
     * the others (P_*), -1 for one the block does not have */
    int block_param[SB_GPT_MAX_LAYERS][SB_GPT_BLOCK_PARAMS];
    int other_param[SB_GPT_OTHER_PARAMS];
    float *zeros;               /* constant zeros: the absent wpe and biases */
    size_t n_zeros;
    size_t total;               /* floats in all parameters */
    float *params, *grads, *m, *v; /* [total] each: one contiguous buffer */

    int32_t *tokens, *targets;  /* [rows] */
    float *embed;               /* [rows][C] */
    sb_gpt_block block[SB_GPT_MAX_LAYERS];
    float *lnf, *logits, *prob; /* [rows][C], [rows][V] */
    float loss, norm;

    /* backward: gradients at the block boundaries (three, rotated), the
     * inner ones, and the logits' */
    float *dres[3];             /* [rows][C] */
    float *dln, *dattn;         /* [rows][C] */
    float *dqkv;                /* [rows][(h + 2 kv) d] */
    float *dgelu, *dfc;         /* [rows][4C] */
    float *dup, *dsum;          /* SwiGLU: [rows][4C], [rows][C] */
    float *dqk, *dqk_rot;       /* rotary: [rows][(h + kv) d] */
    float *dlogits;             /* [rows][V] */

    /* data parallel (gpt_parallel.c): the gradient of one chunk of windows
     * (det) or of the rank's share (loose) is a row of `partials`, laid out
     * as g->grads, then the pass's part of the batch loss */
    float *partials;            /* [batch / chunk rounded up, or 1][grad_total] */
    size_t grad_total;          /* total + 1 */
    int mean_over;              /* the rows the loss is the mean over; 0: the pass's own */
} sb_gpt;

/* SB_ERR_SHAPE for sizes the ops cannot take (width not a multiple of heads,
 * kv_heads not dividing heads, an odd head width with rotary positions,
 * more than SB_GPT_MAX_LAYERS blocks, a tensor over 2^28 elements);
 * SB_ERR_USAGE for a meaningless data-parallel setting (reduce, chunk,
 * combine); SB_ERR_NOMEM. */
sb_status sb_gpt_alloc(sb_gpt *g, const sb_kernel_table *k, const sb_train_config *cfg,
                       int vocab);
void sb_gpt_free(sb_gpt *g);

/* GPT-2's initialisation from cfg->seed (normal 0.02, the residual
 * projections' by 1/sqrt(2 layers), zero biases, LN gamma 1 and beta 0);
 * probes init.<param> at p->step, and const.zeros (source) when the block
 * has an absent wpe or bias. */
void sb_gpt_init(sb_gpt *g, const sb_model_probe *p);

/* The training state a checkpoint holds: g->ctr, the parameter buffer
 * ("params") and AdamW's moments ("adamw.m", "adamw.v"). */
void sb_gpt_state(sb_gpt *g, sb_train_state *s);
/* After a checkpoint's state was loaded into g: the probes the next update
 * lists name the values of the last update before it. */
void sb_gpt_resumed(sb_gpt *g);

/* A training pass has no eval batch; evaluation pass k has eval_batch k. */
#define SB_GPT_TRAIN (-1)

/* Forward over g->tokens of `windows` windows of `t` tokens (t <= context).
 * SB_GPT_TRAIN: probes <layer>.fwd.<tensor>, then softmax and the loss
 * against g->targets. eval_batch k >= 0: probes eval.b<k>.<layer>.out and
 * stops at the logits, written to `logits` (g->logits when NULL). */
void sb_gpt_forward(sb_gpt *g, int windows, int t, int eval_batch, float *logits,
                    const sb_model_probe *p);
/* Backward of the training pass just run; every gradient lands in g->grads,
 * the loss gradient divided by g->mean_over rows (0: the pass's own). */
void sb_gpt_backward(sb_gpt *g, int windows, const sb_model_probe *p);
/* The global gradient norm, the clipping factor, and AdamW on every
 * parameter; p->step is the 0-based step. */
void sb_gpt_update(sb_gpt *g, const sb_model_probe *p);

/* Data parallel (cfg->reduce): the forward and backward of this rank's part
 * of the global batch of `windows` windows in g->tokens and g->targets, the
 * gradients combined over the ranks (cfg->combine) into g->grads, and
 * g->loss the batch loss. Probes, in order: allreduce.<param> for every
 * parameter (the combined gradient). */
void sb_gpt_parallel_step(sb_gpt *g, int windows, const sb_model_probe *p);
/* The buffers of the step; called by sb_gpt_alloc. */
bool sb_gpt_parallel_alloc(sb_gpt *g);

/* The registry's entry (gpt_train.c), and what it is made of. */
extern const sb_model_kind sb_gpt_kind;
int64_t sb_gpt_train_steps(const sb_train_config *cfg, int64_t n_train);
int sb_gpt_evaluations(const sb_train_config *cfg);
/* Its batch axis (gpt_samples.c). */
sb_status sb_gpt_samples_open(sb_model_samples *s, char *err, size_t errlen);
sb_status sb_gpt_samples_forward(const sb_model_samples *s, const int64_t *samples, int n,
                                 char *err, size_t errlen);
void sb_gpt_samples_close(sb_model_samples *s);

#endif
