/* The data-parallel training step of the CNN (sb_model.h, sb_grad_reduce;
 * the combine is data_parallel.c's).
 *
 * Every rank holds the whole global batch (the data order does not depend
 * on the rank count) and draws both dropout masks for all of it, so a
 * sample's mask is the same whoever computes it. A pass over rows
 * [first, first + rows) runs the usual forward and backward on a view of
 * the model whose per-sample buffers start at row `first` and whose
 * gradients are written into a row of m->partials; the loss gradient is
 * divided by the global batch size (mean_over), so that the partial
 * gradients add up to the batch's gradient.
 *
 * The passes are not probed (what a rank computes depends on the rank
 * count); the step's probes are allreduce.<param>, the combined gradients. */
#include <string.h>

#include "cnn.h"
#include "data_parallel.h"

bool sb_cnn_parallel_alloc(sb_cnn *m)
{
    size_t total = 0;
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        m->grad_offset[i] = total;
        total += sb_tensor_count(&m->param_view[i]);
    }
    m->grad_total = total + 1;  /* and the loss */
    m->partials = sb_floats_try(sb_partials_rows(m->cfg, m->batch) * m->grad_total);
    return m->partials != NULL;
}

/* The forward and backward of rows [first, first + rows) of the n-row batch,
 * their gradients and their part of the loss into `row`. */
static void rows_pass(void *model, int first, int rows, int n, float *row,
                      const sb_model_probe *quiet)
{
    const sb_cnn *m = model;
    sb_cnn v = *m;
    size_t f = (size_t)first;
    size_t a1 = SB_CNN_CONV1_K * (size_t)(m->h1 * m->w1);
    size_t a2 = SB_CNN_CONV2_K * (size_t)(m->h2 * m->w2);
    size_t a3 = (size_t)m->features;
    v.x += f * (size_t)(m->h * m->w);
    v.labels += f;
    v.conv1 += f * a1, v.relu1 += f * a1, v.drelu1 += f * a1, v.dconv1 += f * a1;
    v.conv2 += f * a2, v.relu2 += f * a2, v.drelu2 += f * a2, v.dconv2 += f * a2;
    v.pool += f * a3, v.mask1 += f * a3, v.drop1 += f * a3, v.ddrop1 += f * a3,
        v.dpool += f * a3;
    v.dense1 += f * SB_CNN_HIDDEN, v.relu3 += f * SB_CNN_HIDDEN, v.mask2 += f * SB_CNN_HIDDEN,
        v.drop2 += f * SB_CNN_HIDDEN, v.ddrop2 += f * SB_CNN_HIDDEN,
        v.drelu3 += f * SB_CNN_HIDDEN, v.ddense1 += f * SB_CNN_HIDDEN;
    v.logits += f * SB_CNN_CLASSES, v.prob += f * SB_CNN_CLASSES,
        v.dlogits += f * SB_CNN_CLASSES;
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++)
        v.grad[i] = row + m->grad_offset[i];
    v.masks_given = true;
    v.mean_over = n;
    sb_cnn_forward(&v, rows, SB_CNN_TRAIN, NULL, quiet);
    sb_cnn_backward(&v, rows, quiet);
    /* the pass's loss is the mean over its rows: its part of the batch's mean */
    row[m->grad_total - 1] = v.loss * (float)rows / (float)n;
}

/* Probes the combined gradients; the bound is that of the whole batch's
 * gradient sum in any order, from the backward buffers, which hold every
 * row of the batch only on a rank that computed them all (one rank: the
 * reference configuration, whose dump the locator takes the bound from). */
static void combined_probe(const sb_cnn *m, int n, const sb_model_probe *p)
{
    if (!p->hook)
        return;
    const char *inputs[2 + SB_CNN_PARAM_COUNT] = {"batch.x", "batch.labels"};
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++)
        inputs[2 + i] = m->latest[i];
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        sb_op_call c = sb_cnn_grad_call(m, (sb_cnn_param)i, n);
        sb_probe_point pt = {
            .step = p->step, .name = m->combined_name[i], .op = SB_ALLREDUCE_OP,
            .tensor = &c.out[0], .inputs = inputs, .n_inputs = 2 + SB_CNN_PARAM_COUNT,
            .bound = sb_op_call_bound, .bound_ctx = &c, .out_index = 0,
        };
        p->hook(p->ctx, &pt);
    }
}

void sb_cnn_parallel_step(sb_cnn *m, int n, const sb_model_probe *p)
{
    sb_cnn_masks(m, n, m->ctr.rng_step);
    sb_data_parallel_combine(m->cfg, n, p->step, m->partials, m->grad_total, rows_pass, m);
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++)
        memcpy(m->grad[i], m->partials + m->grad_offset[i],
               sb_tensor_count(&m->param_view[i]) * sizeof(float));
    m->loss = m->partials[m->grad_total - 1];
    combined_probe(m, n, p);
}
