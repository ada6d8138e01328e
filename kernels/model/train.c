/* sb_model_train: the epoch loop around the CNN of cnn.c, and the evaluation
 * on the test set after each epoch.
 *
 * Probes besides those of cnn.c: before every step batch.x and batch.labels
 * (sources); after every epoch, at the step count reached, the evaluation
 * pass per test batch k (eval.b<k>.x, eval.b<k>.conv1.out ...
 * eval.b<k>.dense2.out), then over the whole test set: eval.labels (source),
 * eval.loss (xent_loss), softmax.eval.prob, eval.accuracy. */
#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "data_parallel.h"
#include "resume.h"
#include "sb_rng.h"

void sb_train_config_defaults(sb_train_config *cfg)
{
    *cfg = (sb_train_config){
        .batch = 128,
        .epochs = 12,
        .seed = 1,
        .dropout1 = 0.25f,
        .dropout2 = 0.5f,
        .max_steps = 0,
        .cut_unevaluated = false,
    };
    sb_optim_defaults(&cfg->optim, SB_OPTIM_ADADELTA);
}

static bool labels_ok(const sb_dataset *d)
{
    for (int64_t i = 0; i < d->n; i++)
        if (d->labels[i] < 0 || d->labels[i] >= SB_CNN_CLASSES)
            return false;
    return true;
}

static sb_status config_check(const sb_train_config *cfg, const sb_dataset *train,
                              const sb_dataset *test)
{
    if (cfg->batch < 1 || cfg->epochs < 0 || cfg->max_steps < 0 ||
        (unsigned)cfg->optim.kind >= SB_OPTIM_COUNT || !(cfg->dropout1 >= 0.0f) ||
        !(cfg->dropout1 < 1.0f) || !(cfg->dropout2 >= 0.0f) || !(cfg->dropout2 < 1.0f))
        return SB_ERR_USAGE;
    if (!sb_data_parallel_config_ok(cfg))
        return SB_ERR_USAGE;
    if (train->n < 1 || test->n < 1 || train->rows != test->rows ||
        train->cols != test->cols)
        return SB_ERR_SHAPE;
    /* the whole-set evaluation ops take an int sample count */
    if (test->n > INT32_MAX / SB_CNN_CLASSES)
        return SB_ERR_SHAPE;
    if (!labels_ok(train) || !labels_ok(test))
        return SB_ERR_INPUT;
    return SB_OK;
}

/* Loads samples order[start..start+n) of d (start.. when order is NULL)
 * into m->x (pixels / 255) and m->labels. */
static void batch_load(sb_cnn *m, const sb_dataset *d, const int64_t *order, int64_t start,
                       int n)
{
    size_t hw = (size_t)m->h * (size_t)m->w;
    for (int i = 0; i < n; i++) {
        int64_t s = order ? order[start + i] : start + i;
        const uint8_t *px = d->pixels + (size_t)s * hw;
        float *x = m->x + (size_t)i * hw;
        for (size_t j = 0; j < hw; j++)
            x[j] = (float)px[j] / 255.0f;
        m->labels[i] = d->labels[s];
    }
}

static void batch_probe(const sb_cnn *m, int n, const char *x_name, const char *labels_name,
                        const sb_model_probe *p)
{
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 4, .dim = {n, 1, m->h, m->w}, .data = m->x};
    sb_model_probe_source(p, x_name, &x);
    if (labels_name) {
        sb_tensor y = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {n}, .data = m->labels};
        sb_model_probe_source(p, labels_name, &y);
    }
}

/* Whole-test-set buffers of the evaluation. */
typedef struct eval_set {
    int n;
    float *logits, *prob; /* [n][10] */
    int32_t *labels;      /* [n] */
    float loss, accuracy;
} eval_set;

static void evaluate(sb_cnn *m, const sb_dataset *test, eval_set *e, const sb_model_probe *p)
{
    char x_name[SB_CNN_NAME_SIZE], logits_name[SB_CNN_NAME_SIZE];
    int batch = 0;
    for (int start = 0; start < e->n; start += m->batch, batch++) {
        int n = e->n - start < m->batch ? e->n - start : m->batch;
        batch_load(m, test, NULL, start, n);
        sb_cnn_eval_name(x_name, batch, "x");
        batch_probe(m, n, x_name, NULL, p);
        sb_cnn_forward(m, n, batch, e->logits + (size_t)start * SB_CNN_CLASSES, p);
    }
    sb_tensor labels = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {e->n}, .data = e->labels};
    sb_model_probe_source(p, "eval.labels", &labels);

    /* the whole-set ops name the last batch's logits (sb_model_eval_set) */
    sb_cnn_eval_name(logits_name, batch - 1, "dense2.out");
    sb_model_eval_set(m->k, p, e->n, SB_CNN_CLASSES, e->logits, e->prob, e->labels, logits_name,
                      &e->loss, &e->accuracy);
}

/* The CNN's side of checkpoint and resume (resume.h). */
static void cnn_init(void *m, const sb_model_probe *p)
{
    sb_cnn_init(m, p);
}

static void cnn_state(void *m, sb_train_state *s)
{
    sb_cnn_state(m, s);
}

static void cnn_resumed(void *m)
{
    sb_cnn_resumed(m);
}

/* The counters of a whole run: an epoch's order drawn at order_key (the
 * epoch), its batches at position, the dropout masks at rng_step (the
 * step); a resumed run goes on from the checkpoint's. */
sb_status sb_cnn_train(const sb_model_run *r, const sb_dataset *train, const sb_dataset *test,
                       sb_epoch_metrics *metrics, int *epochs_done, char *err, size_t errlen)
{
    *epochs_done = 0;
    const sb_train_config *cfg = r->cfg;
    const sb_train_checkpoint *ck = r->checkpoint;
    sb_status st = config_check(cfg, train, test);
    if (st != SB_OK)
        return st;
    sb_cnn m;
    st = sb_cnn_alloc(&m, r->k, cfg, train->rows, train->cols);
    if (st != SB_OK)
        return st;

    eval_set e = {.n = (int)test->n};
    size_t ecls = (size_t)e.n * SB_CNN_CLASSES;
    e.logits = malloc(ecls * sizeof *e.logits);
    e.prob = malloc(ecls * sizeof *e.prob);
    e.labels = malloc((size_t)e.n * sizeof *e.labels);
    int64_t *order = malloc((size_t)train->n * sizeof *order);
    if (!e.logits || !e.prob || !e.labels || !order) {
        st = SB_ERR_NOMEM;
        goto done;
    }
    memcpy(e.labels, test->labels, (size_t)e.n * sizeof *e.labels);

    sb_model_probe p = {.hook = r->hook, .ctx = r->hook_ctx, .op_start = r->op_start,
                        .leaf_hash = r->leaf_hash, .step = 0};
    const sb_train_model tm = {.m = &m, .ctr = &m.ctr, .init = cnn_init, .state = cnn_state,
                               .resumed = cnn_resumed};
    if ((st = sb_train_start(&tm, r, &p, err, errlen)) != SB_OK)
        goto done;
    sb_train_counters *c = &m.ctr;
    p.step = c->step;
    for (; c->epoch < cfg->epochs; c->epoch++, c->order_key++) {
        if (c->position == 0) {
            if (cfg->max_steps > 0 && p.step >= cfg->max_steps)
                break;
            c->epoch_first = c->step;
        }
        sb_rng_permutation(order, train->n, cfg->seed, SB_STREAM_SHUFFLE,
                           (uint32_t)c->order_key);
        bool cut = false;
        /* Keras's batching: full batches, then a smaller last one */
        while (c->position < train->n) {
            if (cfg->max_steps > 0 && p.step >= cfg->max_steps) {
                cut = true;
                break;
            }
            int64_t at = c->position;
            int n = train->n - at < cfg->batch ? (int)(train->n - at) : cfg->batch;
            batch_load(&m, train, order, at, n);
            batch_probe(&m, n, "batch.x", "batch.labels", &p);
            if (cfg->reduce == SB_REDUCE_NONE) {
                sb_cnn_forward(&m, n, SB_CNN_TRAIN, NULL, &p);
                sb_cnn_backward(&m, n, &p);
            } else {
                sb_cnn_parallel_step(&m, n, &p);
            }
            sb_cnn_update(&m, &p);
            c->loss_sum += (double)m.loss;
            c->losses++;
            c->position += n;
            c->rng_step++;
            p.step = ++c->step;
            if (sb_train_stop_due(ck, c->step)) {
                st = sb_train_save(&tm, ck, err, errlen);
                goto done;
            }
        }
        if (cut && cfg->cut_unevaluated)
            break;
        evaluate(&m, test, &e, &p);
        metrics[(*epochs_done)++] = (sb_epoch_metrics){
            .epoch = (int)c->epoch + 1,
            .steps = p.step,
            .train_loss = c->loss_sum / (double)c->losses,
            .test_loss = (double)e.loss,
            .test_accuracy = (double)e.accuracy,
        };
        c->position = 0;
        c->loss_sum = 0.0;
        c->losses = 0;
    }
done:
    free(order);
    free(e.logits);
    free(e.prob);
    free(e.labels);
    sb_cnn_free(&m);
    return st;
}

sb_status sb_model_train(const sb_kernel_table *k, const sb_train_config *cfg,
                         const sb_dataset *train, const sb_dataset *test,
                         sb_probe_fn *hook, void *hook_ctx, sb_op_start_fn *op_start,
                         sb_leaf_hash_fn *leaf_hash, sb_epoch_metrics *metrics,
                         int *epochs_done)
{
    const sb_model_run r = {.k = k, .cfg = cfg, .hook = hook, .hook_ctx = hook_ctx,
                            .op_start = op_start, .leaf_hash = leaf_hash};
    char err[8];
    return sb_cnn_train(&r, train, test, metrics, epochs_done, err, sizeof err);
}

sb_status sb_model_forward_samples(const sb_kernel_table *k, const sb_train_config *cfg,
                                   const sb_dataset *data, const int64_t *samples, int n,
                                   sb_probe_fn *hook, void *hook_ctx)
{
    if (n < 1 || cfg->batch < 1)
        return SB_ERR_USAGE;
    for (int i = 0; i < n; i++)
        if (samples[i] < 0 || samples[i] >= data->n)
            return SB_ERR_USAGE;
    sb_train_config one = *cfg;
    one.batch = n;      /* the buffers hold this one batch */
    sb_cnn m;
    sb_status st = sb_cnn_alloc(&m, k, &one, data->rows, data->cols);
    if (st != SB_OK)
        return st;
    sb_model_probe p = {.hook = hook, .ctx = hook_ctx, .step = 0};
    sb_cnn_init(&m, &p);
    batch_load(&m, data, samples, 0, n);
    batch_probe(&m, n, "x", NULL, &p);
    sb_cnn_forward(&m, n, SB_CNN_SAMPLES, NULL, &p);
    sb_cnn_free(&m);
    return SB_OK;
}

int64_t sb_model_train_steps(const sb_train_config *cfg, int64_t n_train)
{
    int64_t per_epoch = (n_train + cfg->batch - 1) / cfg->batch;
    int64_t steps = per_epoch * cfg->epochs;
    return cfg->max_steps > 0 && cfg->max_steps < steps ? cfg->max_steps : steps;
}
