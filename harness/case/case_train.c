/* Case files: the [train] section of a kind = train case, and the steps
 * such a case trains. */
#include <string.h>

#include "case/case_loader.h"

/* the [train] keys every model reads; the rest are the model's own */
static const char *const train_keys[] = {"model", "dataset", "train", "test", "optimizer",
                                         NULL};

/* char_gpt's block keys (sb_gpt_block_config): read by load_gpt_block, not
 * through the parameter table, so that the digest of a case without them
 * stays as it was (case_digest.c names the block only when it is not
 * GPT-2's). */
static const char *const gpt_block_keys[] = {"norm", "position", "mlp", "kv_heads", "bias",
                                             NULL};

/* *out = the index of key's value among names[0], names[1] (unchanged
 * without the key). */
static sb_status get_choice(case_loader *ld, const char *key, const char *const names[2],
                            int *out)
{
    const case_entry *e = sb_case_find(ld, "train", key);
    if (e == NULL)
        return SB_OK;
    for (int i = 0; i < 2; i++)
        if (strcmp(e->value, names[i]) == 0) {
            *out = i;
            return SB_OK;
        }
    return sb_case_fail(ld, e->line, "%s as %s or %s, found \"%s\"", key, names[0], names[1],
                        e->value);
}

static sb_status load_gpt_block(case_loader *ld, sb_gpt_config *g)
{
    static const char *const norms[] = {"layernorm", "rmsnorm"};
    static const char *const positions[] = {"learned", "rope"};
    static const char *const mlps[] = {"gelu", "swiglu"};
    int norm = SB_GPT_LAYERNORM, position = SB_GPT_LEARNED, mlp = SB_GPT_GELU;
    sb_status st = get_choice(ld, "norm", norms, &norm);
    if (st == SB_OK)
        st = get_choice(ld, "position", positions, &position);
    if (st == SB_OK)
        st = get_choice(ld, "mlp", mlps, &mlp);
    if (st != SB_OK)
        return st;
    g->block.norm = (sb_gpt_norm)norm;
    g->block.position = (sb_gpt_position)position;
    g->block.mlp = (sb_gpt_mlp)mlp;
    const case_entry *e = sb_case_find(ld, "train", "kv_heads");
    if (e != NULL) {
        int64_t kv = 0;
        if ((st = sb_case_get_i64(ld, e, 1, 64, &kv)) != SB_OK)
            return st;
        if (g->heads % kv != 0)
            return sb_case_fail(ld, e->line, "kv_heads dividing heads (%d), found %lld", g->heads,
                                (long long)kv);
        g->block.kv_heads = (int)kv;
    }
    if ((e = sb_case_find(ld, "train", "bias")) != NULL) {
        bool bias = true;
        if ((st = sb_case_get_bool(ld, e, &bias)) != SB_OK)
            return st;
        g->block.no_bias = !bias;
    }
    e = sb_case_find(ld, "train", "position");
    if (g->block.position == SB_GPT_ROPE && g->heads > 0 && (g->width / g->heads) % 2 != 0)
        return sb_case_fail(ld, e->line, "position = rope with an even head width (width / "
                            "heads), found %d", g->width / g->heads);
    return SB_OK;
}

sb_status sb_case_load_train(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "train");
    if (at == 0)
        return sb_case_fail(ld, sb_case_section_line(ld, "case"), "a [train] section for kind = train");

    /* the model first: it decides the defaults and the other keys */
    const case_entry *e = sb_case_find(ld, "train", "model");
    if (e == NULL)
        return sb_case_fail(ld, at, "key model (%s) in [train]", sb_model_names());
    const sb_model_kind *model = sb_model_find(e->value);
    if (model == NULL)
        return sb_case_fail(ld, e->line, "model as %s, found \"%s\"", sb_model_names(), e->value);
    snprintf(c->model, sizeof c->model, "%s", model->name);
    const case_param *train_params = sb_case_train_params(model);

    model->defaults(&c->train);
    c->train.seed = c->seed;
    e = sb_case_find(ld, "train", "optimizer");
    sb_optimizer kind = c->train.optim.kind;
    if (e != NULL) {
        kind = SB_OPTIM_COUNT;
        for (int k = 0; k < SB_OPTIM_COUNT; k++)
            if (strcmp(sb_optimizer_name((sb_optimizer)k), e->value) == 0)
                kind = (sb_optimizer)k;
        if (kind == SB_OPTIM_COUNT)
            return sb_case_fail(ld, e->line,
                        "optimizer as adadelta, sgd, rmsprop, adam or adamw, found \"%s\"",
                        e->value);
        sb_optim_defaults(&c->train.optim, kind);
    }

    const bool gpt = strcmp(model->name, "char_gpt") == 0;
    for (int i = 0; i < ld->n_entries; i++) {
        e = &ld->entries[i];
        if (strcmp(e->section, "train") != 0 || (sb_case_in_list(train_keys, e->key) &&
                                                     sb_case_find_param(train_params, e->key) == NULL))
            continue; /* model, dataset, train, test, optimizer: read below or above */
        if (gpt && sb_case_in_list(gpt_block_keys, e->key))
            continue; /* load_gpt_block, below */
        const case_param *p = sb_case_find_param(train_params, e->key);
        void *base = &c->train;
        if (p == NULL) {
            p = sb_case_find_optim_param(kind, e->key);
            base = &c->train.optim;
        }
        if (p == NULL) {
            char keys[160], own[160];
            sb_case_describe_keys(keys, sizeof keys, NULL, kind);
            sb_case_describe_keys(own, sizeof own, train_params, SB_OPTIM_COUNT);
            if (gpt)
                snprintf(own + strlen(own), sizeof own - strlen(own),
                         " norm position mlp kv_heads bias");
            return sb_case_fail(ld, e->line,
                        "a key of [train] for model %s (model dataset train test optimizer "
                        "%s, and for %s:%s), found \"%s\"",
                        model->name, own, sb_optimizer_name(kind), keys, e->key);
        }
        sb_status st = sb_case_set_param(ld, base, p, e);
        if (st != SB_OK)
            return st;
    }

    if (gpt && load_gpt_block(ld, &c->train.gpt) != SB_OK)
        return ld->status;
    /* the CNN keeps the state of the Keras optimisers only; the GPT's update
     * is AdamW's (its clipping scale and decoupled weight decay) */
    if (!gpt && kind == SB_OPTIM_ADAMW)
        return sb_case_fail(ld, sb_case_find(ld, "train", "optimizer")->line,
                    "optimizer as adadelta, sgd, rmsprop or adam for model keras_mnist_cnn "
                    "(a Keras optimiser), found \"adamw\"");
    if (gpt && kind != SB_OPTIM_ADAMW)
        return sb_case_fail(ld, sb_case_find(ld, "train", "optimizer")->line,
                    "optimizer as adamw for model char_gpt, found \"%s\"",
                    sb_optimizer_name(kind));
    if ((e = sb_case_find(ld, "train", "dataset")) == NULL)
        return sb_case_fail(ld, at, "key dataset (%s) in [train]", model->datasets);
    if (!model->dataset_ok(e->value))
        return sb_case_fail(ld, e->line, "dataset as %s (for model %s), found \"%s\"", model->datasets,
                    model->name, e->value);
    snprintf(c->dataset, sizeof c->dataset, "%.*s", (int)sizeof c->dataset - 1, e->value);
    if ((e = sb_case_find(ld, "train", "train")) == NULL)
        return sb_case_fail(ld, at, "key train (a sample range begin..end) in [train]");
    sb_status st = sb_case_get_range(ld, e, &c->train_begin, &c->train_end);
    if (st != SB_OK)
        return st;
    if ((e = sb_case_find(ld, "train", "test")) == NULL)
        return sb_case_fail(ld, at, "key test (a sample range begin..end) in [train]");
    return sb_case_get_range(ld, e, &c->test_begin, &c->test_end);
}

int64_t sb_case_train_steps(const sb_case *c)
{
    if (c->kind != SB_CASE_TRAIN)
        return 0;
    return sb_model_find(c->model)->steps(&c->train, c->train_end - c->train_begin);
}
