/* Traces: building from probe points, text round trip, strict reading. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sb_harness.h"

Suite *make_trace_suite(void);

static char dir[64];

/* Exact equality of doubles, bit for bit (what a round trip must give). */
static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/sb_test_trace.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.trace", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/again.trace", dir);
    unlink(path);
    rmdir(dir);
}

static float conv_out[2 * 3 * 4 * 5];
static int32_t labels[7] = {1, 2, 3, 4, 5, 6, 7};
static float loss = 2.3025851f;

static void add(sb_trace *t, int64_t step, const char *name, const char *op, const sb_tensor *x,
                const char *const *inputs, int n_inputs)
{
    sb_probe_point p = {.step = step, .name = name, .op = op, .tensor = x,
                        .inputs = inputs, .n_inputs = n_inputs};
    ck_assert_int_eq(sb_trace_add_probe(t, &p), SB_OK);
}

/* A small trace covering every field form: 4-D, 1-D i32, scalar, inputs
 * none / one / several, and two epochs of metrics. */
static void build(sb_trace *t)
{
    sb_trace_init(t);
    sb_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "unit_trace");
    snprintf(c.digest, sizeof c.digest, "00112233445566778899aabbccddeeff");
    c.family = SB_FAMILY_DET;
    sb_trace_header_from_case(&t->header, &c, 4);

    for (int i = 0; i < 120; i++)
        conv_out[i] = (float)i * 0.5f - 7.0f;
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 4, .dim = {2, 3, 4, 5}, .data = conv_out};
    sb_tensor y = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {7}, .data = labels};
    sb_tensor s = {.dtype = SB_DTYPE_F32, .ndim = 0, .data = &loss};
    static const char *const one[] = {"input.images"};
    /* the loss also reads a constant no traced op made */
    static const char *const two[] = {"conv1.fwd.out", "input.labels", SB_TRACE_UNTRACED};
    add(t, 0, "input.images", "source", &x, NULL, 0);
    add(t, 0, "input.labels", "source", &y, NULL, 0);
    add(t, 1, "conv1.fwd.out", "conv2d_fwd", &x, one, 1);
    add(t, 1, "loss", "xent_loss", &s, two, 3);
    add(t, 2, "conv1.fwd.out", "conv2d_fwd", &x, one, 1);

    sb_epoch_metrics m1 = {1, 469, (double)0.0600000024f, (double)0.3f, (double)0.98f};
    sb_epoch_metrics m2 = {2, 938, 1e-30, (double)NAN, 1.0};
    ck_assert_int_eq(sb_trace_add_metrics(t, &m1), SB_OK);
    ck_assert_int_eq(sb_trace_add_metrics(t, &m2), SB_OK);
}

static void write_file(const char *path, const sb_trace *t)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sb_trace_write(t, f), SB_OK);
    ck_assert_int_eq(fclose(f), 0);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *copy = malloc(n + 1);
    memcpy(copy, buf, n + 1);
    return copy;
}

START_TEST(round_trip)
{
    make_dir();
    sb_trace t, back;
    build(&t);
    char path[128], again[128], err[256];
    snprintf(path, sizeof path, "%s/t.trace", dir);
    snprintf(again, sizeof again, "%s/again.trace", dir);
    write_file(path, &t);
    ck_assert_int_eq(sb_trace_read(&back, path, err, sizeof err), SB_OK);

    ck_assert_int_eq(back.header.version, SB_TRACE_FORMAT_VERSION);
    ck_assert_str_eq(back.header.case_name, "unit_trace");
    ck_assert_str_eq(back.header.case_digest, "00112233445566778899aabbccddeeff");
    ck_assert_str_eq(back.header.family, "det");
    ck_assert_int_eq(back.header.threads, 4);
    ck_assert_str_eq(back.header.samebits_version, t.header.samebits_version);
    ck_assert_str_eq(back.header.build, t.header.build);
    ck_assert_uint_eq(back.n_records, t.n_records);
    for (size_t i = 0; i < t.n_records; i++) {
        const sb_record *a = &t.records[i], *b = &back.records[i];
        ck_assert_int_eq(a->step, b->step);
        ck_assert_str_eq(a->name, b->name);
        ck_assert_str_eq(a->op, b->op);
        ck_assert_int_eq(a->dtype, b->dtype);
        ck_assert_int_eq(a->ndim, b->ndim);
        for (int d = 0; d < a->ndim; d++)
            ck_assert_int_eq(a->dim[d], b->dim[d]);
        ck_assert(sb_hash_equal(&a->hash, &b->hash));
        ck_assert_int_eq(a->n_inputs, b->n_inputs);
        for (int k = 0; k < a->n_inputs; k++)
            ck_assert_str_eq(a->inputs[k], b->inputs[k]);
    }
    /* Metrics are kept at float precision, which %.9g holds exactly; NaN
     * comes back as NaN. */
    ck_assert_int_eq(back.n_metrics, 2);
    ck_assert_int_eq(back.metrics[0].epoch, 1);
    ck_assert_int_eq(back.metrics[0].steps, 469);
    ck_assert(same_bits(back.metrics[0].train_loss, (double)0.0600000024f));
    ck_assert(same_bits(back.metrics[0].test_loss, (double)0.3f));
    ck_assert(same_bits(back.metrics[0].test_accuracy, (double)0.98f));
    ck_assert(same_bits(back.metrics[1].train_loss, (double)1e-30f)); /* rounded to float */
    ck_assert(isnan(back.metrics[1].test_loss));
    ck_assert(same_bits(back.metrics[1].test_accuracy, 1.0));

    /* The text form is a fixed point: read then write gives the same bytes. */
    write_file(again, &back);
    char *a = slurp(path), *b = slurp(again);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_nonnull(strstr(a, "\n1 conv1.fwd.out conv2d_fwd f32 2x3x4x5 "));
    ck_assert_ptr_nonnull(strstr(a, " input.images\n"));
    ck_assert_ptr_nonnull(strstr(a, "\n1 loss xent_loss f32 scalar "));
    ck_assert_ptr_nonnull(strstr(a, " conv1.fwd.out,input.labels,?\n"));
    ck_assert_ptr_nonnull(strstr(a, "\n0 input.labels source i32 7 "));
    ck_assert_ptr_nonnull(strstr(a, "\nend 5 2\n"));
    ck_assert(strncmp(a, "samebits-trace 1\ncase unit_trace\n", 33) == 0);
    free(a);
    free(b);
    sb_trace_free(&t);
    sb_trace_free(&back);
    remove_dir();
}
END_TEST

START_TEST(add_probe_copies_and_checks)
{
    sb_trace t;
    sb_trace_init(&t);
    char name[32] = "dense1.fwd.out", op[32] = "dense_fwd", in0[32] = "flatten.out";
    const char *inputs[] = {in0};
    float v[3] = {1, 2, 3};
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {3}, .data = v};
    add(&t, 3, name, op, &x, inputs, 1);
    strcpy(name, "changed");
    strcpy(op, "changed");
    strcpy(in0, "changed");
    ck_assert_str_eq(t.records[0].name, "dense1.fwd.out");
    ck_assert_str_eq(t.records[0].op, "dense_fwd");
    ck_assert_str_eq(t.records[0].inputs[0], "flatten.out");
    sb_hash h = sb_hash_tensor(&x);
    ck_assert(sb_hash_equal(&t.records[0].hash, &h));

    /* Names that the text form could not hold are refused, nothing appended. */
    static const char *const bad_names[] = {"has space", "has,comma", "-", ""};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        sb_probe_point p = {.step = 4, .name = bad_names[i], .op = "relu_fwd", .tensor = &x};
        ck_assert_int_eq(sb_trace_add_probe(&t, &p), SB_ERR_USAGE);
        const char *bad_in[] = {bad_names[i]};
        sb_probe_point q = {.step = 4, .name = "ok", .op = "relu_fwd", .tensor = &x,
                            .inputs = bad_in, .n_inputs = 1};
        ck_assert_int_eq(sb_trace_add_probe(&t, &q), SB_ERR_USAGE);
    }
    sb_probe_point neg = {.step = -1, .name = "ok", .op = "relu_fwd", .tensor = &x};
    ck_assert_int_eq(sb_trace_add_probe(&t, &neg), SB_ERR_USAGE);
    ck_assert_uint_eq(t.n_records, 1);
    sb_trace_free(&t);
    ck_assert_uint_eq(t.n_records, 0);
    ck_assert_ptr_null(t.records);
}
END_TEST

/* An int64 record (another producer's tokens) reads back as i64, and its
 * hash is not that of the same values as int32. */
START_TEST(int64_records)
{
    make_dir();
    sb_trace t, back;
    build(&t);
    int64_t tokens[3] = {5, -1, (int64_t)1 << 40};
    int32_t narrow[3] = {5, -1, 0};
    sb_tensor z = {.dtype = SB_DTYPE_I64, .ndim = 1, .dim = {3}, .data = tokens};
    sb_tensor zi = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {3}, .data = narrow};
    tokens[2] = 0;
    sb_hash h64 = sb_hash_tensor(&z), h32 = sb_hash_tensor(&zi);
    ck_assert(!sb_hash_equal(&h64, &h32));
    tokens[2] = (int64_t)1 << 40;
    add(&t, 3, "batch.tokens", "source", &z, NULL, 0);
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/t.trace", dir);
    write_file(path, &t);
    char *text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "\n3 batch.tokens source i64 3 "));
    free(text);
    ck_assert_int_eq(sb_trace_read(&back, path, err, sizeof err), SB_OK);
    const sb_record *r = &back.records[back.n_records - 1];
    ck_assert_int_eq(r->dtype, SB_DTYPE_I64);
    sb_hash h = sb_hash_tensor(&z);
    ck_assert(sb_hash_equal(&r->hash, &h));
    sb_trace_free(&t);
    sb_trace_free(&back);
    remove_dir();
}
END_TEST

START_TEST(find_latest)
{
    sb_trace t;
    build(&t);
    /* records: 0 input.images, 1 input.labels, 2 conv1, 3 loss, 4 conv1 */
    ck_assert_int_eq(sb_trace_find_latest(&t, "conv1.fwd.out", 5), 4);
    ck_assert_int_eq(sb_trace_find_latest(&t, "conv1.fwd.out", 4), 2);
    ck_assert_int_eq(sb_trace_find_latest(&t, "conv1.fwd.out", 2), -1);
    ck_assert_int_eq(sb_trace_find_latest(&t, "input.images", 1000), 0);
    ck_assert_int_eq(sb_trace_find_latest(&t, "nowhere", 5), -1);
    ck_assert_int_eq(sb_trace_find_latest(&t, "input.images", 0), -1);
    sb_trace_free(&t);
}
END_TEST

/* Appends (step, name, op) reading inputs[0..n). */
static void graph_add(sb_trace *t, int64_t step, const char *name, const char *op,
                      const char *const *inputs, int n)
{
    float v = 1.0f;
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {1}, .data = &v};
    sb_probe_point p = {.step = step, .name = name, .op = op, .tensor = &x, .inputs = inputs,
                        .n_inputs = n};
    ck_assert_int_eq(sb_trace_add_probe(t, &p), SB_OK);
}

/* The probe graph: inputs probed earlier (or untraced), a name once a step,
 * an op on every record; an external input a warning when allowed. */
START_TEST(probe_graph)
{
    char err[256] = "";
    sb_trace t;
    sb_trace_init(&t);
    graph_add(&t, 0, "x", "source", NULL, 0);
    graph_add(&t, 0, "y", "relu_fwd", (const char *[]){"x", SB_TRACE_UNTRACED}, 2);
    graph_add(&t, 1, "y", "relu_fwd", (const char *[]){"y"}, 1);
    ck_assert_int_eq(sb_trace_check_graph(&t, false, NULL, err, sizeof err), SB_OK);

    graph_add(&t, 1, "z", "relu_fwd", (const char *[]){"y", "w"}, 2);
    ck_assert_int_eq(sb_trace_check_graph(&t, false, NULL, err, sizeof err), SB_ERR_INPUT);
    ck_assert_str_eq(err, "step 1 probe z: input w is no earlier probe of the run "
                          "(misspelt, or never probed?)");
    FILE *warn = tmpfile();
    ck_assert_ptr_nonnull(warn);
    ck_assert_int_eq(sb_trace_check_graph(&t, true, warn, err, sizeof err), SB_OK);
    char line[256] = "";
    rewind(warn);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, warn));
    ck_assert_str_eq(line, "warning: step 1 probe z: input w is no earlier probe of the run "
                           "(misspelt, or never probed?)\n");
    fclose(warn);

    /* an input named only later is not an earlier probe */
    graph_add(&t, 1, "w", "source", NULL, 0);
    ck_assert_int_eq(sb_trace_check_graph(&t, false, NULL, err, sizeof err), SB_ERR_INPUT);
    sb_trace_free(&t);

    sb_trace_init(&t);
    graph_add(&t, 0, "x", "source", NULL, 0);
    graph_add(&t, 2, "y", "relu_fwd", (const char *[]){"x"}, 1);
    graph_add(&t, 2, "y", "relu_fwd", (const char *[]){"x"}, 1);
    ck_assert_int_eq(sb_trace_check_graph(&t, true, NULL, err, sizeof err), SB_ERR_INPUT);
    ck_assert_str_eq(err, "step 2 probe y: a second probe of that name in the step "
                          "(is its step right?)");
    sb_trace_free(&t);

    sb_trace_init(&t);
    graph_add(&t, 3, "x", "source", NULL, 0);
    t.records[0].op[0] = '\0';
    ck_assert_int_eq(sb_trace_check_graph(&t, true, NULL, err, sizeof err), SB_ERR_INPUT);
    ck_assert_str_eq(err, "step 3 probe x: no op (the op's name, or \"source\")");
    sb_trace_free(&t);
}
END_TEST

/* A good trace with line `line` (1-based) replaced by `text` (NULL: deleted;
 * line 0: `text` appended raw at the end). */
static void write_variant(const char *path, const char *good, int line, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    int n = 1;
    for (const char *s = good; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = (size_t)(nl - s) + 1;
        if (n == line) {
            if (text)
                fprintf(f, "%s\n", text);
        } else {
            fwrite(s, 1, len, f);
        }
        s += len;
        n++;
    }
    if (line == 0)
        fputs(text, f);
    fclose(f);
}

/* Metrics are kept at float precision, each of them: 2.27364071 is no
 * float, and a metric kept as it is would be written with digits the
 * reader refuses. */
START_TEST(metrics_at_float_precision)
{
    sb_trace t;
    sb_trace_init(&t);
    const double v = 2.27364071;
    sb_epoch_metrics m = {.epoch = 1, .steps = 3, .train_loss = v, .test_loss = v,
                          .test_accuracy = v};
    ck_assert_int_eq(sb_trace_add_metrics(&t, &m), SB_OK);
    const double want = (double)(float)v;
    ck_assert(memcmp(&want, &v, sizeof v) != 0);
    ck_assert(memcmp(&t.metrics[0].train_loss, &want, sizeof want) == 0);
    ck_assert(memcmp(&t.metrics[0].test_loss, &want, sizeof want) == 0);
    ck_assert(memcmp(&t.metrics[0].test_accuracy, &want, sizeof want) == 0);
    sb_trace_free(&t);
}
END_TEST

START_TEST(malformed_lines)
{
    /* Lines of the good file: 1 magic, 2 case, 3 digest, 4 samebits,
     * 5 reference, 6 build, 7-11 records, 12-13 epochs, 14 end. */
    static const struct {
        int line;
        const char *text;
        int err_line;
        const char *says;
    } bad[] = {
        {1, "samebits-trace 2", 1, "format version 1"},
        {1, "samebits-golden 1", 1, "the magic line"},
        {3, "digest 0011", 3, "digest <32 lowercase hex digits>"},
        {2, "case two words", 2, "\"case <value>\""},
        {5, "reference det 0", 5, "reference <ref|det|loose|user>"},
        {5, "reference fast 1", 5, "reference <ref|det|loose|user>"},
        {6, "build", 6, "build <compiler"},
        {7, "0 input.images source f32 2x3x4x5 00112233445566778899aabbccddeeff", 7, "7 fields"},
        {7, "0  input.images source f32 2x3 00112233445566778899aabbccddeeff -", 7, "7 fields"},
        {7, "01 input.images source f32 2x3 00112233445566778899aabbccddeeff -", 7, "a step"},
        {7, "0 input.images source f64 2x3 00112233445566778899aabbccddeeff -", 7, "a dtype"},
        {7, "0 input.images source f32 2x3 00112233445566778899AABBCCDDEEFF -", 7, "lowercase"},
        {7, "0 input.images source f32 2x3x 00112233445566778899aabbccddeeff -", 7, "a shape"},
        {7, "0 input.images source f32 1x2x3x4x5 00112233445566778899aabbccddeeff -", 7, "a shape"},
        {7, "0 input.images source f32 2x3 00112233445566778899aabbccddeef -", 7, "a hash"},
        {7, "0 input.images source f32 2x3 00112233445566778899aabbccddeeff a,,b", 7, "inputs"},
        {7, "0 ? source f32 2x3 00112233445566778899aabbccddeeff -", 7, "a probe name"},
        {7, "-1 input.images source f32 2x3 00112233445566778899aabbccddeeff -", 7, "a record"},
        {7, "", 7, "a record"},
        {12, "epoch 1 steps 469 train_loss x test_loss 1 test_accuracy 1", 12, "epoch E steps S"},
        {12, "epoch 0 steps 469 train_loss 1 test_loss 1 test_accuracy 1", 12, "epoch E steps S"},
        {13, "1 late.record relu_fwd f32 3 00112233445566778899aabbccddeeff -", 13,
         "records come before metrics"},
        {14, "end 4 2", 14, "\"end 5 2\""},
        {14, NULL, 14, "file truncated?"},
        {0, "trailing\n", 15, "nothing after"},
        {0, "end 5 2\n", 15, "nothing after"},
    };
    make_dir();
    sb_trace t;
    build(&t);
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/t.trace", dir);
    write_file(path, &t);
    char *good = slurp(path);
    sb_trace_free(&t);

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_variant(path, good, bad[i].line, bad[i].text);
        sb_trace back;
        memset(&back, 0x5a, sizeof back);
        err[0] = '\0';
        ck_assert_int_eq(sb_trace_read(&back, path, err, sizeof err), SB_ERR_INPUT);
        char prefix[160];
        snprintf(prefix, sizeof prefix, "%s:%d: expected ", path, bad[i].err_line);
        ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "case %zu: \"%s\"", i, err);
        ck_assert_msg(strstr(err, bad[i].says) != NULL, "case %zu: \"%s\"", i, err);
        /* nothing half filled */
        ck_assert_uint_eq(back.n_records, 0);
        ck_assert_ptr_null(back.records);
        ck_assert_int_eq(back.n_metrics, 0);
        ck_assert_ptr_null(back.metrics);
    }

    /* A last line cut short (no newline) is named by its own line. */
    size_t len = strlen(good);
    FILE *f = fopen(path, "w");
    fwrite(good, 1, len - 3, f);
    fclose(f);
    sb_trace back;
    ck_assert_int_eq(sb_trace_read(&back, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":14: expected a line ending in a newline"));

    free(good);
    unlink(path);
    ck_assert_int_eq(sb_trace_read(&back, path, err, sizeof err), SB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    remove_dir();
}
END_TEST

static void text_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The run sink's stream holds every record as the trace does, and the op
 * last started; reading it back gives both. */
START_TEST(stream_round_trip)
{
    make_dir();
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/t.trace", dir);
    sb_run_options o = {.stream_path = path};
    sb_trace t;
    sb_trace_init(&t);
    sb_run_sink sink;
    sb_run_sink_init(&sink, &t, &o);
    ck_assert_int_eq(sink.status, SB_OK);
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 4, .dim = {2, 3, 4, 5}, .data = conv_out};
    static const char *const one[] = {"input.images"};
    sb_probe_point src = {.step = 0, .name = "input.images", .op = "source", .tensor = &x};
    sb_probe_point conv = {.step = 1, .name = "conv1.fwd.out", .op = "conv2d_fwd", .tensor = &x,
                           .inputs = one, .n_inputs = 1};
    sb_run_sink_probe(&sink, &src);
    sb_run_sink_op_start(&sink, 1, "conv1.fwd.out", "conv2d_fwd");
    sb_run_sink_probe(&sink, &conv);

    sb_trace back;
    sb_crash_site site;
    ck_assert_int_eq(sb_trace_stream_read(&back, &site, path, err, sizeof err), SB_OK);
    ck_assert_uint_eq(back.n_records, 2);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_str_eq(back.records[i].name, t.records[i].name);
        ck_assert(sb_hash_equal(&back.records[i].hash, &t.records[i].hash));
    }
    ck_assert_str_eq(back.records[1].inputs[0], "input.images");
    /* the op that started made its probe: it did not die in it */
    ck_assert(site.streamed && !site.in_op);
    ck_assert_str_eq(site.after, "conv1.fwd.out");
    ck_assert_int_eq(site.step, 1);
    sb_trace_free(&back);

    /* an op that starts and never makes its probe */
    sb_run_sink_op_start(&sink, 2, "relu1.fwd.out", "relu_fwd");
    ck_assert_int_eq(sb_trace_stream_read(&back, &site, path, err, sizeof err), SB_OK);
    ck_assert(site.in_op);
    ck_assert_int_eq(site.step, 2);
    ck_assert_str_eq(site.op, "relu_fwd");
    ck_assert_str_eq(site.probe, "relu1.fwd.out");
    ck_assert_str_eq(site.after, "conv1.fwd.out");
    sb_trace_free(&back);
    ck_assert_int_eq(sb_run_sink_finish(&sink, err, sizeof err), SB_OK);
    ck_assert_ptr_null(sink.stream);

    /* a stream is never read as a trace (nor a golden), and a trace is not a
     * stream */
    ck_assert_int_eq(sb_trace_read(&back, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":1: expected the magic line"));
    sb_trace whole;
    build(&whole);
    write_file(path, &whole);
    sb_trace_free(&whole);
    ck_assert_int_eq(sb_trace_stream_read(&back, &site, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":1: expected the magic line \"samebits-stream 1\""));
    ck_assert(!site.streamed);
    sb_trace_free(&t);

    /* a bad line is named by its number; a last line cut short is dropped */
    text_write(path, "samebits-stream 1\nstart 0 x\n");
    ck_assert_int_eq(sb_trace_stream_read(&back, &site, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":2: expected \"start <step> <probe> <op>\""));
    text_write(path, "samebits-stream 1\nepoch 1\n");
    ck_assert_int_eq(sb_trace_stream_read(&back, &site, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":2: expected a record"));
    text_write(path, "samebits-stream 1\nstart 3 x relu_fwd\n0 x rel");
    ck_assert_int_eq(sb_trace_stream_read(&back, &site, path, err, sizeof err), SB_OK);
    ck_assert_uint_eq(back.n_records, 0);
    ck_assert(site.in_op && site.step == 3);
    sb_trace_free(&back);
    unlink(path);
    ck_assert_int_eq(sb_trace_stream_read(&back, &site, path, err, sizeof err), SB_ERR_IO);
    remove_dir();
}
END_TEST

Suite *make_trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, add_probe_copies_and_checks);
    tcase_add_test(tc, find_latest);
    tcase_add_test(tc, int64_records);
    tcase_add_test(tc, probe_graph);
    tcase_add_test(tc, metrics_at_float_precision);
    tcase_add_test(tc, malformed_lines);
    tcase_add_test(tc, stream_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
