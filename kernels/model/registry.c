/* The models by name, and the seed CNN's entry: its data sets, a run that
 * loads and slices the image data set before sb_model_train, and the batch
 * axis's samples (the training range's images, sb_model_forward_samples). */
#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "gpt.h"

static bool cnn_dataset_ok(const char *dataset)
{
    return strcmp(dataset, "mnist") == 0 || strcmp(dataset, "fashion-mnist") == 0;
}

static int cnn_evaluations(const sb_train_config *cfg)
{
    return cfg->epochs > 0 ? cfg->epochs : 1;
}

/* The train and test ranges are slices of the one data set the run names. */
static sb_status cnn_run(const sb_model_run *r, sb_epoch_metrics *metrics, int *n_metrics,
                         char *err, size_t errlen)
{
    *n_metrics = 0;
    sb_dataset all, train, test;
    if (sb_dataset_open(&all, r->dataset, r->data_dir, err, errlen) != SB_OK)
        return SB_ERR_INPUT;
    if (sb_dataset_slice(&train, &all, r->train_begin, r->train_end) != SB_OK ||
        sb_dataset_slice(&test, &all, r->test_begin, r->test_end) != SB_OK) {
        sb_msg(err, errlen, SB_ERR_INPUT,
               "%s: the train or test range is outside data set %s (%lld samples)", r->what,
               r->dataset, (long long)all.n);
        sb_dataset_free(&all);
        return SB_ERR_INPUT;
    }
    err[0] = '\0';
    sb_status st = sb_cnn_train(r, &train, &test, metrics, n_metrics, err, errlen);
    if (st == SB_ERR_SHAPE) {
        char images[1024];
        sb_dataset_images_path(images, sizeof images, r->dataset, r->data_dir);
        st = sb_msg(err, errlen, SB_ERR_INPUT, "%s: the model cannot take %s: images of %d x %d "
                    "at batch %d (it needs images of at least 6 x 6 and tensors of at most "
                    "2^28 elements)", r->what, images, all.rows, all.cols, r->cfg->batch);
    } else if (st != SB_OK && err[0] == '\0') {
        sb_msg(err, errlen, st, "%s: training failed: %s", r->what, sb_status_name(st));
    }
    sb_dataset_free(&all);
    return st;
}

/* The batch axis's samples: the images of the training range. */
typedef struct cnn_samples {
    sb_dataset all, train;
} cnn_samples;

static sb_status cnn_samples_open(sb_model_samples *s, char *err, size_t errlen)
{
    const sb_model_run *r = &s->run;
    cnn_samples *d = calloc(1, sizeof *d);
    if (!d)
        return sb_msg(err, errlen, SB_ERR_NOMEM, "%s: out of memory", r->what);
    if (sb_dataset_open(&d->all, r->dataset, r->data_dir, err, errlen) != SB_OK) {
        free(d);
        return SB_ERR_INPUT;
    }
    if (sb_dataset_slice(&d->train, &d->all, r->train_begin, r->train_end) != SB_OK) {
        sb_msg(err, errlen, SB_ERR_INPUT, "%s: the train range is outside data set %s "
               "(%lld samples)", r->what, r->dataset, (long long)d->all.n);
        sb_dataset_free(&d->all);
        free(d);
        return SB_ERR_INPUT;
    }
    s->data = d;
    s->count = d->train.n;
    return SB_OK;
}

static sb_status cnn_samples_forward(const sb_model_samples *s, const int64_t *samples, int n,
                                     char *err, size_t errlen)
{
    const sb_model_run *r = &s->run;
    const cnn_samples *d = s->data;
    sb_status st = sb_model_forward_samples(r->k, r->cfg, &d->train, samples, n, r->hook,
                                            r->hook_ctx);
    if (st == SB_ERR_SHAPE)
        return sb_msg(err, errlen, SB_ERR_INPUT, "%s: the model cannot take the images of %s",
                      r->what, r->dataset);
    if (st != SB_OK)
        sb_msg(err, errlen, st, "%s: the batch-axis forward pass failed: %s", r->what,
               sb_status_name(st));
    return st;
}

static void cnn_samples_close(sb_model_samples *s)
{
    cnn_samples *d = s->data;
    if (d)
        sb_dataset_free(&d->all);
    free(d);
    s->data = NULL;
}

static const sb_model_kind cnn_kind = {
    .name = "keras_mnist_cnn",
    .datasets = "mnist or fashion-mnist",
    .dataset_ok = cnn_dataset_ok,
    .defaults = sb_train_config_defaults,
    .steps = sb_model_train_steps,
    .evaluations = cnn_evaluations,
    .run = cnn_run,
    .samples_open = cnn_samples_open,
    .samples_forward = cnn_samples_forward,
    .samples_close = cnn_samples_close,
    .data_parallel = true,
};

static const sb_model_kind *const models[] = {&cnn_kind, &sb_gpt_kind};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

int sb_model_count(void)
{
    return N_MODELS;
}

const sb_model_kind *sb_model_at(int i)
{
    SB_ASSERT(i >= 0 && i < N_MODELS);
    return models[i];
}

const sb_model_kind *sb_model_find(const char *name)
{
    for (int i = 0; i < N_MODELS; i++)
        if (strcmp(models[i]->name, name) == 0)
            return models[i];
    return NULL;
}

const char *sb_model_names(void)
{
    return "keras_mnist_cnn or char_gpt";
}
