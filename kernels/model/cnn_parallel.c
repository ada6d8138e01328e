/* The data-parallel training step of the CNN (sb_model.h, sb_grad_reduce).
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
 * det: one pass per fixed chunk of cfg->chunk samples; a rank computes its
 * run of chunks (sb_chunks_owned), the combine hook gathers every chunk's row
 * to every rank, and the rows are added in chunk order: the same sums in the
 * same order for any rank count and, the kernels being det, any thread count.
 * loose: one pass over the rank's share (sb_share_owned), its row summed over
 * the ranks by the combine hook (MPI_Allreduce). Without a hook there is one
 * rank and the combine is the identity.
 *
 * The passes are not probed (what a rank computes depends on the rank
 * count); the step's probes are allreduce.<param>, the combined gradients. */
#include <string.h>

#include "cnn.h"

bool sb_cnn_parallel_alloc(sb_cnn *m)
{
    size_t total = 0;
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++) {
        m->grad_offset[i] = total;
        total += sb_tensor_count(&m->param_view[i]);
    }
    m->grad_total = total + 1;  /* and the loss */
    int rows = 1;
    if (m->cfg->reduce == SB_REDUCE_DET) {
        SB_ASSERT(m->cfg->chunk >= 1);
        rows = (m->batch + m->cfg->chunk - 1) / m->cfg->chunk;
    }
    m->partials = sb_floats_try((size_t)rows * m->grad_total);
    return m->partials != NULL;
}

/* The forward and backward of rows [first, first + rows) of the n-row batch,
 * their gradients and their part of the loss into `row`. */
static void rows_pass(const sb_cnn *m, int first, int rows, int n, float *row,
                      const sb_model_probe *quiet)
{
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

/* Adds the rows of partials[0..count) in row order into out. */
static void rows_add(float *out, const float *partials, int count, size_t total)
{
    if (count == 0) {
        memset(out, 0, total * sizeof *out);
        return;
    }
    memcpy(out, partials, total * sizeof *out);
    for (int c = 1; c < count; c++) {
        const float *p = partials + (size_t)c * total;
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < total; j++)
            out[j] += p[j];
    }
}

/* The mutant rank_skips_last_chunk: when the batch does not divide by the
 * rank count, the last rank leaves out its last chunk if it is partial. */
static bool skips_chunk(const sb_train_config *cfg, int rank, int ranks, int n, bool last,
                        int rows)
{
    return cfg->rank_fault == SB_RANK_FAULT_RANK_SKIPS_LAST_CHUNK && n % ranks != 0 &&
           rank == ranks - 1 && last && rows < cfg->chunk;
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
    const sb_train_config *cfg = m->cfg;
    const sb_grad_combine *cb = cfg->combine;
    int rank = cb ? cb->rank : 0, ranks = cb ? cb->ranks : 1;
    sb_model_probe quiet = {.step = p->step};
    sb_cnn_masks(m, n, p->step);
    float *combined = m->partials;
    if (cfg->reduce == SB_REDUCE_DET) {
        int chunks = (n + cfg->chunk - 1) / cfg->chunk, first, count;
        sb_chunks_owned(rank, ranks, chunks, &first, &count);
        for (int c = first; c < first + count; c++) {
            int begin = c * cfg->chunk;
            int rows = n - begin < cfg->chunk ? n - begin : cfg->chunk;
            float *row = m->partials + (size_t)c * m->grad_total;
            if (skips_chunk(cfg, rank, ranks, n, c == first + count - 1, rows))
                memset(row, 0, m->grad_total * sizeof *row);
            else
                rows_pass(m, begin, rows, n, row, &quiet);
        }
        float *sum = sb_floats_try(m->grad_total);
        SB_ASSERT(sum != NULL);
        if (cfg->rank_fault == SB_RANK_FAULT_ALLREDUCE_RANK_ASSOCIATION) {
            /* the mutant: this rank's chunks first, then the ranks' sums */
            rows_add(sum, m->partials + (size_t)first * m->grad_total, count, m->grad_total);
            if (cb)
                cb->sum(cb->ctx, sum, m->grad_total);
        } else {
            if (cb)
                cb->gather(cb->ctx, m->partials, m->grad_total, chunks);
            rows_add(sum, m->partials, chunks, m->grad_total);
        }
        memcpy(combined, sum, m->grad_total * sizeof *sum);
        free(sum);
    } else {
        int first, count;
        sb_share_owned(rank, ranks, n, &first, &count);
        if (count > 0)
            rows_pass(m, first, count, n, combined, &quiet);
        else
            memset(combined, 0, m->grad_total * sizeof *combined);
        if (cb)
            cb->sum(cb->ctx, combined, m->grad_total);
    }
    for (int i = 0; i < SB_CNN_PARAM_COUNT; i++)
        memcpy(m->grad[i], combined + m->grad_offset[i],
               sb_tensor_count(&m->param_view[i]) * sizeof(float));
    m->loss = combined[m->grad_total - 1];
    combined_probe(m, n, p);
}
