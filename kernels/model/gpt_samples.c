/* char_gpt on the batch axis (sb_model_kind.samples_*): the samples are
 * windows of the training range, window w the context characters from
 * character w * context, and a batch of them runs the evaluation's forward
 * pass from the initial weights. The probes are an evaluation's first
 * batch: init.<param>, then eval.b0.tokens (source) and eval.b0.<layer>.out
 * of every layer to the head's logits, each a flat vector of n windows'
 * rows. */
#include <stdlib.h>

#include "gpt.h"

typedef struct gpt_samples {
    sb_text all, train;
} gpt_samples;

sb_status sb_gpt_samples_open(sb_model_samples *s, char *err, size_t errlen)
{
    const sb_model_run *r = &s->run;
    gpt_samples *d = calloc(1, sizeof *d);
    if (!d)
        return sb_msg(err, errlen, SB_ERR_NOMEM, "%s: out of memory", r->what);
    if (sb_text_open(&d->all, r->dataset, r->data_dir, err, errlen) != SB_OK) {
        free(d);
        return SB_ERR_INPUT;
    }
    if (sb_text_slice(&d->train, &d->all, r->train_begin, r->train_end) != SB_OK) {
        sb_msg(err, errlen, SB_ERR_INPUT, "%s: the train range is outside data set %s "
               "(%lld characters)", r->what, r->dataset, (long long)d->all.n);
        sb_text_free(&d->all);
        free(d);
        return SB_ERR_INPUT;
    }
    s->data = d;
    s->count = d->train.n / r->cfg->gpt.context;
    return SB_OK;
}

sb_status sb_gpt_samples_forward(const sb_model_samples *s, const int64_t *samples, int n,
                                 char *err, size_t errlen)
{
    const sb_model_run *r = &s->run;
    const gpt_samples *d = s->data;
    sb_train_config one = *r->cfg;
    one.batch = n;      /* the buffers hold this one batch */
    sb_gpt g;
    sb_status st = sb_gpt_alloc(&g, r->k, &one, SB_TEXT_VOCAB);
    if (st == SB_ERR_SHAPE)
        return sb_msg(err, errlen, SB_ERR_INPUT, "%s: the model cannot take a batch of %d "
                      "windows at these sizes (layers 1..%d, width a multiple of heads, every "
                      "tensor at most 2^28 floats)", r->what, n, SB_GPT_MAX_LAYERS);
    if (st != SB_OK)
        return sb_msg(err, errlen, st, "%s: %s", r->what, sb_status_name(st));
    const int t = g.context;
    for (int b = 0; b < n; b++) {
        SB_ASSERT(samples[b] >= 0 && samples[b] < s->count);
        const uint8_t *w = d->train.tokens + (size_t)samples[b] * (size_t)t;
        for (int i = 0; i < t; i++)
            g.tokens[b * t + i] = w[i];
    }
    sb_model_probe p = {.hook = r->hook, .ctx = r->hook_ctx, .step = 0};
    sb_gpt_init(&g, &p);
    sb_tensor x = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {(int64_t)n * t}, .data = g.tokens};
    sb_model_probe_source(&p, "eval.b0.tokens", &x);
    sb_gpt_forward(&g, n, t, 0, NULL, &p);
    sb_gpt_free(&g);
    return SB_OK;
}

void sb_gpt_samples_close(sb_model_samples *s)
{
    gpt_samples *d = s->data;
    if (d)
        sb_text_free(&d->all);
    free(d);
    s->data = NULL;
}
