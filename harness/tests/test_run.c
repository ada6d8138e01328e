/* sb_run_case on kernel cases: probes, inputs, det across thread counts,
 * dumps; on the short training case: the trace is the same whether the model
 * hands over leaf digests or not, and a sink trusts digests only when told. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sb_harness.h"
#include "sb_rng.h"

Suite *make_run_suite(void);

static sb_case kernel_case(sb_op op, sb_family family)
{
    sb_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.path, sizeof c.path, "test_run.case");
    snprintf(c.name, sizeof c.name, "test_run");
    memset(c.digest, '0', 32);
    c.kind = SB_CASE_KERNEL;
    c.family = family;
    c.seed = 7;
    c.reference_threads = 1;
    c.call.op = op;
    /* odd sizes, so that no thread count divides the work evenly */
    c.call.dense = (sb_dense_shape){.n = 7, .in = 301, .out = 17};
    c.call.conv = (sb_conv_shape){.n = 2, .c = 3, .h = 9, .w = 11, .k = 5, .r = 3, .s = 3,
                                  .stride = 1, .pad = 1};
    c.call.cls = (sb_class_shape){.n = 37, .k = 10};
    c.call.n = 1000;
    sb_optim_defaults(&c.call.optim, SB_OPTIM_ADADELTA);
    return c;
}

static void run_at(const sb_case *c, int threads, sb_trace *t, const sb_run_options *dump)
{
    sb_run_options o = dump ? *dump : (sb_run_options){0};
    o.threads = threads;
    char err[256] = "";
    sb_trace_init(t);
    sb_status st = sb_run_case(c, &o, t, err, sizeof err);
    ck_assert_msg(st == SB_OK, "%s", err);
}

static void traces_equal(const sb_trace *a, const sb_trace *b)
{
    ck_assert_uint_eq(a->n_records, b->n_records);
    for (size_t i = 0; i < a->n_records; i++) {
        ck_assert_str_eq(a->records[i].name, b->records[i].name);
        ck_assert_msg(sb_hash_equal(&a->records[i].hash, &b->records[i].hash),
                      "record %zu (%s) differs", i, a->records[i].name);
    }
}

START_TEST(det_same_trace_at_1_and_3_threads)
{
    const sb_op ops[] = {SB_OP_dense_fwd, SB_OP_conv2d_fwd, SB_OP_xent_loss};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        sb_case c = kernel_case(ops[k], SB_FAMILY_DET);
        sb_trace t1, t3;
        run_at(&c, 1, &t1, NULL);
        run_at(&c, 3, &t3, NULL);
        traces_equal(&t1, &t3);
        sb_trace_free(&t1);
        sb_trace_free(&t3);
    }
}
END_TEST

START_TEST(probes_name_inputs_and_outputs)
{
    sb_case c = kernel_case(SB_OP_dense_fwd, SB_FAMILY_DET);
    sb_trace t;
    run_at(&c, 2, &t, NULL);
    ck_assert_uint_eq(t.n_records, 4);
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "input.%d", i);
        ck_assert_str_eq(t.records[i].name, name);
        ck_assert_str_eq(t.records[i].op, "source");
        ck_assert_int_eq(t.records[i].n_inputs, 0);
    }
    const sb_record *out = &t.records[3];
    ck_assert_str_eq(out->name, "dense_fwd.out0");
    ck_assert_str_eq(out->op, "dense_fwd");
    ck_assert_int_eq(out->n_inputs, 3);
    ck_assert_str_eq(out->inputs[2], "input.2");
    ck_assert_int_eq(out->ndim, 2);
    ck_assert_int_eq(out->dim[0], 7);
    ck_assert_int_eq(out->dim[1], 17);
    ck_assert_str_eq(t.header.case_name, "test_run");
    ck_assert_str_eq(t.header.family, "det");

    /* input 0 is the RNG's stream SB_STREAM_CASE_INPUT + 0 in [-1, 1) */
    float *x = malloc(sizeof(float) * 7 * 301);
    sb_rng_fill_uniform(x, 7 * 301, -1.0f, 1.0f, 7, SB_STREAM_CASE_INPUT, 0);
    sb_tensor xt = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {7, 301}, .data = x};
    sb_hash h = sb_hash_tensor(&xt);
    ck_assert(sb_hash_equal(&h, &t.records[0].hash));
    free(x);
    sb_trace_free(&t);
}
END_TEST

/* Dumps of one probe into a fresh directory; the caller removes it. */
static void dump_run(const sb_case *c, const char *probe, char *dir, sb_trace *t)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    sb_run_options o = {.dump_probe = probe, .dump_step = 0, .dump_dir = dir};
    run_at(c, 2, t, &o);
}

static sb_tensor npy_load(const char *dir, const char *file)
{
    char path[256], err[256] = "";
    snprintf(path, sizeof path, "%s/%s", dir, file);
    sb_tensor t;
    ck_assert_msg(sb_npy_read(path, &t, err, sizeof err) == SB_OK, "%s", err);
    unlink(path);
    return t;
}

START_TEST(dump_writes_probe_bound_and_inputs)
{
    sb_case c = kernel_case(SB_OP_xent_loss, SB_FAMILY_DET);
    char dir[] = "/tmp/samebits.test_run.XXXXXX";
    sb_trace t;
    dump_run(&c, "xent_loss.out0", dir, &t);

    sb_tensor out = npy_load(dir, "xent_loss.out0.npy");
    sb_tensor bound = npy_load(dir, "xent_loss.out0.bound.npy");
    sb_tensor logits = npy_load(dir, "xent_loss.out0.in0.npy");
    sb_tensor labels = npy_load(dir, "xent_loss.out0.in1.npy");
    /* the precision test's files (harness/NUMERICS.md): det's loss is
     * within the probabilistic floor of double precision, as is ref's */
    sb_tensor err_own = npy_load(dir, "xent_loss.out0.err.npy");
    sb_tensor err_seq = npy_load(dir, "xent_loss.out0.seqerr.npy");
    sb_tensor floor = npy_load(dir, "xent_loss.out0.floor.npy");
    ck_assert_int_eq(rmdir(dir), 0);    /* nothing else was written */
    ck_assert_uint_eq(sb_tensor_count(&floor), 1);
    const float fl = ((const float *)floor.data)[0];
    ck_assert(fl > 0.0f && fl < 1e-4f);
    ck_assert(((const float *)err_own.data)[0] <= fl);
    ck_assert(((const float *)err_seq.data)[0] <= fl);
    free(err_own.data);
    free(err_seq.data);
    free(floor.data);

    /* the dump is the probed tensor: same hash as its record */
    sb_hash h = sb_hash_tensor(&out);
    ck_assert(sb_hash_equal(&h, &t.records[t.n_records - 1].hash));
    /* a loss over random logits is finite and positive; its bound too */
    float loss = ((float *)out.data)[0], b = ((float *)bound.data)[0];
    ck_assert(isfinite(loss) && loss > 0);
    ck_assert(isfinite(b) && b > 0);
    ck_assert_int_eq(logits.dtype, SB_DTYPE_F32);
    ck_assert_int_eq(labels.dtype, SB_DTYPE_I32);
    ck_assert_uint_eq(sb_tensor_count(&labels), 37);
    for (size_t i = 0; i < 37; i++) {
        int32_t y = ((int32_t *)labels.data)[i];
        ck_assert(y >= 0 && y < 10);
    }
    free(out.data);
    free(bound.data);
    free(logits.data);
    free(labels.data);
    sb_trace_free(&t);
}
END_TEST

START_TEST(optimiser_state_is_an_input_and_accumulators_are_nonnegative)
{
    sb_case c = kernel_case(SB_OP_adadelta_update, SB_FAMILY_DET);
    char dir[] = "/tmp/samebits.test_run.XXXXXX";
    sb_trace t;
    dump_run(&c, "adadelta_update.out1", dir, &t);
    /* inputs: gradient, then w, acc, delta_acc as they were before the update */
    ck_assert_uint_eq(t.n_records, 4 + 3);
    sb_tensor bound = npy_load(dir, "adadelta_update.out1.bound.npy");
    sb_tensor in[4];
    for (int i = 0; i < 4; i++) {
        char file[64];
        snprintf(file, sizeof file, "adadelta_update.out1.in%d.npy", i);
        in[i] = npy_load(dir, file);
    }
    free(npy_load(dir, "adadelta_update.out1.npy").data);
    ck_assert_int_eq(rmdir(dir), 0);
    bool negative_weight = false;
    for (size_t j = 0; j < 1000; j++) {
        /* no reduction: the bound is exactly 0 */
        ck_assert_uint_eq(((uint32_t *)bound.data)[j], 0);
        float w = ((float *)in[1].data)[j];
        ck_assert(w >= -1.0f && w < 1.0f);
        negative_weight |= w < 0;
        for (int i = 2; i < 4; i++) {
            float a = ((float *)in[i].data)[j];
            ck_assert(a >= 0.0f && a < 1.0f);
        }
    }
    ck_assert(negative_weight);
    for (int i = 0; i < 4; i++)
        free(in[i].data);
    free(bound.data);
    sb_trace_free(&t);
}
END_TEST

START_TEST(dump_of_a_probe_that_never_comes_is_input_error)
{
    sb_case c = kernel_case(SB_OP_dense_fwd, SB_FAMILY_DET);
    char dir[] = "/tmp/samebits.test_run.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    sb_run_options o = {.threads = 1, .dump_probe = "dense_fwd.out0", .dump_step = 3,
                        .dump_dir = dir};
    sb_trace t;
    sb_trace_init(&t);
    char err[256] = "";
    ck_assert_int_eq(sb_run_case(&c, &o, &t, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, "never happened"));
    ck_assert_int_eq(rmdir(dir), 0);
    sb_trace_free(&t);
}
END_TEST

/* A dump folder that is not there yet is made, with its missing parents. */
START_TEST(dump_makes_its_folder)
{
    sb_case c = kernel_case(SB_OP_xent_loss, SB_FAMILY_DET);
    char top[] = "/tmp/samebits.test_run.XXXXXX", parent[64], dir[96];
    ck_assert_ptr_nonnull(mkdtemp(top));
    snprintf(parent, sizeof parent, "%s/new", top);
    snprintf(dir, sizeof dir, "%s/dumps", parent);
    sb_run_options o = {.dump_probe = "xent_loss.out0", .dump_step = 0, .dump_dir = dir};
    sb_trace t;
    run_at(&c, 1, &t, &o);
    char path[160];
    static const char *const files[] = {"xent_loss.out0.npy", "xent_loss.out0.bound.npy",
                                        "xent_loss.out0.in0.npy", "xent_loss.out0.in1.npy",
                                        "xent_loss.out0.err.npy", "xent_loss.out0.seqerr.npy",
                                        "xent_loss.out0.floor.npy"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        ck_assert_int_eq(unlink(path), 0);
    }
    ck_assert_int_eq(rmdir(dir), 0);
    ck_assert_int_eq(rmdir(parent), 0);
    ck_assert_int_eq(rmdir(top), 0);
    sb_trace_free(&t);
}
END_TEST

/* A training case hashed through the model's leaf digests (the default)
 * gives the trace of hashing every tensor after its op, at 1 and 2 threads.
 * The short seed case, cut to batch 8 and 1 step so that it stays cheap
 * under the sanitizers; its large tensors still span several leaves, the
 * last one short (conv1.fwd.out 2.6 leaves, conv2.fwd.out 4.5). The determinism suite checks the whole
 * case against its golden, which was written without leaf digests. */
START_TEST(fused_hashing_gives_the_unfused_trace)
{
    sb_case c;
    char err[512];
    ck_assert_msg(sb_case_load(&c, "cases/keras_mnist_cnn_short.case", err, sizeof err) == SB_OK,
                  "%s", err);
    c.train.batch = 8;
    c.train.max_steps = 1;
    c.test_end = c.test_begin + 8;
    sb_trace unfused, fused;
    const sb_run_options no_fuse = {.no_fused_hash = true};
    run_at(&c, 1, &unfused, &no_fuse);
    ck_assert_uint_gt(unfused.n_records, 50);
    for (int threads = 1; threads <= 2; threads++) {
        run_at(&c, threads, &fused, NULL);
        traces_equal(&unfused, &fused);
        sb_trace_free(&fused);
    }
    sb_trace_free(&unfused);
}
END_TEST

/* A sink that did not hand out the leaf hash (a user's program) hashes the
 * tensor itself, whatever digests a probe brings. */
START_TEST(untrusted_leaf_digests_are_ignored)
{
    float v[3] = {1, 2, 3};
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {3}, .data = v};
    sb_leaf_digest bogus = {{0}};
    sb_probe_point p = {.name = "x", .op = "source", .tensor = &x, .leaves = &bogus};
    sb_trace t;
    sb_trace_init(&t);
    sb_run_options o = {0};
    sb_run_sink sink;
    sb_run_sink_init(&sink, &t, &o);
    sb_run_sink_probe(&sink, &p);
    ck_assert_int_eq(sink.status, SB_OK);
    sb_hash want = sb_hash_tensor(&x);
    ck_assert(sb_hash_equal(&t.records[0].hash, &want));
    sink.trust_leaves = true; /* as sb_run_case does for its own model */
    sb_run_sink_probe(&sink, &p);
    ck_assert(!sb_hash_equal(&t.records[1].hash, &want));
    sb_trace_free(&t);
}
END_TEST

Suite *make_run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("run");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, det_same_trace_at_1_and_3_threads);
    tcase_add_test(tc, probes_name_inputs_and_outputs);
    tcase_add_test(tc, dump_writes_probe_bound_and_inputs);
    tcase_add_test(tc, optimiser_state_is_an_input_and_accumulators_are_nonnegative);
    tcase_add_test(tc, dump_of_a_probe_that_never_comes_is_input_error);
    tcase_add_test(tc, dump_makes_its_folder);
    tcase_add_test(tc, fused_hashing_gives_the_unfused_trace);
    tcase_add_test(tc, untrusted_leaf_digests_are_ignored);
    suite_add_tcase(s, tc);
    return s;
}
