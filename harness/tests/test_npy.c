/* NumPy .npy v1.0: round trip, the exact header, refusal of other files. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sb_harness.h"

Suite *make_npy_suite(void);
Suite *make_npy_numpy_suite(void);
const char *npy_numpy_missing(void);

static char dir[64];
static char path[128];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/sb_test_npy.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/probe@3.npy", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

static size_t slurp(unsigned char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, size, f);
    fclose(f);
    return n;
}

static void write_bytes(const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

START_TEST(round_trip_f32_i32_scalar)
{
    float f[24];
    for (int i = 0; i < 24; i++)
        f[i] = (float)i * -0.375f;
    f[5] = -0.0f;
    int32_t k[5] = {INT32_MIN, -1, 0, 1, INT32_MAX};
    int64_t w[3] = {INT64_MIN, -1, INT64_MAX};
    float one = 2.5f;
    const sb_tensor cases[] = {
        {.dtype = SB_DTYPE_F32, .ndim = 3, .dim = {2, 3, 4}, .data = f},
        {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {5}, .data = k},
        {.dtype = SB_DTYPE_I64, .ndim = 2, .dim = {3, 1}, .data = w},
        {.dtype = SB_DTYPE_F32, .ndim = 0, .data = &one},
        {.dtype = SB_DTYPE_F32, .ndim = 4, .dim = {1, 2, 3, 4}, .data = f},
    };
    char err[256];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ck_assert_int_eq(sb_npy_write(path, &cases[c]), SB_OK);
        sb_tensor back;
        ck_assert_int_eq(sb_npy_read(path, &back, err, sizeof err), SB_OK);
        ck_assert_int_eq(back.dtype, cases[c].dtype);
        ck_assert_int_eq(back.ndim, cases[c].ndim);
        for (int d = 0; d < back.ndim; d++)
            ck_assert_int_eq(back.dim[d], cases[c].dim[d]);
        /* bitwise: -0.0 stays -0.0 */
        ck_assert(memcmp(back.data, cases[c].data, sb_tensor_bytes(&back)) == 0);
        free(back.data);
    }
}
END_TEST

START_TEST(header_is_numpy_v1)
{
    float f[6] = {0, 1, 2, 3, 4, 5};
    sb_tensor t = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {2, 3}, .data = f};
    ck_assert_int_eq(sb_npy_write(path, &t), SB_OK);
    unsigned char buf[512];
    size_t n = slurp(buf, sizeof buf);
    /* Byte for byte what numpy 1.24 np.save writes for this array: the
     * header padded so that the data starts at 128, a multiple of 64. */
    ck_assert_uint_eq(n, 128 + sizeof f);
    ck_assert(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
    ck_assert_uint_eq(buf[8] | buf[9] << 8, 118);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    ck_assert(memcmp(buf + 10, dict, strlen(dict)) == 0);
    for (size_t i = 10 + strlen(dict); i < 127; i++)
        ck_assert_uint_eq(buf[i], ' ');
    ck_assert_uint_eq(buf[127], '\n');
    ck_assert(memcmp(buf + 128, f, sizeof f) == 0);

    sb_tensor v = {.dtype = SB_DTYPE_I32, .ndim = 1, .dim = {6}, .data = f};
    ck_assert_int_eq(sb_npy_write(path, &v), SB_OK);
    slurp(buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr((char *)buf + 10, "'descr': '<i4'"));
    ck_assert_ptr_nonnull(strstr((char *)buf + 10, "'shape': (6,), }"));
}
END_TEST

/* A v1.0 file with the given dict (padded to 64) and `data_bytes` zeros. */
static void write_npy(const char *dict, size_t data_bytes, unsigned major)
{
    unsigned char buf[1024] = {0};
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    size_t len = strlen(dict);
    size_t header = (10 + len + 1 + 63) / 64 * 64 - 10;
    buf[8] = (unsigned char)header;
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', header - len - 1);
    buf[10 + header - 1] = '\n';
    write_bytes(buf, 10 + header + data_bytes);
}

START_TEST(other_files_are_refused)
{
    static const struct {
        const char *dict;
        size_t data;
        unsigned major;
        const char *says;
    } bad[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16, 1, "'<f4', '<i4' or '<i8'"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, 1, "'<f4', '<i4' or '<i8'"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8, 1, "C order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, 2, "version 1.0"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, 1, "exactly 12 bytes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8, 1, "exactly 4 bytes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }", 4, 1,
         "at most 4 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False}", 0, 1, "all of descr"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, 1, "found 'x'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, 1, "a dimension"},
    };
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_npy(bad[i].dict, bad[i].data, bad[i].major);
        sb_tensor t = {.data = &t};
        ck_assert_int_eq(sb_npy_read(path, &t, err, sizeof err), SB_ERR_INPUT);
        ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strstr(err, ": byte ") &&
                          strstr(err, "expected") && strstr(err, bad[i].says),
                      "case %zu: \"%s\"", i, err);
        ck_assert_ptr_null(t.data);
    }
    write_bytes("PK\x03\x04 not numpy", 15);
    sb_tensor t;
    ck_assert_int_eq(sb_npy_read(path, &t, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, "magic"));
    unlink(path);
    ck_assert_int_eq(sb_npy_read(path, &t, err, sizeof err), SB_ERR_IO);
}
END_TEST

/* Why NumPy cannot be asked (test npy_numpy skips), or NULL. */
const char *npy_numpy_missing(void)
{
    if (system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0)
        return "no numpy in /usr/bin/python3 (apt-get install python3-numpy)";
    return NULL;
}

/* NumPy itself reads what we write: its own executable, skipped without
 * NumPy (the format checks above stand on their own). */
START_TEST(numpy_loads_it)
{
    float f[6] = {0.5f, -1, 2, 3, 4, 1e-40f};
    sb_tensor t = {.dtype = SB_DTYPE_F32, .ndim = 2, .dim = {3, 2}, .data = f};
    ck_assert_int_eq(sb_npy_write(path, &t), SB_OK);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import numpy as np, sys; a = np.load('%s'); "
             "sys.exit(0 if a.dtype == np.float32 and a.shape == (3, 2) and "
             "a.tolist() == [[0.5, -1.0], [2.0, 3.0], [4.0, float(np.float32(1e-40))]] else 1)\"",
             path);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *make_npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_trip_f32_i32_scalar);
    tcase_add_test(tc, header_is_numpy_v1);
    tcase_add_test(tc, other_files_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

Suite *make_npy_numpy_suite(void)
{
    Suite *s = suite_create("npy_numpy");
    TCase *tc = tcase_create("numpy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, numpy_loads_it);
    suite_add_tcase(s, tc);
    return s;
}
