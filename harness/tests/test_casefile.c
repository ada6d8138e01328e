/* Case files: valid kernel and train cases, the digest, every error path. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb_harness.h"

Suite *make_casefile_suite(void);

static char repo[64];
static char cases_dir[96];
static char path[160];

static void setup(void)
{
    snprintf(repo, sizeof repo, "/tmp/sb_test_case.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(repo));
    snprintf(cases_dir, sizeof cases_dir, "%s/cases", repo);
    ck_assert_int_eq(mkdir(cases_dir, 0755), 0);
    snprintf(path, sizeof path, "%s/conv_small.case", cases_dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(cases_dir);
    rmdir(repo);
}

static void write_case(const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static const char *const kernel_case =
    "; conv forward at the model's first layer\n"
    "[case]\n"
    "kind = kernel\n"
    "family = det\n"
    "seed = 42\n"
    "\n"
    "[kernel]\n"
    "op = conv2d_fwd\n"
    "n = 8\n"
    "c = 1\n"
    "h = 28\n"
    "w = 28\n"
    "k = 32\n"
    "r = 3\n"
    "s = 3\n"
    "\n"
    "[sweep]\n"
    "threads = 1..4, 6, 8\n"
    "repeats = 2\n"
    "expect.8 = reordering\n";

START_TEST(valid_kernel_case)
{
    write_case(kernel_case);
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_eq(c.path, path);
    ck_assert_str_eq(c.name, "conv_small");
    ck_assert_int_eq(c.kind, SB_CASE_KERNEL);
    ck_assert_int_eq(c.family, SB_FAMILY_DET);
    ck_assert_uint_eq(c.seed, 42);
    ck_assert_int_eq(c.call.op, SB_OP_conv2d_fwd);
    ck_assert_int_eq(c.call.conv.n, 8);
    ck_assert_int_eq(c.call.conv.c, 1);
    ck_assert_int_eq(c.call.conv.h, 28);
    ck_assert_int_eq(c.call.conv.w, 28);
    ck_assert_int_eq(c.call.conv.k, 32);
    ck_assert_int_eq(c.call.conv.r, 3);
    ck_assert_int_eq(c.call.conv.s, 3);
    ck_assert_int_eq(c.call.conv.stride, 1); /* default */
    ck_assert_int_eq(c.call.conv.pad, 0);    /* default */
    ck_assert_int_eq(c.call.conv.p, 26);     /* described */
    ck_assert_int_eq(c.call.conv.q, 26);
    ck_assert_int_eq(c.call.n_in, 3);
    ck_assert_int_eq(c.call.out[0].dim[1], 32);
    static const int threads[] = {1, 2, 3, 4, 6, 8};
    ck_assert_int_eq(c.n_threads, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(c.threads[i], threads[i]);
    ck_assert_int_eq(c.repeats, 2);
    ck_assert_int_eq(c.reference_threads, 1);
    ck_assert(c.timeout_seconds > 599.999 && c.timeout_seconds < 600.001);
    ck_assert_int_eq(c.expect[1], SB_VERDICT_IDENTICAL);
    ck_assert_int_eq(c.expect[6], SB_VERDICT_IDENTICAL);
    ck_assert_int_eq(c.expect[8], SB_VERDICT_REORDERING);
    ck_assert_uint_eq(c.expect_set[8], SB_VERDICT_BIT(SB_VERDICT_REORDERING));
    ck_assert_uint_eq(c.expect_set[2], SB_VERDICT_BIT(SB_VERDICT_IDENTICAL));
    char golden[200];
    snprintf(golden, sizeof golden, "%s/golden/conv_small.golden", repo);
    ck_assert_str_eq(c.golden_path, golden);
    sb_hash h;
    ck_assert(sb_hash_parse(&h, c.digest));
}
END_TEST

/* [sweep] isa and env.NAME are environment axes, refused with their line
 * for a level of no name or a variable the harness sets itself. */
START_TEST(environment_axes)
{
    char text[1024];
    snprintf(text, sizeof text, "%sisa = all\nenv.OMP_SCHEDULE = static , dynamic\n",
             kernel_case);
    write_case(text);
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.n_env_axes, 2);
    ck_assert_str_eq(c.env_axes[0].name, "SAMEBITS_ISA");
    ck_assert_str_eq(c.env_axes[1].name, "OMP_SCHEDULE");
    ck_assert_int_eq(c.env_axes[1].n_values, 2);
    ck_assert_str_eq(c.env_axes[1].values[1], "dynamic");
    snprintf(text, sizeof text, "%sisa = avx2, sse4\n", kernel_case);
    write_case(text);
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":21: expected isa: all or a list"));
    snprintf(text, sizeof text, "%senv.OMP_NUM_THREADS = 1, 2\n", kernel_case);
    write_case(text);
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, ":21: expected env.NAME"));
    ck_assert_ptr_nonnull(strstr(err, "OMP_NUM_THREADS is set by the harness"));
}
END_TEST

/* expect takes a set of verdicts; expect[T] is its first member. */
START_TEST(expect_sets)
{
    char text[1024];
    snprintf(text, sizeof text, "%sexpect.6 = reordering|identical\n", kernel_case);
    write_case(text);
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.expect[6], SB_VERDICT_IDENTICAL);
    ck_assert_uint_eq(c.expect_set[6], SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) |
                                       SB_VERDICT_BIT(SB_VERDICT_REORDERING));
    ck_assert_uint_eq(c.expect_set[4], SB_VERDICT_BIT(SB_VERDICT_IDENTICAL));
}
END_TEST

START_TEST(valid_train_case)
{
    write_case("[case]\n"
               "name = mnist_adam\n"
               "kind = train\n"
               "family = loose\n"
               "seed = 7\n"
               "[train]\n"
               "model = keras_mnist_cnn\n"
               "dataset = fashion-mnist\n"
               "train = 0..600\n"
               "test = 9000..10000\n"
               "batch = 64\n"
               "epochs = 2\n"
               "optimizer = adam\n"
               "lr = 0.002\n"
               "beta2 = 0.99\n"
               "dropout1 = 0\n"
               "max_steps = 5\n"
               "[sweep]\n"
               "threads = 1,2,4,6,8\n"
               "timeout = 90.5\n"
               "reference_threads = 2\n"
               "expect = reordering\n"
               "expect.2 = identical\n"
               "golden = golden/other.golden\n");
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_eq(c.name, "mnist_adam");
    ck_assert_int_eq(c.kind, SB_CASE_TRAIN);
    ck_assert_int_eq(c.family, SB_FAMILY_LOOSE);
    ck_assert_str_eq(c.model, "keras_mnist_cnn");
    ck_assert_str_eq(c.dataset, "fashion-mnist");
    ck_assert_int_eq(c.train_begin, 0);
    ck_assert_int_eq(c.train_end, 600);
    ck_assert_int_eq(c.test_begin, 9000);
    ck_assert_int_eq(c.test_end, 10000);
    ck_assert_int_eq(c.train.batch, 64);
    ck_assert_int_eq(c.train.epochs, 2);
    ck_assert_uint_eq(c.train.seed, 7);
    ck_assert_int_eq(c.train.max_steps, 5);
    const float zero = 0.0f;
    ck_assert(memcmp(&c.train.dropout1, &zero, sizeof zero) == 0);
    /* untouched: the Keras example's default */
    sb_train_config defaults;
    sb_train_config_defaults(&defaults);
    ck_assert(memcmp(&c.train.dropout2, &defaults.dropout2, sizeof(float)) == 0);
    /* adam's Keras defaults, then the overrides */
    sb_optim_params adam;
    sb_optim_defaults(&adam, SB_OPTIM_ADAM);
    adam.lr = 0.002f;
    adam.beta2 = 0.99f;
    ck_assert_int_eq(c.train.optim.kind, SB_OPTIM_ADAM);
    ck_assert(memcmp(&c.train.optim.lr, &adam.lr, sizeof(float)) == 0);
    ck_assert(memcmp(&c.train.optim.beta1, &adam.beta1, sizeof(float)) == 0);
    ck_assert(memcmp(&c.train.optim.beta2, &adam.beta2, sizeof(float)) == 0);
    ck_assert(memcmp(&c.train.optim.epsilon, &adam.epsilon, sizeof(float)) == 0);
    ck_assert_int_eq(c.n_threads, 5);
    ck_assert_int_eq(c.threads[4], 8);
    ck_assert(c.timeout_seconds > 90.49 && c.timeout_seconds < 90.51);
    ck_assert_int_eq(c.reference_threads, 2);
    ck_assert_int_eq(c.expect[1], SB_VERDICT_REORDERING);
    ck_assert_int_eq(c.expect[2], SB_VERDICT_IDENTICAL);
    ck_assert_int_eq(c.expect[8], SB_VERDICT_REORDERING);
    char golden[200];
    snprintf(golden, sizeof golden, "%s/golden/other.golden", repo);
    ck_assert_str_eq(c.golden_path, golden);
}
END_TEST

static void digest_of(const char *text, char out[33])
{
    write_case(text);
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    memcpy(out, c.digest, 33);
}

START_TEST(digest_covers_what_decides_the_trace)
{
    char base[33], d[33];
    digest_of(kernel_case, base);

    /* Comments, blank lines, spacing, key and section order, [sweep] and
     * the name: no change. */
    digest_of("# a comment\n"
              "[sweep]\n"
              "threads=1,2\n"
              "expect = beyond-bound ; inline comment\n"
              "golden = elsewhere.golden\n"
              "[kernel]\n"
              "s=3\n"
              "r=3\n"
              "k   =   32\n"
              "w=28\n"
              "h=28\n"
              "c=1\n"
              "n=8\n"
              "op=conv2d_fwd\n"
              "stride = 1\n"
              "[case]\n"
              "seed=42\n"
              "family=det\n"
              "kind=kernel\n"
              "name = renamed\n",
              d);
    ck_assert_str_eq(d, base);

    /* Anything that changes the trace: a new digest. */
    static const struct {
        const char *from, *to;
    } edits[] = {
        {"n = 8\n", "n = 9\n"},
        {"seed = 42\n", "seed = 43\n"},
        {"family = det\n", "family = loose\n"},
        {"s = 3\n", "s = 3\npad = 1\n"},
        {"op = conv2d_fwd\n", "op = conv2d_bwd_data\n"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char text[1024];
        const char *at = strstr(kernel_case, edits[i].from);
        ck_assert_ptr_nonnull(at);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - kernel_case), kernel_case, edits[i].to,
                 at + strlen(edits[i].from));
        digest_of(text, d);
        ck_assert_msg(strcmp(d, base) != 0, "edit %zu kept the digest", i);
    }
}
END_TEST

/* A good case with one line replaced (line 0: text appended at the end). */
static void write_variant(const char *good, int line, const char *text)
{
    char out[2048] = "";
    int n = 1;
    for (const char *s = good; *s; n++) {
        const char *nl = strchr(s, '\n');
        size_t len = (size_t)(nl - s) + 1;
        if (n == line)
            strcat(out, text);
        else
            strncat(out, s, len);
        s += len;
    }
    if (line == 0)
        strcat(out, text);
    write_case(out);
}

/* A variant of a good case file: line `line` replaced by `text` (0: text
 * appended), refused with "path:err_line: expected ..." holding `says`,
 * and the case it was loaded into left untouched. */
typedef struct refusal {
    int line;
    const char *text;
    int err_line;
    const char *says;
} refusal;

static void refusals_check(const char *good, const refusal *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        write_variant(good, bad[i].line, bad[i].text);
        sb_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "untouched");
        char err[512] = "", prefix[256];
        ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_ERR_INPUT, "case %zu", i);
        snprintf(prefix, sizeof prefix, "%s:%d: expected ", path, bad[i].err_line);
        ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "case %zu: \"%s\"", i, err);
        ck_assert_msg(strstr(err, bad[i].says) != NULL, "case %zu: \"%s\"", i, err);
        ck_assert_str_eq(c.name, "untouched");
    }
}

START_TEST(errors_name_file_and_line)
{
    /* kernel_case lines: 2 [case], 3 kind, 4 family, 5 seed, 7 [kernel],
     * 8 op, 9 n, 10 c, 11 h, 13 k, 15 s, 17 [sweep], 18 threads, 19 repeats,
     * 20 expect.8 */
    static const refusal bad[] = {
        {0, "[extra]\nx = 1\n", 21, "found [extra]"},
        {0, "[kernel]\n", 21, "each section once ([kernel] is also on line 7)"},
        {3, "colour = blue\n", 3, "a key of [case] (name, kind, family, seed), found \"colour\""},
        {3, "\n", 2, "key kind (kernel, train or command) in [case]"},
        {3, "kind = model\n", 3, "kind as kernel, train or command"},
        {4, "family = fast\n", 4, "family as ref, det or loose, found \"fast\""},
        {5, "seed = 12x\n", 5, "seed as an integer in [0, 2^64)"},
        {5, "seed = -1\n", 5, "seed as an integer in [0, 2^64)"},
        {5, "seed = 99999999999999999999\n", 5, "seed as an integer in [0, 2^64)"},
        {5, "\n", 2, "key seed"},
        {8, "op = conv3d_fwd\n", 8, "op as an op of kernels/kernels.def, found \"conv3d_fwd\""},
        {8, "\n", 7, "key op"},
        {9, "n = 0\n", 9, "n as an integer in [1, 2147483647], found \"0\""},
        {9, "n = 8.5\n", 9, "n as an integer"},
        {9, "n = 99999999999999999999\n", 9, "n as an integer"},
        {9, "n = \n", 9, "n as an integer"},
        {13, "\n", 7, "key k in [kernel] (conv2d_fwd takes n c h w k r s stride pad)"},
        {13, "k = 32\nin = 4\n", 14, "a parameter of conv2d_fwd (n c h w k r s stride pad), found \"in\""},
        {15, "s = 30\n", 7, "a shape conv2d_fwd can run"},
        {15, "s = 3\nn = 4\n", 16, "each key once (n is also on line 9"},
        {15, "s = 3\nthis line has no equals sign\n", 16, "\"key = value\""},
        {18, "threads = 0\n", 18, "threads as counts in [1, 64]"},
        {18, "threads = 1..65\n", 18, "threads as counts in [1, 64]"},
        {18, "threads = 8..1\n", 18, "\"8..1\" is a reversed range: a..b and a-b need a <= b"},
        {18, "threads = 4-2\n", 18, "\"4-2\" is a reversed range"},
        {18, "threads = 1,2,2\n", 18, "each count once (2 is listed twice)"},
        {18, "threads = 1..4, 3-6\n", 18, "each count once (3 is listed twice)"},
        {18, "threads = 1,,2\n", 18, "threads as counts"},
        {18, "\n", 17, "key threads"},
        {19, "repeats = 0\n", 19, "repeats as an integer in [1, 1000]"},
        {19, "timeout = -1\n", 19, "timeout as a finite number"},
        {19, "timeout = nan\n", 19, "timeout as a finite number"},
        {19, "reference_threads = 65\n", 19, "reference_threads as an integer in [1, 64]"},
        {19, "expect = same\n", 19, "expect as identical, reordering, unbounded, beyond-bound, crash, timeout or nondeterministic"},
        {19, "expect = identical||reordering\n", 19, "expect as identical, reordering, unbounded, beyond-bound, crash, timeout or nondeterministic, or several joined by '|'"},
        {19, "expect.5 = identical\n", 19, "expect.<T> with T one of the thread counts"},
        {19, "expect.x = identical\n", 19, "expect.<T>"},
        {19, "golden_dir = x\n", 19, "a key of [sweep]"},
        {0, "[train]\nmodel = keras_mnist_cnn\n", 21, "no [train] section in a kind = kernel case"},
        {1, "stray = 1\n", 1, "a [section] line before the first key"},
    };
    refusals_check(kernel_case, bad, sizeof bad / sizeof bad[0]);

    /* No [sweep] at all: named at line 1, there is no better line. */
    const char *sweep = strstr(kernel_case, "[sweep]");
    char text[1024];
    snprintf(text, sizeof text, "%.*s", (int)(sweep - kernel_case), kernel_case);
    write_case(text);
    sb_case c;
    char err[512] = "", want[256];
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_ERR_INPUT);
    snprintf(want, sizeof want, "%s:1: expected a [sweep] section", path);
    ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
}
END_TEST

/* [sweep] threads reads the one thread-list grammar of the command too:
 * both range spellings, blanks around items, counts in the order written. */
START_TEST(threads_take_the_command_grammar)
{
    write_variant(kernel_case, 18, "threads = 2-3 ,\t6..7, 1\n");
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_ERR_INPUT, "%s", err);
    /* expect.8 names a count no longer listed */
    ck_assert_ptr_nonnull(strstr(err, "expect.<T> with T one of the thread counts"));
    write_variant(kernel_case, 18, "threads = 2-3 ,\t6..8, 1\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    static const int threads[] = {2, 3, 6, 7, 8, 1};
    ck_assert_int_eq(c.n_threads, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(c.threads[i], threads[i]);
}
END_TEST

/* A training case, 12 lines, for the variants of the error tests. */
static const char *const good_train = "[case]\n"          /* 1 */
                                      "kind = train\n"    /* 2 */
                                      "family = det\n"    /* 3 */
                                      "seed = 1\n"        /* 4 */
                                      "[train]\n"         /* 5 */
                                      "model = keras_mnist_cnn\n"
                                      "dataset = mnist\n" /* 7 */
                                      "train = 0..600\n"  /* 8 */
                                      "test = 9000..10000\n"
                                      "optimizer = sgd\n" /* 10 */
                                      "[sweep]\n"         /* 11 */
                                      "threads = 1..8\n"; /* 12 */

START_TEST(train_errors)
{
    const char *const good = good_train;
    static const refusal bad[] = {
        {8, "train = 600..0\n", 8, "train as begin..end with begin < end"},
        {8, "train = 5..5\n", 8, "begin < end"},
        {8, "train = -5..5\n", 8, "train as a sample range"},
        {8, "train = 0-600\n", 8, "train as a sample range"},
        {9, "\n", 5, "key test"},
        {10, "optimizer = lbfgs\n", 10, "optimizer as adadelta, sgd, rmsprop, adam or adamw"},
        {10, "optimizer = adamw\n", 10, "optimizer as adadelta, sgd, rmsprop or adam for model "
                                        "keras_mnist_cnn"},
        {10, "optimizer = adam\nweight_decay = 0.1\n", 11, "a key of [train]"},
        {10, "optimizer = sgd\nrho = 0.9\n", 11, "a key of [train]"},
        {10, "optimizer = sgd\nnesterov = yes\n", 11, "nesterov as true or false"},
        {10, "optimizer = sgd\nlr = 1e40\n", 11, "lr as a finite number"},
        {10, "optimizer = adam\nbeta1 = 1\n", 11, "beta1 as a finite number in [0, 1)"},
        {10, "dropout2 = 1\n", 10, "dropout2 as a finite number in [0, 1)"},
        {7, "dataset = cifar\n", 7, "dataset as mnist or fashion-mnist"},
        {6, "model = resnet\n", 6, "model as keras_mnist_cnn"},
        {6, "\n", 5, "key model"},
        {0, "[kernel]\nop = relu_fwd\n", 13, "no [kernel] section in a kind = train case"},
    };
    refusals_check(good, bad, sizeof bad / sizeof bad[0]);
    /* and the good one, with sgd's nesterov momentum */
    write_variant(good, 10, "optimizer = sgd\nmomentum = 0.9\nnesterov = true\n");
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.train.optim.kind, SB_OPTIM_SGD);
    ck_assert(c.train.optim.nesterov);
    ck_assert(c.train.optim.momentum > 0.89f && c.train.optim.momentum < 0.91f);
}
END_TEST

static const char *const good_gpt = "[case]\n"          /* 1 */
                                    "kind = train\n"    /* 2 */
                                    "family = det\n"    /* 3 */
                                    "seed = 1\n"        /* 4 */
                                    "[train]\n"         /* 5 */
                                    "model = char_gpt\n"
                                    "dataset = fortunes\n" /* 7 */
                                    "train = 0..1000\n" /* 8 */
                                    "test = 1000..2000\n"
                                    "steps = 5\n"       /* 10 */
                                    "[sweep]\n"         /* 11 */
                                    "threads = 1..8\n"; /* 12 */

/* char_gpt: its defaults, its own keys (and not the CNN's), adamw only, a
 * text data set, a [parallel] section; its digest lists its keys. */
START_TEST(gpt_train_case)
{
    const char *const good = good_gpt;
    write_variant(good, 0, "");
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_eq(c.model, "char_gpt");
    ck_assert_str_eq(c.dataset, "fortunes");
    ck_assert_int_eq(c.train.gpt.steps, 5);
    ck_assert_int_eq(c.train.gpt.layers, 2);
    ck_assert_int_eq(c.train.gpt.heads, 4);
    ck_assert_int_eq(c.train.gpt.width, 128);
    ck_assert_int_eq(c.train.gpt.context, 64);
    ck_assert_int_eq(c.train.batch, 16);
    ck_assert_int_eq(c.train.optim.kind, SB_OPTIM_ADAMW);
    ck_assert_int_eq(sb_case_train_steps(&c), 5);
    char plain[33];
    memcpy(plain, c.digest, 33);
    write_variant(good, 10, "steps = 5\nlayers = 3\nclip = 0.5\nweight_decay = 0.1\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.train.gpt.layers, 3);
    ck_assert(c.train.gpt.clip > 0.49f && c.train.gpt.clip < 0.51f);
    ck_assert(c.train.optim.weight_decay > 0.09f && c.train.optim.weight_decay < 0.11f);
    ck_assert_str_ne(c.digest, plain);
    write_variant(good, 0, "[invariance]\nbatch = 1,16\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.n_batch, 2);
    /* the data-parallel step: [parallel] is taken, and in the digest */
    write_variant(good, 0, "[parallel]\nranks = 1,2\nreduce = det\nchunk = 4\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.train.reduce, SB_REDUCE_DET);
    ck_assert_int_eq(c.train.chunk, 4);
    ck_assert_int_eq(c.n_ranks, 2);
    ck_assert_str_ne(c.digest, plain);

    static const refusal bad[] = {
        {10, "epochs = 2\n", 10, "a key of [train] for model char_gpt"},
        {10, "dropout1 = 0.1\n", 10, "a key of [train] for model char_gpt"},
        {10, "layers = 5\n", 10, "layers as an integer in [1, 4]"},
        {10, "heads = 0\n", 10, "heads as an integer in [1, 64]"},
        {10, "optimizer = adam\n", 10, "optimizer as adamw for model char_gpt"},
        {7, "dataset = mnist\n", 7, "dataset as fortunes (for model char_gpt)"},
        {6, "model = char_rnn\n", 6, "model as keras_mnist_cnn or char_gpt"},
    };
    refusals_check(good, bad, sizeof bad / sizeof bad[0]);
}
END_TEST

/* char_gpt's block keys: GPT-2's block when none is given (the digest as
 * without them, and still so when each is given its default), a
 * LLaMA-style block from norm, position, mlp, kv_heads and bias (in the
 * digest), and their errors naming their line. */
START_TEST(gpt_block_keys)
{
    const char *const good = good_gpt;
    write_variant(good, 0, "");
    sb_case c;
    char err[512] = "", plain[33], llama[33];
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    const sb_gpt_block_config *b = &c.train.gpt.block;
    ck_assert(b->norm == SB_GPT_LAYERNORM && b->position == SB_GPT_LEARNED &&
              b->mlp == SB_GPT_GELU && b->kv_heads == 0 && !b->no_bias);
    memcpy(plain, c.digest, 33);
    write_variant(good, 10, "steps = 5\nnorm = layernorm\nposition = learned\nmlp = gelu\n"
                            "bias = true\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_eq(c.digest, plain);
    write_variant(good, 10, "steps = 5\nnorm = rmsnorm\nposition = rope\nmlp = swiglu\n"
                            "kv_heads = 2\nbias = false\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert(b->norm == SB_GPT_RMSNORM && b->position == SB_GPT_ROPE &&
              b->mlp == SB_GPT_SWIGLU && b->kv_heads == 2 && b->no_bias);
    memcpy(llama, c.digest, 33);
    ck_assert_str_ne(llama, plain);
    write_variant(good, 10, "steps = 5\nkv_heads = 1\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_ne(c.digest, plain);
    ck_assert_str_ne(c.digest, llama);

    static const refusal bad[] = {
        {10, "norm = batchnorm\n", 10, "norm as layernorm or rmsnorm, found \"batchnorm\""},
        {10, "position = alibi\n", 10, "position as learned or rope"},
        {10, "mlp = geglu\n", 10, "mlp as gelu or swiglu"},
        {10, "kv_heads = 3\n", 10, "kv_heads dividing heads (4), found 3"},
        {10, "kv_heads = 0\n", 10, "kv_heads as an integer in [1, 64]"},
        {10, "bias = no\n", 10, "bias as true or false"},
        {10, "position = rope\nwidth = 96\nheads = 32\n", 10,
         "position = rope with an even head width (width / heads), found 3"},
    };
    refusals_check(good, bad, sizeof bad / sizeof bad[0]);
    /* the keys are char_gpt's: the CNN refuses them */
    write_variant(good_train, 10, "optimizer = sgd\nnorm = rmsnorm\n");
    ck_assert(sb_case_load(&c, path, err, sizeof err) != SB_OK);
    ck_assert_msg(strstr(err, "a key of [train] for model keras_mnist_cnn") != NULL, "%s", err);
}
END_TEST

/* [parallel]: its values, its place in the digest (reduce and chunk, not
 * ranks or expect), and its errors naming their line. */
START_TEST(parallel_section)
{
    const char *const good = good_train;
    write_variant(good, 0, "[parallel]\nranks = 1-4\nreduce = det\n");
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.n_ranks, 4);
    ck_assert_int_eq(c.ranks[3], 4);
    ck_assert_int_eq(c.train.reduce, SB_REDUCE_DET);
    ck_assert_int_eq(c.train.chunk, 16);
    ck_assert_uint_eq(c.expect_ranks[3], SB_VERDICT_BIT(SB_VERDICT_IDENTICAL));
    ck_assert_int_eq(c.run_ranks, 0);
    char det[33], plain[33], other_ranks[33], loose[33], chunk8[33];
    memcpy(det, c.digest, 33);
    write_variant(good, 0, "");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.n_ranks, 0);
    ck_assert_int_eq(c.train.reduce, SB_REDUCE_NONE);
    memcpy(plain, c.digest, 33);
    write_variant(good, 0, "[parallel]\nranks = 2\nreduce = det\nexpect = reordering\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_uint_eq(c.expect_ranks[2], SB_VERDICT_BIT(SB_VERDICT_REORDERING));
    memcpy(other_ranks, c.digest, 33);
    write_variant(good, 0, "[parallel]\nranks = 1-4\nreduce = loose\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.train.reduce, SB_REDUCE_LOOSE);
    memcpy(loose, c.digest, 33);
    write_variant(good, 0, "[parallel]\nranks = 1-4\nreduce = det\nchunk = 8\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.train.chunk, 8);
    memcpy(chunk8, c.digest, 33);
    ck_assert_str_eq(det, other_ranks);
    ck_assert_str_ne(det, plain);
    ck_assert_str_ne(det, loose);
    ck_assert_str_ne(det, chunk8);

    static const refusal bad[] = {
        {0, "[parallel]\nreduce = det\n", 13, "key ranks"},
        {0, "[parallel]\nranks = 1,17\nreduce = det\n", 14, "rank counts in [1, 16]"},
        {0, "[parallel]\nranks = 1,2\n", 13, "key reduce"},
        {0, "[parallel]\nranks = 1,2\nreduce = fast\n", 15, "reduce as det or loose"},
        {0, "[parallel]\nranks = 2\nreduce = det\nchunk = 0\n", 16, "chunk"},
        {0, "[parallel]\nranks = 2\nreduce = det\nrank = 2\n", 16, "a key of [parallel]"},
        {0, "[invariance]\nbatch = 1,16\n[parallel]\nranks = 2\nreduce = det\n", 15,
         "[parallel] or [invariance], not both"},
    };
    refusals_check(good, bad, sizeof bad / sizeof bad[0]);
}
END_TEST

START_TEST(kernel_ops_take_their_own_parameters)
{
    static const struct {
        const char *kernel;
        bool ok;
    } k[] = {
        {"op = dense_fwd\nn = 128\nin = 9216\nout = 128\n", true},
        {"op = maxpool_fwd\nn = 2\nc = 64\nh = 24\nw = 24\n", true},
        {"op = softmax_fwd\nn = 128\nk = 10\n", true},
        {"op = relu_bwd\nn = 1000\n", true},
        {"op = dropout_mask\nn = 1000\nrate = 0.25\n", true},
        {"op = dropout_mask\nn = 1000\n", false},
        {"op = adam_update\nn = 1000\nt = 3\nbeta1 = 0.8\n", true},
        {"op = adadelta_update\nn = 1000\nrho = 0.9\nepsilon = 1e-6\nlr = 1\n", true},
        {"op = adadelta_update\nn = 1000\nmomentum = 0.9\n", false},
        {"op = relu_fwd\nn = 1000000000000\n", false}, /* beyond 2^28 elements */
        {"op = maxpool_fwd\nn = 2\nc = 64\nh = 1\nw = 24\n", false},
        {"op = attention_bwd\nb = 16\nt = 64\nh = 4\nd = 32\n", true},
        {"op = attention_fwd\nb = 16\nt = 64\nh = 4\n", false},        /* d required */
        {"op = attention_fwd\nb = 1\nt = 16384\nh = 1\nd = 1\n", false}, /* scratch */
        {"op = grad_norm\nn = 800000\n", true},
        {"op = adamw_update\nn = 1000\nt = 7\nweight_decay = 0.1\ngrad_scale = 0.25\n", true},
        {"op = adamw_update\nn = 1000\ngrad_scale = 2\n", false},       /* a factor <= 1 */
        {"op = adamw_update\nn = 1000\ndecay = 0.1\n", false},          /* Keras's only */
        {"op = adam_update\nn = 1000\nweight_decay = 0.1\n", false},    /* adamw's only */
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "[case]\nkind = kernel\nfamily = ref\nseed = 3\n[kernel]\n%s"
                                    "[sweep]\nthreads = 1\n", k[i].kernel);
        write_case(text);
        sb_case c;
        char err[512] = "";
        sb_status st = sb_case_load(&c, path, err, sizeof err);
        ck_assert_msg((st == SB_OK) == k[i].ok, "case %zu: %s", i, err);
        if (st == SB_OK && c.call.op == SB_OP_adam_update) {
            ck_assert_int_eq(c.call.t, 3);
            ck_assert_int_eq(c.call.optim.kind, SB_OPTIM_ADAM);
            ck_assert(c.call.optim.beta1 > 0.79f && c.call.optim.beta1 < 0.81f);
        }
        if (st == SB_OK && c.call.op == SB_OP_adamw_update) {
            ck_assert_int_eq(c.call.t, 7);
            ck_assert_int_eq(c.call.optim.kind, SB_OPTIM_ADAMW);
            ck_assert(c.call.optim.weight_decay > 0.09f && c.call.optim.weight_decay < 0.11f);
            ck_assert(c.call.optim.grad_scale > 0.24f && c.call.optim.grad_scale < 0.26f);
            ck_assert(c.call.optim.beta2 > 0.998f && c.call.optim.beta2 < 0.9995f);
        }
        if (st == SB_OK && c.call.op == SB_OP_attention_bwd)
            ck_assert(c.call.attn.b == 16 && c.call.attn.t == 64 && c.call.attn.h == 4 &&
                      c.call.attn.d == 32);
        if (st == SB_OK && c.call.op == SB_OP_dropout_mask) {
            ck_assert_uint_eq(c.call.dropout.seed, 3);
            ck_assert(c.call.dropout.rate > 0.24f && c.call.dropout.rate < 0.26f);
        }
    }
}
END_TEST

/* [invariance]: the batch axis's sizes, samples, thread counts and
 * expectations, outside the digest; refused with the line of what is wrong. */
START_TEST(invariance_section)
{
    char text[2048], err[512];
    snprintf(text, sizeof text, "%s\n[invariance]\nbatch = 1, 3, 16..17, 128\nsamples = 3\n"
             "threads = 1,2\nexpect = identical|reordering\nexpect.128 = beyond-bound\n",
             kernel_case);
    write_case(kernel_case);
    sb_case plain, c;
    ck_assert_int_eq(sb_case_load(&plain, path, err, sizeof err), SB_OK);
    write_case(text);
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_eq(c.digest, plain.digest);
    ck_assert_int_eq(c.n_batch, 5);
    ck_assert_int_eq(c.batch_sizes[0], 1);
    ck_assert_int_eq(c.batch_sizes[3], 17);
    ck_assert_int_eq(c.batch_samples, 3);
    ck_assert_int_eq(c.n_batch_threads, 2);
    ck_assert_uint_eq(c.batch_expect[1], SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) |
                                             SB_VERDICT_BIT(SB_VERDICT_REORDERING));
    ck_assert_uint_eq(c.batch_expect[4], SB_VERDICT_BIT(SB_VERDICT_BEYOND_BOUND));
    ck_assert_int_eq(plain.n_batch, 0);
    /* --batch on a case without [invariance]: its defaults */
    int sizes[] = {2, 128};
    ck_assert_int_eq(sb_case_batch_override(&plain, sizes, 2, err, sizeof err), SB_OK);
    ck_assert_int_eq(plain.batch_samples, 2);
    ck_assert_uint_eq(plain.batch_expect[1], SB_VERDICT_BIT(SB_VERDICT_IDENTICAL));
    /* it keeps the expectation of a size the case lists */
    ck_assert_int_eq(sb_case_batch_override(&c, sizes, 2, err, sizeof err), SB_OK);
    ck_assert_uint_eq(c.batch_expect[1], SB_VERDICT_BIT(SB_VERDICT_BEYOND_BOUND));

    static const struct {
        const char *lines;
        const char *says;
    } bad[] = {
        {"samples = 2\n", ":22: expected key batch"},
        {"batch = 1,3,3\n", ":23: expected batch as sizes in [1, 4096]"},
        {"batch = 0,2\n", ":23: expected batch as sizes"},
        {"batch = 1,2\nsamples = 9\n", ":24: expected samples as an integer in [1, 8]"},
        {"batch = 1,2\nexpect.3 = identical\n", ":24: expected expect.<B> with B one of the sizes"},
        {"batch = 1,2\ncolour = red\n", ":24: expected a key of [invariance]"},
        {"batch = 1,2\nthreads = 0\n", ":24: expected threads as counts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s\n[invariance]\n%s", kernel_case, bad[i].lines);
        write_case(text);
        ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_ERR_INPUT);
        ck_assert_msg(strstr(err, bad[i].says), "case %zu: \"%s\"", i, err);
    }
    /* an op whose output is a batch-level reduction has no batch axis */
    snprintf(text, sizeof text, "[case]\nkind = kernel\nfamily = det\nseed = 1\n[kernel]\n"
             "op = xent_loss\nn = 8\nk = 10\n[sweep]\nthreads = 1\n[invariance]\nbatch = 1,2\n");
    write_case(text);
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_msg(strstr(err, ":11: expected no [invariance] for op xent_loss"), "%s", err);
}
END_TEST

/* [expect] of a mutant case: the op defaults to the mutant's, probe and
 * step to any; a step that is not a count, or an unknown key, is refused. */
START_TEST(expect_section)
{
    /* kernel_case with a relu mutant: line 6 (blank) becomes the mutant key */
    static const char mutant_line[] = "mutant = relu_chunk_off_by_one\n";
    write_variant(kernel_case, 6, mutant_line);
    sb_case c;
    char err[512] = "";
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_OK);
    ck_assert_int_eq(c.expect_op, SB_OP_relu_fwd);
    ck_assert_str_eq(c.expect_probe, "");
    ck_assert_int_eq(c.expect_step, -1);

    char good[2048];
    snprintf(good, sizeof good, "%.*s%s%s[expect]\nop = adamw_update\nstep = 3\n"
             "probe = adamw.h0.qkv.W.v\n", (int)(strstr(kernel_case, "\n[kernel]") -
             kernel_case), kernel_case, "\nmutant = relu_chunk_off_by_one",
             strstr(kernel_case, "\n[kernel]"));
    write_case(good);
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_OK);
    ck_assert_int_eq(c.expect_op, SB_OP_adamw_update);
    ck_assert_str_eq(c.expect_probe, "adamw.h0.qkv.W.v");
    ck_assert_int_eq(c.expect_step, 3);

    /* good's lines: 6 mutant, 22 [expect], 23 op, 24 step, 25 probe */
    static const refusal bad[] = {
        {24, "step = -1\n", 24, "step as an integer in [0, "},
        {24, "step = first\n", 24, "step as an integer"},
        {25, "where = here\n", 25, "a key of [expect] (detected, op, probe, step), found \"where\""},
    };
    refusals_check(good, bad, sizeof bad / sizeof bad[0]);
}
END_TEST

static const char *const resume_case = "[case]\n"             /* 1 */
                                       "kind = train\n"        /* 2 */
                                       "family = det\n"        /* 3 */
                                       "seed = 1\n"            /* 4 */
                                       "[train]\n"             /* 5 */
                                       "model = keras_mnist_cnn\n" /* 6 */
                                       "dataset = mnist\n"     /* 7 */
                                       "train = 0..600\n"      /* 8: 5 steps an epoch */
                                       "test = 600..700\n"     /* 9 */
                                       "batch = 128\n"         /* 10 */
                                       "epochs = 1\n"          /* 11 */
                                       "[sweep]\n"             /* 12 */
                                       "threads = 1,2\n"       /* 13 */
                                       "resume = 1, 3..4\n"    /* 14 */
                                       "resume_expect = identical|reordering\n"; /* 15 */

/* [sweep] resume and resume_expect: the steps in the thread-list grammar,
 * each below the run's steps, out of the digest; a resume mutant needs
 * them and an [expect] step and probe. */
START_TEST(resume_keys)
{
    write_case(resume_case);
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.n_resume, 3);
    ck_assert_int_eq(c.resume[0], 1);
    ck_assert_int_eq(c.resume[1], 3);
    ck_assert_int_eq(c.resume[2], 4);
    ck_assert_int_eq(c.resume_expect, SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) |
                                          SB_VERDICT_BIT(SB_VERDICT_REORDERING));
    ck_assert(c.train.resume_fault == NULL);
    char digest[33];
    memcpy(digest, c.digest, sizeof digest);
    char plain[1024];
    snprintf(plain, sizeof plain, "%.*s", (int)(strstr(resume_case, "resume =") - resume_case),
             resume_case);
    write_case(plain);
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_OK);
    ck_assert_int_eq(c.n_resume, 0);
    ck_assert_int_eq(c.resume_expect, 0);
    ck_assert_str_eq(c.digest, digest);

    static const refusal bad[] = {
        {14, "resume = 5\n", 14, "resume at 5: K must be in 1..4 (the run's last step)"},
        {14, "resume = 0\n", 14, "resume as steps in [1, "},
        {14, "resume = 2, 2\n", 14, "listed twice"},
        {14, "resume = \n", 14, "resume as steps"},
        {14, "\n", 15, "resume_expect only with resume"},
        {15, "resume_expect = maybe\n", 15, "maybe"},
        {4, "seed = 1\nmutant = step_counter_unsaved\n", 5,
         "an [expect] section (step, probe) in a case of resume mutant step_counter_unsaved"},
    };
    refusals_check(resume_case, bad, sizeof bad / sizeof bad[0]);

    /* a resume mutant's case: its restore in the training config */
    char mutant[1200];
    snprintf(mutant, sizeof mutant, "%.*smutant = order_reshuffled\n%s[expect]\nstep = 1\n"
             "probe = batch.x\n", (int)(strstr(resume_case, "[train]") - resume_case),
             resume_case, strstr(resume_case, "[train]"));
    write_case(mutant);
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.train.resume_fault == sb_resume_mutant_restore(
                         sb_resume_mutant_find("order_reshuffled")), 1);
    ck_assert_str_eq(c.digest, digest);
    /* without resume: refused */
    snprintf(mutant, sizeof mutant, "%.*smutant = order_reshuffled\n%.*s[expect]\nstep = 1\n"
             "probe = batch.x\n", (int)(strstr(resume_case, "[train]") - resume_case),
             resume_case, (int)(strstr(resume_case, "resume =") - strstr(resume_case, "[train]")),
             strstr(resume_case, "[train]"));
    write_case(mutant);
    ck_assert_int_eq(sb_case_load(&c, path, err, sizeof err), SB_ERR_INPUT);
    ck_assert_msg(strstr(err, ":13: expected key resume") != NULL, "%s", err);
}
END_TEST

static const char *const good_command = "[case]\n"        /* 1 */
                                        "kind = command\n"  /* 2 */
                                        "family = loose\n"  /* 3 */
                                        "seed = 5\n"        /* 4 */
                                        "[command]\n"       /* 5 */
                                        "run = ./p --threads {threads} --trace {trace}\n" /* 6 */
                                        "dump = -d {dump_probe} {dump_step} {dump_dir}\n" /* 7 */
                                        "[sweep]\n"         /* 8 */
                                        "threads = 1,2\n";  /* 9 */

/* kind = command: its lines kept as written, run in the case file's
 * directory or dir, the command lines in the digest and dir not; the
 * placeholders checked, key by key. */
START_TEST(command_section)
{
    write_case(good_command);
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(c.kind, SB_CASE_COMMAND);
    ck_assert_str_eq(c.command_run, "./p --threads {threads} --trace {trace}");
    ck_assert_str_eq(c.command_stream, "");
    ck_assert_str_eq(c.command_dir, cases_dir);
    char base[33], d[33];
    memcpy(base, c.digest, sizeof base);

    write_variant(good_command, 5, "[command]\ndir = ../bin\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/../bin", cases_dir);
    ck_assert_str_eq(c.command_dir, dir);
    ck_assert_str_eq(c.digest, base);

    static const char *const edits[] = {
        "run = ./p --threads {threads} --trace {trace} --fast\n",
        "dump = -D {dump_probe} {dump_step} {dump_dir}\n",
        "version = 2\n",
        "stream = -s {stream}\n",
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s", i < 2 ? "" : "[command]\n", edits[i]);
        write_variant(good_command, i < 2 ? 6 + (int)i : 5, text);
        ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
        memcpy(d, c.digest, sizeof d);
        ck_assert_msg(strcmp(d, base) != 0, "edit %zu kept the digest", i);
    }

    static const refusal bad[] = {
        {6, "run = ./p --threads {thread} --trace {trace}\n", 6, "run with placeholders among"},
        {6, "run = ./p {threads}\n", 6, "placeholder {trace} in run"},
        {6, "run = ./p {trace} {dump_dir}\n", 6, "run with placeholders among"},
        {7, "dump = -d {dump_probe} {dump_dir}\n", 7, "placeholder {dump_step} in dump"},
        {7, "", 5, "key dump in [command]"},
        {0, "[kernel]\nop = relu_fwd\n", 10, "no [kernel] section in a kind = command case"},
        {5, "[command]\nmode = fast\n", 6, "a key of [command]"},
        {0, "[invariance]\nbatch = 1,2\n", 10, "no [invariance] in a kind = command case"},
        {3, "family = det\nmutant = relu_chunk_off_by_one\n", 4, "no mutant"},
    };
    refusals_check(good_command, bad, sizeof bad / sizeof bad[0]);
}
END_TEST

static const char *const hooked_command =
    "[case]\n"                                                      /* 1 */
    "kind = command\n"                                              /* 2 */
    "family = det\n"                                                /* 3 */
    "seed = 5\n"                                                    /* 4 */
    "[command]\n"                                                   /* 5 */
    "run = ./p --threads {threads} --trace {trace} {restore_args}\n" /* 6 */
    "dump = -d {dump_probe} {dump_step} {dump_dir}\n"               /* 7 */
    "stop = --stop-at {resume_at} --checkpoint {checkpoint}\n"      /* 8 */
    "restore = --restore {checkpoint}\n"                            /* 9 */
    "[sweep]\n"                                                     /* 10 */
    "threads = 1,2\n"                                               /* 11 */
    "resume = 2, 4\n";                                              /* 12 */

/* A command case's resume hook: stop and restore kept as written, in the
 * digest (a case without them keeps its digest), their placeholders
 * checked; [sweep] resume taken only with both keys, its steps left to
 * the golden (sb_configs_make). */
START_TEST(command_resume_hook)
{
    write_case(hooked_command);
    sb_case c;
    char err[512] = "";
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_eq(c.command_stop, "--stop-at {resume_at} --checkpoint {checkpoint}");
    ck_assert_str_eq(c.command_restore, "--restore {checkpoint}");
    ck_assert_int_eq(c.n_resume, 2);
    ck_assert_int_eq(c.resume[1], 4);
    ck_assert_ptr_null(sb_case_resume_refusal(&c));
    char base[33];
    memcpy(base, c.digest, sizeof base);
    write_variant(hooked_command, 9, "restore = --restore {checkpoint} --at {resume_at}\n");
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_str_ne(c.digest, base);

    /* no hook: no resume axis, and the digest of a case without one */
    write_case(good_command);
    ck_assert_msg(sb_case_load(&c, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_ptr_nonnull(sb_case_resume_refusal(&c));
    static const refusal bad[] = {
        {8, "stop = --stop-at {resume_at}\n", 8, "placeholder {checkpoint} in stop"},
        {8, "stop = --checkpoint {checkpoint}\n", 8, "placeholder {resume_at} in stop"},
        {9, "restore = --at {resume_at}\n", 9, "placeholder {checkpoint} in restore"},
        {9, "restore = -r {checkpoint} {dump_dir}\n", 9, "restore with placeholders among"},
        {9, "", 8, "keys stop and restore in [command] together"},
        {8, "", 8, "keys stop and restore in [command] together"},
    };
    refusals_check(hooked_command, bad, sizeof bad / sizeof bad[0]);
    static const refusal no_hook[] = {
        {0, "resume = 2\n", 10, "resume in a kind = command case with the keys stop and restore"},
    };
    refusals_check(good_command, no_hook, 1);
}
END_TEST

START_TEST(missing_file)
{
    sb_case c;
    char err[512];
    ck_assert_int_eq(sb_case_load(&c, "/nonexistent/x.case", err, sizeof err), SB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/x.case: cannot open"));
}
END_TEST

Suite *make_casefile_suite(void)
{
    Suite *s = suite_create("casefile");
    TCase *tc = tcase_create("casefile");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, valid_kernel_case);
    tcase_add_test(tc, expect_sets);
    tcase_add_test(tc, environment_axes);
    tcase_add_test(tc, valid_train_case);
    tcase_add_test(tc, parallel_section);
    tcase_add_test(tc, digest_covers_what_decides_the_trace);
    tcase_add_test(tc, errors_name_file_and_line);
    tcase_add_test(tc, threads_take_the_command_grammar);
    tcase_add_test(tc, train_errors);
    tcase_add_test(tc, gpt_train_case);
    tcase_add_test(tc, gpt_block_keys);
    tcase_add_test(tc, kernel_ops_take_their_own_parameters);
    tcase_add_test(tc, expect_section);
    tcase_add_test(tc, resume_keys);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, command_section);
    tcase_add_test(tc, command_resume_hook);
    tcase_add_test(tc, invariance_section);
    suite_add_tcase(s, tc);
    return s;
}
