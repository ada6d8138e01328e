/* Generated from kernels/kernels.def by harness/user/api_gen.c (`api_gen
 * header`; the test api_reference checks it): do not edit. For each op of
 * the kernel list, in its order: its reordering bound when it reduces
 * (sb_kernels.h), and its probe helper (sb_probe_ops.h). The ops' tensors,
 * roles and layouts are in harness/examples/API.md. */
#ifndef SB_OP_PROBES_H
#define SB_OP_PROBES_H

/* conv2d_fwd (kernels/conv/) */
void sb_conv2d_fwd_bound(float *y, const float *x, const float *w, const float *b, const sb_conv_shape *s);
sb_status sb_probe_conv2d_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const float *w, const float *b, const sb_conv_shape *s);

/* conv2d_bwd_data (kernels/conv/) */
void sb_conv2d_bwd_data_bound(float *dx, const float *dy, const float *w, const sb_conv_shape *s);
sb_status sb_probe_conv2d_bwd_data(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *w, const sb_conv_shape *s);

/* conv2d_bwd_filter (kernels/conv/) */
void sb_conv2d_bwd_filter_bound(float *dw, const float *dy, const float *x, const sb_conv_shape *s);
sb_status sb_probe_conv2d_bwd_filter(sb_probes *pc, int64_t step, const char *name,
    float *dw, const float *dy, const float *x, const sb_conv_shape *s);

/* conv2d_bwd_bias (kernels/conv/) */
void sb_conv2d_bwd_bias_bound(float *db, const float *dy, const sb_conv_shape *s);
sb_status sb_probe_conv2d_bwd_bias(sb_probes *pc, int64_t step, const char *name,
    float *db, const float *dy, const sb_conv_shape *s);

/* dense_fwd (kernels/dense/) */
void sb_dense_fwd_bound(float *y, const float *x, const float *w, const float *b, const sb_dense_shape *s);
sb_status sb_probe_dense_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const float *w, const float *b, const sb_dense_shape *s);

/* dense_bwd_data (kernels/dense/) */
void sb_dense_bwd_data_bound(float *dx, const float *dy, const float *w, const sb_dense_shape *s);
sb_status sb_probe_dense_bwd_data(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *w, const sb_dense_shape *s);

/* dense_bwd_weights (kernels/dense/) */
void sb_dense_bwd_weights_bound(float *dw, const float *dy, const float *x, const sb_dense_shape *s);
sb_status sb_probe_dense_bwd_weights(sb_probes *pc, int64_t step, const char *name,
    float *dw, const float *dy, const float *x, const sb_dense_shape *s);

/* dense_bwd_bias (kernels/dense/) */
void sb_dense_bwd_bias_bound(float *db, const float *dy, const sb_dense_shape *s);
sb_status sb_probe_dense_bwd_bias(sb_probes *pc, int64_t step, const char *name,
    float *db, const float *dy, const sb_dense_shape *s);

/* relu_fwd (kernels/elementwise/) */
sb_status sb_probe_relu_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, size_t n);

/* relu_bwd (kernels/elementwise/) */
sb_status sb_probe_relu_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, size_t n);

/* maxpool_fwd (kernels/elementwise/) */
sb_status sb_probe_maxpool_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const sb_pool_shape *s);

/* maxpool_bwd (kernels/elementwise/) */
sb_status sb_probe_maxpool_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, const sb_pool_shape *s);

/* dropout_mask (kernels/elementwise/) */
sb_status sb_probe_dropout_mask(sb_probes *pc, int64_t step, const char *name,
    float *mask, const sb_dropout_params *d, size_t n);

/* dropout_fwd (kernels/elementwise/) */
sb_status sb_probe_dropout_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const float *mask, size_t n);

/* dropout_bwd (kernels/elementwise/) */
sb_status sb_probe_dropout_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *mask, size_t n);

/* softmax_fwd (kernels/classifier/) */
void sb_softmax_fwd_bound(float *prob, const float *logits, const sb_class_shape *s);
sb_status sb_probe_softmax_fwd(sb_probes *pc, int64_t step, const char *name,
    float *prob, const float *logits, const sb_class_shape *s);

/* xent_loss (kernels/classifier/) */
void sb_xent_loss_bound(float *loss, const float *logits, const int32_t *labels, const sb_class_shape *s);
sb_status sb_probe_xent_loss(sb_probes *pc, int64_t step, const char *name,
    float *loss, const float *logits, const int32_t *labels, const sb_class_shape *s);

/* softmax_xent_bwd (kernels/classifier/) */
sb_status sb_probe_softmax_xent_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dlogits, const float *prob, const int32_t *labels, const sb_class_shape *s);

/* accuracy (kernels/classifier/) */
sb_status sb_probe_accuracy(sb_probes *pc, int64_t step, const char *name,
    float *acc, const float *prob, const int32_t *labels, const sb_class_shape *s);

/* sgd_update (kernels/optim/) */
sb_status sb_probe_sgd_update(sb_probes *pc, int64_t step, const char *name,
    float *w, float *velocity, const float *g, const sb_optim_params *o, size_t n);

/* rmsprop_update (kernels/optim/) */
sb_status sb_probe_rmsprop_update(sb_probes *pc, int64_t step, const char *name,
    float *w, float *acc, const float *g, const sb_optim_params *o, size_t n);

/* adam_update (kernels/optim/) */
sb_status sb_probe_adam_update(sb_probes *pc, int64_t step, const char *name,
    float *w, float *m, float *v, const float *g, const sb_optim_params *o, int64_t t, size_t n);

/* adadelta_update (kernels/optim/) */
sb_status sb_probe_adadelta_update(sb_probes *pc, int64_t step, const char *name,
    float *w, float *acc, float *delta_acc, const float *g, const sb_optim_params *o, size_t n);

/* embedding_fwd (kernels/embed/) */
sb_status sb_probe_embedding_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const int32_t *tokens, const float *wte, const float *wpe, const sb_embed_shape *s);

/* embedding_bwd_tokens (kernels/embed/) */
void sb_embedding_bwd_tokens_bound(float *dwte, const float *dy, const int32_t *tokens, const sb_embed_shape *s);
sb_status sb_probe_embedding_bwd_tokens(sb_probes *pc, int64_t step, const char *name,
    float *dwte, const float *dy, const int32_t *tokens, const sb_embed_shape *s);

/* embedding_bwd_pos (kernels/embed/) */
void sb_embedding_bwd_pos_bound(float *dwpe, const float *dy, const sb_embed_shape *s);
sb_status sb_probe_embedding_bwd_pos(sb_probes *pc, int64_t step, const char *name,
    float *dwpe, const float *dy, const sb_embed_shape *s);

/* layernorm_fwd (kernels/norm/) */
void sb_layernorm_fwd_bound(float *y, const float *x, const float *gamma, const float *beta, const sb_norm_shape *s);
sb_status sb_probe_layernorm_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const float *gamma, const float *beta, const sb_norm_shape *s);

/* layernorm_bwd_data (kernels/norm/) */
void sb_layernorm_bwd_data_bound(float *dx, const float *dy, const float *x, const float *gamma, const sb_norm_shape *s);
sb_status sb_probe_layernorm_bwd_data(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, const float *gamma, const sb_norm_shape *s);

/* layernorm_bwd_gamma (kernels/norm/) */
void sb_layernorm_bwd_gamma_bound(float *dgamma, const float *dy, const float *x, const sb_norm_shape *s);
sb_status sb_probe_layernorm_bwd_gamma(sb_probes *pc, int64_t step, const char *name,
    float *dgamma, const float *dy, const float *x, const sb_norm_shape *s);

/* gelu_fwd (kernels/elementwise/) */
sb_status sb_probe_gelu_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, size_t n);

/* gelu_bwd (kernels/elementwise/) */
sb_status sb_probe_gelu_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, size_t n);

/* residual_add (kernels/elementwise/) */
sb_status sb_probe_residual_add(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *a, const float *b, size_t n);

/* attention_fwd (kernels/attn/) */
void sb_attention_fwd_bound(float *y, const float *qkv, const sb_attn_shape *s);
sb_status sb_probe_attention_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *qkv, const sb_attn_shape *s);

/* attention_bwd (kernels/attn/) */
void sb_attention_bwd_bound(float *dqkv, const float *dy, const float *qkv, const sb_attn_shape *s);
sb_status sb_probe_attention_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dqkv, const float *dy, const float *qkv, const sb_attn_shape *s);

/* grad_norm (kernels/optim/) */
void sb_grad_norm_bound(float *norm, const float *g, size_t n);
sb_status sb_probe_grad_norm(sb_probes *pc, int64_t step, const char *name,
    float *norm, const float *g, size_t n);

/* adamw_update (kernels/optim/) */
sb_status sb_probe_adamw_update(sb_probes *pc, int64_t step, const char *name,
    float *w, float *m, float *v, const float *g, const sb_optim_params *o, int64_t t, size_t n);

/* rmsnorm_fwd (kernels/norm/) */
void sb_rmsnorm_fwd_bound(float *y, const float *x, const float *gamma, const sb_norm_shape *s);
sb_status sb_probe_rmsnorm_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const float *gamma, const sb_norm_shape *s);

/* rmsnorm_bwd_data (kernels/norm/) */
void sb_rmsnorm_bwd_data_bound(float *dx, const float *dy, const float *x, const float *gamma, const sb_norm_shape *s);
sb_status sb_probe_rmsnorm_bwd_data(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, const float *gamma, const sb_norm_shape *s);

/* rmsnorm_bwd_gamma (kernels/norm/) */
void sb_rmsnorm_bwd_gamma_bound(float *dgamma, const float *dy, const float *x, const sb_norm_shape *s);
sb_status sb_probe_rmsnorm_bwd_gamma(sb_probes *pc, int64_t step, const char *name,
    float *dgamma, const float *dy, const float *x, const sb_norm_shape *s);

/* silu_fwd (kernels/elementwise/) */
sb_status sb_probe_silu_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, size_t n);

/* silu_bwd (kernels/elementwise/) */
sb_status sb_probe_silu_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, size_t n);

/* swiglu_fwd (kernels/elementwise/) */
sb_status sb_probe_swiglu_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *a, const float *b, size_t n);

/* swiglu_bwd_a (kernels/elementwise/) */
sb_status sb_probe_swiglu_bwd_a(sb_probes *pc, int64_t step, const char *name,
    float *da, const float *dy, const float *a, const float *b, size_t n);

/* swiglu_bwd_b (kernels/elementwise/) */
sb_status sb_probe_swiglu_bwd_b(sb_probes *pc, int64_t step, const char *name,
    float *db, const float *dy, const float *a, size_t n);

/* rope_fwd (kernels/rope/) */
sb_status sb_probe_rope_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const sb_rope_shape *s);

/* rope_bwd (kernels/rope/) */
sb_status sb_probe_rope_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const sb_rope_shape *s);

/* gelu_erf_fwd (kernels/elementwise/) */
sb_status sb_probe_gelu_erf_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, size_t n);

/* gelu_erf_bwd (kernels/elementwise/) */
sb_status sb_probe_gelu_erf_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, size_t n);

/* log_softmax_fwd (kernels/classifier/) */
void sb_log_softmax_fwd_bound(float *logprob, const float *logits, const sb_class_shape *s);
sb_status sb_probe_log_softmax_fwd(sb_probes *pc, int64_t step, const char *name,
    float *logprob, const float *logits, const sb_class_shape *s);

/* nll_loss_mean (kernels/loss/) */
void sb_nll_loss_mean_bound(float *loss, const float *logprob, const int32_t *labels, const float *weight, const sb_nll_shape *s);
sb_status sb_probe_nll_loss_mean(sb_probes *pc, int64_t step, const char *name,
    float *loss, const float *logprob, const int32_t *labels, const float *weight, const sb_nll_shape *s);

/* nll_loss_sum (kernels/loss/) */
void sb_nll_loss_sum_bound(float *loss, const float *logprob, const int32_t *labels, const float *weight, const sb_nll_shape *s);
sb_status sb_probe_nll_loss_sum(sb_probes *pc, int64_t step, const char *name,
    float *loss, const float *logprob, const int32_t *labels, const float *weight, const sb_nll_shape *s);

/* nll_loss_none (kernels/loss/) */
sb_status sb_probe_nll_loss_none(sb_probes *pc, int64_t step, const char *name,
    float *loss, const float *logprob, const int32_t *labels, const float *weight, const sb_nll_shape *s);

/* reduce_mean (kernels/reduce/) */
void sb_reduce_mean_bound(float *y, const float *x, const sb_reduce_shape *s);
sb_status sb_probe_reduce_mean(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const sb_reduce_shape *s);

/* avgpool_fwd (kernels/pool/) */
void sb_avgpool_fwd_bound(float *y, const float *x, const sb_window_shape *s);
sb_status sb_probe_avgpool_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const sb_window_shape *s);

/* maxpool_window_fwd (kernels/pool/) */
sb_status sb_probe_maxpool_window_fwd(sb_probes *pc, int64_t step, const char *name,
    float *y, const float *x, const sb_window_shape *s);

/* maxpool_window_indices (kernels/pool/) */
sb_status sb_probe_maxpool_window_indices(sb_probes *pc, int64_t step, const char *name,
    int32_t *indices, const float *x, const sb_window_shape *s);

/* layernorm_mean (kernels/norm/) */
void sb_layernorm_mean_bound(float *mean, const float *x, const sb_norm_shape *s);
sb_status sb_probe_layernorm_mean(sb_probes *pc, int64_t step, const char *name,
    float *mean, const float *x, const sb_norm_shape *s);

/* layernorm_rstd (kernels/norm/) */
void sb_layernorm_rstd_bound(float *rstd, const float *x, const sb_norm_shape *s);
sb_status sb_probe_layernorm_rstd(sb_probes *pc, int64_t step, const char *name,
    float *rstd, const float *x, const sb_norm_shape *s);

/* log_softmax_bwd (kernels/classifier/) */
void sb_log_softmax_bwd_bound(float *dlogits, const float *dlogprob, const float *logprob, const sb_class_shape *s);
sb_status sb_probe_log_softmax_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dlogits, const float *dlogprob, const float *logprob, const sb_class_shape *s);

/* nll_loss_mean_bwd (kernels/loss/) */
void sb_nll_loss_mean_bwd_bound(float *dlogprob, const float *dloss, const int32_t *labels, const float *weight, const sb_nll_shape *s);
sb_status sb_probe_nll_loss_mean_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dlogprob, const float *dloss, const int32_t *labels, const float *weight, const sb_nll_shape *s);

/* nll_loss_sum_bwd (kernels/loss/) */
sb_status sb_probe_nll_loss_sum_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dlogprob, const float *dloss, const int32_t *labels, const float *weight, const sb_nll_shape *s);

/* nll_loss_none_bwd (kernels/loss/) */
sb_status sb_probe_nll_loss_none_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dlogprob, const float *dloss, const int32_t *labels, const float *weight, const sb_nll_shape *s);

/* avgpool_bwd (kernels/pool/) */
void sb_avgpool_bwd_bound(float *dx, const float *dy, const sb_window_shape *s);
sb_status sb_probe_avgpool_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const sb_window_shape *s);

/* maxpool_window_bwd (kernels/pool/) */
void sb_maxpool_window_bwd_bound(float *dx, const float *dy, const float *x, const sb_window_shape *s);
sb_status sb_probe_maxpool_window_bwd(sb_probes *pc, int64_t step, const char *name,
    float *dx, const float *dy, const float *x, const sb_window_shape *s);

#endif
