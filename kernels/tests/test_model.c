/* The seed model on a small synthetic data set: the probe sequence and its
 * input names, the leaf digests its hashed ops hand over, same bits for any
 * thread count with det, learning with ref and det, and every step-0 op of
 * det against ref within the op's bound. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sb_model.h"
#include "sb_rng.h"

Suite *make_model_suite(void);

/* ---- synthetic data ----------------------------------------------------------
 * 8x8 images (the model takes its input size from the data set; 8x8 keeps a
 * step cheap: conv1 6x6, conv2 4x4, pool 2x2, 256 features). Class c in 0..3
 * is a bright 2x2 square in quadrant c over dim noise (pixels 0..63), so the
 * classes are separable by any one pixel of the squares. */
enum { SIDE = 8, SQUARE = 2, N_TRAIN = 128, N_TEST = 48, N_CLASSES_USED = 4, BATCH = 16 };

static sb_dataset make_set(int64_t n, uint32_t step)
{
    sb_dataset d = {.n = n, .rows = SIDE, .cols = SIDE, .owns = 1};
    d.pixels = malloc((size_t)n * SIDE * SIDE);
    d.labels = malloc((size_t)n * sizeof *d.labels);
    ck_assert(d.pixels && d.labels);
    for (int64_t i = 0; i < n; i++) {
        int32_t c = (int32_t)(sb_rng_u32(7, 0, step, (uint64_t)i) % N_CLASSES_USED);
        d.labels[i] = c;
        uint8_t *px = d.pixels + (size_t)i * SIDE * SIDE;
        for (int j = 0; j < SIDE * SIDE; j++)
            px[j] = (uint8_t)(sb_rng_u32(7, 1, step, (uint64_t)(i * SIDE * SIDE + j)) % 64);
        int r0 = 1 + (c / 2) * SIDE / 2, c0 = 1 + (c % 2) * SIDE / 2;
        for (int r = r0; r < r0 + SQUARE; r++)
            for (int q = c0; q < c0 + SQUARE; q++)
                px[r * SIDE + q] = 255;
    }
    return d;
}

static sb_dataset train_set, test_set;

static void data_setup(void)
{
    train_set = make_set(N_TRAIN, 0);
    test_set = make_set(N_TEST, 1);
}

static void data_teardown(void)
{
    sb_dataset_free(&train_set);
    sb_dataset_free(&test_set);
}

static sb_train_config small_config(int64_t max_steps, int epochs)
{
    sb_train_config cfg;
    sb_train_config_defaults(&cfg);
    cfg.batch = BATCH;
    cfg.epochs = epochs;
    cfg.max_steps = max_steps;
    return cfg;
}

/* exact equality, without -Wfloat-equal's complaint */
static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---- recording probes ------------------------------------------------------ */

/* FNV-1a: equal bytes give equal hashes, and a changed bit changes the hash
 * with overwhelming likelihood. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3u;
    }
    return h;
}

/* Of the bytes alone: an elementwise op sees a 4-d activation as a vector. */
static uint64_t data_hash(const sb_tensor *t)
{
    return fnv1a(0xcbf29ce484222325u, t->data, sb_tensor_bytes(t));
}

/* Of dtype, shape and bytes. */
static uint64_t tensor_hash(const sb_tensor *t)
{
    int head[2] = {(int)t->dtype, t->ndim};
    uint64_t h = fnv1a(0xcbf29ce484222325u, head, sizeof head);
    h = fnv1a(h, t->dim, (size_t)t->ndim * sizeof t->dim[0]);
    return fnv1a(h, t->data, sb_tensor_bytes(t));
}

/* A leaf hash for the tests (FNV-1a of the bytes from two offsets), handed
 * to the model in place of the harness's. */
static void test_leaf_hash(sb_leaf_digest *out, const void *bytes, size_t len)
{
    uint64_t a = fnv1a(0xcbf29ce484222325u, bytes, len);
    uint64_t b = fnv1a(0x84222325cbf29ce4u, bytes, len);
    memcpy(out->bytes, &a, sizeof a);
    memcpy(out->bytes + 8, &b, sizeof b);
}

/* The leaf digests a probe carries are test_leaf_hash of its tensor's leaves. */
static void check_leaves(const sb_probe_point *p)
{
    const unsigned char *bytes = p->tensor->data;
    size_t nbytes = sb_tensor_bytes(p->tensor);
    for (size_t k = 0; k * SB_HASH_LEAF_BYTES < nbytes; k++) {
        size_t off = k * SB_HASH_LEAF_BYTES;
        size_t len = nbytes - off < SB_HASH_LEAF_BYTES ? nbytes - off : SB_HASH_LEAF_BYTES;
        sb_leaf_digest want;
        test_leaf_hash(&want, bytes + off, len);
        ck_assert_msg(memcmp(&want, &p->leaves[k], sizeof want) == 0,
                      "%s: leaf %zu is not its tensor's", p->name, k);
    }
}

typedef struct record {
    int64_t step;
    char name[48];
    char op[32];
    uint64_t hash, data_hash;
    size_t count;
    int n_inputs;
    char inputs[4][48];
    int n_input_tensors;
    uint64_t input_hash[4];
    size_t input_count[4];
    float value; /* the first element, for scalars */
    bool leaves; /* the probe carried leaf digests (checked against the tensor) */
} record;

typedef struct recorder {
    record *r;
    size_t n, cap;
} recorder;

static void record_probe(void *ctx, const sb_probe_point *p)
{
    recorder *rec = ctx;
    if (rec->n == rec->cap) {
        rec->cap = rec->cap ? 2 * rec->cap : 256;
        rec->r = realloc(rec->r, rec->cap * sizeof *rec->r);
        ck_assert_ptr_nonnull(rec->r);
    }
    record *r = &rec->r[rec->n++];
    memset(r, 0, sizeof *r);
    r->step = p->step;
    ck_assert_uint_lt(strlen(p->name), sizeof r->name);
    strcpy(r->name, p->name);
    strcpy(r->op, p->op);
    r->hash = tensor_hash(p->tensor);
    r->data_hash = data_hash(p->tensor);
    r->count = sb_tensor_count(p->tensor);
    r->leaves = p->leaves != NULL;
    if (p->leaves)
        check_leaves(p);
    if (p->tensor->dtype == SB_DTYPE_F32)
        memcpy(&r->value, p->tensor->data, sizeof r->value);
    ck_assert_int_le(p->n_inputs, 4);
    ck_assert_int_le(p->n_input_tensors, p->n_inputs);
    r->n_inputs = p->n_inputs;
    r->n_input_tensors = p->n_input_tensors;
    for (int i = 0; i < p->n_inputs; i++)
        strcpy(r->inputs[i], p->inputs[i]);
    for (int i = 0; i < p->n_input_tensors; i++) {
        r->input_hash[i] = data_hash(&p->input_tensors[i]);
        r->input_count[i] = sb_tensor_count(&p->input_tensors[i]);
    }
}

static long find_latest(const recorder *rec, const char *name, size_t before)
{
    for (size_t i = before; i-- > 0;)
        if (strcmp(rec->r[i].name, name) == 0)
            return (long)i;
    return -1;
}

static int train_with(const sb_kernel_table *k, const sb_train_config *cfg, recorder *rec,
                      sb_leaf_hash_fn *leaf_hash, sb_epoch_metrics *metrics)
{
    int done = -1;
    sb_status s = sb_model_train(k, cfg, &train_set, &test_set, rec ? record_probe : NULL, rec,
                                 NULL, leaf_hash, metrics, &done);
    ck_assert_int_eq(s, SB_OK);
    return done;
}

static int train(sb_family f, const sb_train_config *cfg, recorder *rec,
                 sb_epoch_metrics *metrics)
{
    return train_with(sb_kernels(f), cfg, rec, NULL, metrics);
}

/* ---- (a) the probe sequence -------------------------------------------------- */

#define UPDATE(param) "adadelta." param, "adadelta." param ".acc", "adadelta." param ".delta_acc"
static const char *const step_names[] = {
    "batch.x", "batch.labels",
    "conv1.fwd.out", "relu1.fwd.out", "conv2.fwd.out", "relu2.fwd.out", "pool.fwd.out",
    "dropout1.fwd.mask", "dropout1.fwd.out", "dense1.fwd.out", "relu3.fwd.out",
    "dropout2.fwd.mask", "dropout2.fwd.out", "dense2.fwd.out", "softmax.fwd.prob",
    "loss.fwd.loss",
    "loss.bwd.dlogits", "dense2.bwd.dW", "dense2.bwd.db", "dense2.bwd.dx",
    "dropout2.bwd.dx", "relu3.bwd.dx", "dense1.bwd.dW", "dense1.bwd.db", "dense1.bwd.dx",
    "dropout1.bwd.dx", "pool.bwd.dx", "relu2.bwd.dx", "conv2.bwd.dW", "conv2.bwd.db",
    "conv2.bwd.dx", "relu1.bwd.dx", "conv1.bwd.dW", "conv1.bwd.db",
    /* each update's every output: the parameter, then the accumulators */
    UPDATE("conv1.W"), UPDATE("conv1.b"), UPDATE("conv2.W"), UPDATE("conv2.b"),
    UPDATE("dense1.W"), UPDATE("dense1.b"), UPDATE("dense2.W"), UPDATE("dense2.b"),
};
static const char *const param_names[] = {
    "conv1.W", "conv1.b", "conv2.W", "conv2.b", "dense1.W", "dense1.b", "dense2.W", "dense2.b",
};
/* after "eval.b<k>." */
static const char *const eval_batch_names[] = {
    "x", "conv1.out", "relu1.out", "conv2.out", "relu2.out",
    "pool.out", "dense1.out", "relu3.out", "dense2.out",
};
static const char *const eval_end_names[] = {
    "eval.labels", "eval.loss", "softmax.eval.prob", "eval.accuracy",
};
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(test_probe_sequence)
{
    sb_train_config cfg = small_config(1, 3);
    recorder rec = {0};
    sb_epoch_metrics m[3];
    ck_assert_int_eq(train(SB_FAMILY_DET, &cfg, &rec, m), 1);

    size_t eval_batches = (N_TEST + BATCH - 1) / BATCH;
    size_t want = LEN(param_names) + LEN(step_names) + eval_batches * LEN(eval_batch_names) +
                  LEN(eval_end_names);
    ck_assert_uint_eq(rec.n, want);

    size_t i = 0;
    for (size_t j = 0; j < LEN(param_names); j++, i++) {
        char name[48];
        snprintf(name, sizeof name, "init.%s", param_names[j]);
        ck_assert_str_eq(rec.r[i].name, name);
        ck_assert_str_eq(rec.r[i].op, "source");
        ck_assert_int_eq(rec.r[i].n_inputs, 0);
        ck_assert_int_eq(rec.r[i].step, 0);
    }
    for (size_t j = 0; j < LEN(step_names); j++, i++) {
        ck_assert_str_eq(rec.r[i].name, step_names[j]);
        ck_assert_int_eq(rec.r[i].step, 0);
    }
    for (size_t b = 0; b < eval_batches; b++)
        for (size_t j = 0; j < LEN(eval_batch_names); j++, i++) {
            char name[48];
            snprintf(name, sizeof name, "eval.b%zu.%s", b, eval_batch_names[j]);
            ck_assert_str_eq(rec.r[i].name, name);
        }
    for (size_t j = 0; j < LEN(eval_end_names); j++, i++)
        ck_assert_str_eq(rec.r[i].name, eval_end_names[j]);
    /* evaluation probes carry the step count at the end of the epoch */
    for (i = LEN(param_names) + LEN(step_names); i < rec.n; i++)
        ck_assert_int_eq(rec.r[i].step, 1);

    /* a few ops, and the naming of parameters through updates */
    long conv2 = find_latest(&rec, "conv2.fwd.out", rec.n);
    ck_assert_str_eq(rec.r[conv2].op, "conv2d_fwd");
    ck_assert_str_eq(rec.r[conv2].inputs[0], "relu1.fwd.out");
    ck_assert_str_eq(rec.r[conv2].inputs[1], "init.conv2.W");
    ck_assert_str_eq(rec.r[conv2].inputs[2], "init.conv2.b");
    long upd = find_latest(&rec, "adadelta.dense1.W", rec.n);
    ck_assert_str_eq(rec.r[upd].op, "adadelta_update");
    ck_assert_int_eq(rec.r[upd].n_inputs, 2);
    ck_assert_str_eq(rec.r[upd].inputs[0], "dense1.bwd.dW");
    ck_assert_str_eq(rec.r[upd].inputs[1], "init.dense1.W");
    /* the accumulators written in place are probed after it, with its inputs
     * (the first update's state starts as zeros: no probe to name) */
    const char *const states[] = {"adadelta.dense1.W.acc", "adadelta.dense1.W.delta_acc"};
    for (int j = 0; j < 2; j++) {
        const record *st = &rec.r[upd + 1 + j];
        ck_assert_str_eq(st->name, states[j]);
        ck_assert_str_eq(st->op, "adadelta_update");
        ck_assert_int_eq(st->n_inputs, 2);
        ck_assert_str_eq(st->inputs[0], "dense1.bwd.dW");
        ck_assert_str_eq(st->inputs[1], "init.dense1.W");
        ck_assert_uint_eq(st->count, rec.r[upd].count);
    }
    long ev = find_latest(&rec, "eval.b1.conv1.out", rec.n);
    ck_assert_str_eq(rec.r[ev].inputs[0], "eval.b1.x");
    ck_assert_str_eq(rec.r[ev].inputs[1], "adadelta.conv1.W");
    ck_assert_str_eq(rec.r[ev].inputs[2], "adadelta.conv1.b");
    char last_logits[48];
    snprintf(last_logits, sizeof last_logits, "eval.b%zu.dense2.out", eval_batches - 1);
    ck_assert_str_eq(rec.r[find_latest(&rec, "eval.loss", rec.n)].inputs[0], last_logits);

    /* names are unique within a step (the evaluation's too), so a step and a
     * name pick one record */
    for (i = 0; i < rec.n; i++)
        for (size_t j = i + 1; j < rec.n; j++)
            ck_assert_msg(rec.r[i].step != rec.r[j].step || strcmp(rec.r[i].name, rec.r[j].name),
                          "step %lld: %s appears twice", (long long)rec.r[i].step, rec.r[i].name);

    /* every input names an earlier probe, and the live input tensor is the
     * one that probe recorded; the whole-test-set ops read every batch's
     * logits laid end to end and name the last batch's probe */
    for (i = 0; i < rec.n; i++) {
        const record *r = &rec.r[i];
        bool whole_set = strcmp(r->name, "eval.loss") == 0 ||
                         strcmp(r->name, "softmax.eval.prob") == 0 ||
                         strcmp(r->name, "eval.accuracy") == 0;
        for (int j = 0; j < r->n_inputs; j++) {
            long at = find_latest(&rec, r->inputs[j], i);
            ck_assert_msg(at >= 0, "%s: input %s is not an earlier probe", r->name,
                          r->inputs[j]);
            if (j >= r->n_input_tensors)
                continue;
            if (whole_set && strcmp(r->inputs[j], last_logits) == 0)
                ck_assert_uint_eq(r->input_count[j], (size_t)N_TEST * 10);
            else
                ck_assert_msg(r->input_hash[j] == rec.r[at].data_hash,
                              "%s: input %d is not the tensor of %s", r->name, j,
                              r->inputs[j]);
        }
    }
    free(rec.r);
}
END_TEST

/* A run cut short with cut_unevaluated has the records of an evaluated one
 * up to the cut, then none: no evaluation, no metrics for the epoch it cut.
 * A cut at an epoch's end cuts nothing: that epoch is evaluated. */
START_TEST(test_cut_unevaluated)
{
    sb_train_config cfg = small_config(1, 3);
    recorder whole = {0}, cut = {0}, at_end = {0};
    sb_epoch_metrics m[3];
    ck_assert_int_eq(train(SB_FAMILY_DET, &cfg, &whole, m), 1);
    cfg.cut_unevaluated = true;
    ck_assert_int_eq(train(SB_FAMILY_DET, &cfg, &cut, m), 0);
    ck_assert_uint_eq(cut.n, LEN(param_names) + LEN(step_names));
    ck_assert_uint_gt(whole.n, cut.n);
    for (size_t i = 0; i < cut.n; i++) {
        ck_assert_str_eq(cut.r[i].name, whole.r[i].name);
        ck_assert(cut.r[i].hash == whole.r[i].hash);
    }

    cfg.max_steps = N_TRAIN / BATCH;
    ck_assert_int_eq(train(SB_FAMILY_DET, &cfg, &at_end, m), 1);
    ck_assert_int_eq(m[0].steps, N_TRAIN / BATCH);
    ck_assert_int_ge(find_latest(&at_end, "eval.accuracy", at_end.n), 0);
    free(whole.r);
    free(cut.r);
    free(at_end.r);
}
END_TEST

/* ---- (a') leaf digests --------------------------------------------------------
 * Given a leaf hash, the model runs each op that reads the tensor just made
 * in its hashed mode and hands the leaf digests over with the probes; the
 * probes, their order and their tensors are those of a run without. */

/* The probes whose tensor an elementwise op (relu, dropout, an update) wrote
 * or read right after it was made. */
static const char *const step_leaf_names[] = {
    "conv1.fwd.out", "relu1.fwd.out", "conv2.fwd.out", "relu2.fwd.out", "pool.fwd.out",
    "dropout1.fwd.mask", "dropout1.fwd.out", "dense1.fwd.out", "relu3.fwd.out",
    "dropout2.fwd.mask", "dropout2.fwd.out", "dense2.bwd.dx", "dropout2.bwd.dx",
    "relu3.bwd.dx", "dense1.bwd.dx", "dropout1.bwd.dx", "pool.bwd.dx", "relu2.bwd.dx",
    "conv2.bwd.dx", "relu1.bwd.dx",
    UPDATE("conv1.W"), UPDATE("conv1.b"), UPDATE("conv2.W"), UPDATE("conv2.b"),
    UPDATE("dense1.W"), UPDATE("dense1.b"), UPDATE("dense2.W"), UPDATE("dense2.b"),
};
static const char *const eval_leaf_names[] = {
    "conv1.out", "relu1.out", "conv2.out", "relu2.out", "dense1.out", "relu3.out",
};

static bool leaves_expected(const char *name)
{
    for (size_t j = 0; j < LEN(step_leaf_names); j++)
        if (strcmp(name, step_leaf_names[j]) == 0)
            return true;
    int at = 0;
    if (sscanf(name, "eval.b%*d.%n", &at) == 0 && at > 0)
        for (size_t j = 0; j < LEN(eval_leaf_names); j++)
            if (strcmp(name + at, eval_leaf_names[j]) == 0)
                return true;
    return false;
}

static long find_at_step(const recorder *rec, const char *name, int64_t step)
{
    for (size_t i = 0; i < rec->n; i++)
        if (rec->r[i].step == step && strcmp(rec->r[i].name, name) == 0)
            return (long)i;
    ck_abort_msg("no probe %s at step %lld", name, (long long)step);
    return -1;
}

START_TEST(test_leaf_digests)
{
    sb_train_config cfg = small_config(2, 1);
    recorder plain = {0}, hashed = {0}, mutant = {0};
    sb_epoch_metrics m[1];
    int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    train_with(sb_kernels(SB_FAMILY_DET), &cfg, &plain, NULL, m);
    train_with(sb_kernels(SB_FAMILY_DET), &cfg, &hashed, test_leaf_hash, m);
    ck_assert_uint_eq(plain.n, hashed.n);
    int with_leaves = 0;
    for (size_t i = 0; i < plain.n; i++) {
        const record *a = &plain.r[i], *b = &hashed.r[i];
        ck_assert_str_eq(a->name, b->name);
        ck_assert_int_eq(a->step, b->step);
        ck_assert_msg(a->hash == b->hash, "%s: tensor differs", a->name);
        ck_assert(!a->leaves);
        ck_assert_msg(b->leaves == leaves_expected(b->name), "%s: leaves %s", b->name,
                      b->leaves ? "given" : "missing");
        with_leaves += b->leaves;
    }
    ck_assert_int_eq(with_leaves, 2 * (int)LEN(step_leaf_names) +
                                      (int)((N_TEST + BATCH - 1) / BATCH * LEN(eval_leaf_names)));

    /* A mutant's op runs plainly: neither its output nor the held tensor it
     * reads comes with digests; the det ops around it still hash. The mutant
     * gives det's bits at one thread. */
    omp_set_num_threads(1);
    train_with(sb_kernels_mutant("relu_chunk_off_by_one"), &cfg, &mutant, test_leaf_hash, m);
    ck_assert_uint_eq(mutant.n, plain.n);
    ck_assert(!mutant.r[find_at_step(&mutant, "conv1.fwd.out", 0)].leaves);
    ck_assert(!mutant.r[find_at_step(&mutant, "relu1.fwd.out", 0)].leaves);
    ck_assert(mutant.r[find_at_step(&mutant, "relu1.bwd.dx", 0)].leaves);
    ck_assert(mutant.r[find_at_step(&mutant, "dropout1.fwd.out", 0)].leaves);
    omp_set_num_threads(saved);
    free(plain.r);
    free(hashed.r);
    free(mutant.r);
}
END_TEST

/* An update's state probes hold the accumulators it wrote (acc = (1 - rho)
 * g^2 from zeros at step 0), and from the second update on every probe of
 * the update names the accumulators' probes of the update before. */
START_TEST(test_update_state_probes)
{
    sb_train_config cfg = small_config(2, 1);
    recorder rec = {0};
    sb_epoch_metrics m[1];
    train(SB_FAMILY_DET, &cfg, &rec, m);
    const record *g = &rec.r[find_at_step(&rec, "dense2.bwd.db", 0)];
    const record *acc = &rec.r[find_at_step(&rec, "adadelta.dense2.b.acc", 0)];
    const float one_minus_rho = 1.0f - cfg.optim.rho;
    ck_assert(same_bits(acc->value, one_minus_rho * (g->value * g->value)));
    const char *const names[] = {"adadelta.dense2.b", "adadelta.dense2.b.acc",
                                 "adadelta.dense2.b.delta_acc"};
    for (int j = 0; j < 3; j++) {
        long at = find_at_step(&rec, names[j], 1);
        const record *r = &rec.r[at];
        ck_assert_int_eq(r->n_inputs, 4);
        ck_assert_str_eq(r->inputs[0], "dense2.bwd.db");
        ck_assert_str_eq(r->inputs[1], "adadelta.dense2.b");
        ck_assert_str_eq(r->inputs[2], "adadelta.dense2.b.acc");
        ck_assert_str_eq(r->inputs[3], "adadelta.dense2.b.delta_acc");
        ck_assert_int_eq(r->n_input_tensors, 1);
        /* the parameter's probe names the accumulators of step 0 */
        if (j == 0)
            for (int k = 2; k < 4; k++)
                ck_assert_int_eq(rec.r[find_latest(&rec, r->inputs[k], (size_t)at)].step, 0);
    }
    free(rec.r);
}
END_TEST

/* ---- (b) same bits for every thread count ---------------------------------- */

START_TEST(test_det_threads_bitwise)
{
    sb_train_config cfg = small_config(3, 1);
    const int threads[] = {1, 2, 3, 5, 8};
    recorder base = {0};
    sb_epoch_metrics m0[1], m[1];
    int saved = omp_get_max_threads();
    for (size_t t = 0; t < LEN(threads); t++) {
        omp_set_num_threads(threads[t]);
        recorder rec = {0};
        train(SB_FAMILY_DET, &cfg, &rec, t == 0 ? m0 : m);
        if (t == 0) {
            base = rec;
            continue;
        }
        ck_assert_uint_eq(rec.n, base.n);
        for (size_t i = 0; i < rec.n; i++) {
            ck_assert_str_eq(rec.r[i].name, base.r[i].name);
            ck_assert_msg(rec.r[i].hash == base.r[i].hash,
                          "%d threads: step %lld %s differs from 1 thread", threads[t],
                          (long long)rec.r[i].step, rec.r[i].name);
        }
        /* the metrics are computed from probed tensors: bitwise too */
        ck_assert_int_eq(m[0].steps, m0[0].steps);
        ck_assert(same_double(m[0].train_loss, m0[0].train_loss));
        ck_assert(same_double(m[0].test_loss, m0[0].test_loss));
        ck_assert(same_double(m[0].test_accuracy, m0[0].test_accuracy));
        free(rec.r);
    }
    omp_set_num_threads(saved);
    free(base.r);
}
END_TEST

/* ---- (c) it learns ------------------------------------------------------------ */

/* One thread: the threads case shows det gives the same bits for any count,
 * and ref is serial; a loaded machine then costs no OpenMP wake-ups. */
static void check_learns(sb_family f)
{
    enum { EPOCHS = 4, STEPS = N_TRAIN / BATCH };
    sb_train_config cfg = small_config(0, EPOCHS);
    recorder rec = {0};
    sb_epoch_metrics m[EPOCHS];
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    ck_assert_int_eq(train(f, &cfg, &rec, m), EPOCHS);
    omp_set_num_threads(saved);
    float first = rec.r[find_latest(&rec, "loss.fwd.loss", 8 + LEN(step_names))].value;
    for (int e = 0; e < EPOCHS; e++) {
        ck_assert(isfinite(m[e].train_loss) && isfinite(m[e].test_loss));
        ck_assert_int_eq(m[e].steps, STEPS * (e + 1));
    }
    /* Untrained, the loss is near ln 10 = 2.30. Learning means: the test
     * loss falls below a tenth of the first batch's loss, and the test set,
     * separable by one pixel, is classified correctly (the accuracy is a
     * count over N_TEST samples, so 1 is exact). */
    ck_assert(first > 1.5f && first < 3.5f);
    ck_assert(m[EPOCHS - 1].test_loss < 0.1 * (double)first);
    ck_assert(m[EPOCHS - 1].train_loss < m[0].train_loss);
    ck_assert(m[EPOCHS - 1].test_accuracy >= 1.0);
    free(rec.r);
}

START_TEST(test_learns_ref) { check_learns(SB_FAMILY_REF); }
END_TEST

START_TEST(test_learns_det) { check_learns(SB_FAMILY_DET); }
END_TEST

/* ---- (d) det against ref, op by op, at step 0 ------------------------------- */

typedef struct vs_ref {
    int checked;
} vs_ref;

/* Runs the ref kernel on det's live inputs and compares each element with
 * the op's reordering bound: ref and det are two summation orders, so they
 * differ by at most the bound, and ops without a reduction agree exactly.
 * Optimiser updates are skipped: they have overwritten their inputs. */
static void compare_to_ref(void *ctx, const sb_probe_point *p)
{
    vs_ref *v = ctx;
    if (p->step != 0 || !p->bound)
        return; /* sources */
    const sb_op_call *det = p->bound_ctx;
    sb_op op = det->op;
    if (op == SB_OP_sgd_update || op == SB_OP_rmsprop_update || op == SB_OP_adam_update ||
        op == SB_OP_adadelta_update)
        return;
    sb_op_call ref = *det;
    size_t n = sb_tensor_count(p->tensor);
    float *out = malloc(n * sizeof *out), *bound = malloc(n * sizeof *bound);
    ck_assert(out && bound);
    ref.out[p->out_index].data = out;
    sb_op_call_run(sb_kernels(SB_FAMILY_REF), &ref);
    p->bound(bound, p->bound_ctx, p->out_index);
    const float *got = p->tensor->data;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(isfinite(got[i]) && isfinite(out[i]), "%s[%zu] not finite", p->name, i);
        ck_assert_msg(isfinite(bound[i]) && bound[i] >= 0.0f, "%s[%zu] bad bound", p->name, i);
        ck_assert_msg(fabsf(got[i] - out[i]) <= bound[i],
                      "%s[%zu]: det %.9g ref %.9g bound %.3g", p->name, i, (double)got[i],
                      (double)out[i], (double)bound[i]);
    }
    v->checked++;
    free(out);
    free(bound);
}

START_TEST(test_det_matches_ref_step0)
{
    sb_train_config cfg = small_config(1, 1);
    vs_ref v = {0};
    sb_epoch_metrics m[1];
    int done = 0;
    /* one thread, as in check_learns */
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    ck_assert_int_eq(sb_model_train(sb_kernels(SB_FAMILY_DET), &cfg, &train_set, &test_set,
                                    compare_to_ref, &v, NULL, NULL, m, &done),
                     SB_OK);
    omp_set_num_threads(saved);
    /* 14 forward and 18 backward ops at step 0 */
    ck_assert_int_eq(v.checked, 32);
}
END_TEST

/* ---- configuration and bad input -------------------------------------------- */

START_TEST(test_defaults)
{
    sb_train_config cfg;
    sb_train_config_defaults(&cfg);
    ck_assert_int_eq(cfg.batch, 128);
    ck_assert_int_eq(cfg.epochs, 12);
    ck_assert_int_eq(cfg.optim.kind, SB_OPTIM_ADADELTA);
    ck_assert(same_bits(cfg.optim.lr, 1.0f));
    ck_assert(same_bits(cfg.optim.rho, 0.95f));
    ck_assert(same_bits(cfg.optim.epsilon, 1e-7f));
    ck_assert(same_bits(cfg.dropout1, 0.25f));
    ck_assert(same_bits(cfg.dropout2, 0.5f));
    ck_assert_int_eq(cfg.seed, 1);
    ck_assert_int_eq(cfg.max_steps, 0);
    ck_assert(!cfg.cut_unevaluated);
}
END_TEST

START_TEST(test_bad_input)
{
    const sb_kernel_table *k = sb_kernels(SB_FAMILY_REF);
    sb_epoch_metrics m[1];
    int done = -1;
    sb_train_config cfg = small_config(1, 1);
    cfg.batch = 0;
    ck_assert_int_eq(sb_model_train(k, &cfg, &train_set, &test_set, NULL, NULL, NULL, NULL, m, &done),
                     SB_ERR_USAGE);
    ck_assert_int_eq(done, 0);
    cfg = small_config(1, 1);
    cfg.dropout2 = 1.0f;
    ck_assert_int_eq(sb_model_train(k, &cfg, &train_set, &test_set, NULL, NULL, NULL, NULL, m, &done),
                     SB_ERR_USAGE);
    cfg.dropout2 = NAN;
    ck_assert_int_eq(sb_model_train(k, &cfg, &train_set, &test_set, NULL, NULL, NULL, NULL, m, &done),
                     SB_ERR_USAGE);

    cfg = small_config(1, 1);
    sb_dataset small;
    ck_assert_int_eq(sb_dataset_slice(&small, &test_set, 0, 4), SB_OK);
    small.rows = small.cols = 5; /* too small for two 3x3 convolutions and a pool */
    sb_dataset small_train = small;
    ck_assert_int_eq(sb_model_train(k, &cfg, &small_train, &small, NULL, NULL, NULL, NULL, m, &done),
                     SB_ERR_SHAPE);
    small.rows = small.cols = 6;
    ck_assert_int_eq(sb_model_train(k, &cfg, &train_set, &small, NULL, NULL, NULL, NULL, m, &done),
                     SB_ERR_SHAPE); /* test images differ from the training images */

    test_set.labels[3] = 10;
    ck_assert_int_eq(sb_model_train(k, &cfg, &train_set, &test_set, NULL, NULL, NULL, NULL, m, &done),
                     SB_ERR_INPUT);
    test_set.labels[3] = 0;
}
END_TEST

/* One case per property, so CK_RUN_CASE can pick one. */
static TCase *add_case(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, data_setup, data_teardown);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return tc;
}

Suite *make_model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = add_case(s, "config");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(add_case(s, "probes"), test_probe_sequence);
    tcase_add_test(add_case(s, "cut"), test_cut_unevaluated);
    tcase_add_test(add_case(s, "state"), test_update_state_probes);
    tcase_add_test(add_case(s, "leaves"), test_leaf_digests);
    tcase_add_test(add_case(s, "threads"), test_det_threads_bitwise);
    tcase_add_test(add_case(s, "vs_ref"), test_det_matches_ref_step0);
    tcase_add_test(add_case(s, "learns_ref"), test_learns_ref);
    tcase_add_test(add_case(s, "learns_det"), test_learns_det);
    return s;
}
