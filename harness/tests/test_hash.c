/* Tree XXH3-128: fixed vectors, thread-count independence, the root from
 * leaf digests, what the header covers, hex round trip. */
#include <check.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sb_harness.h"

Suite *make_hash_suite(void);

/* The expected values below were computed once by an independent route that
 * implements the layout documented in samebits.h, with NumPy for the bytes and
 * python3-xxhash for XXH3-128 (digest() is the canonical big-endian form):
 *
 *   import struct, numpy as np, xxhash
 *   LEAF = 1 << 18
 *   def tree(dtype_code, shape, raw):
 *       hdr = struct.pack('<QQ', dtype_code, len(shape)) \
 *             + b''.join(struct.pack('<Q', d) for d in shape)
 *       leaves = b''.join(xxhash.xxh3_128_digest(raw[i:i + LEAF])
 *                         for i in range(0, len(raw), LEAF))
 *       return xxhash.xxh3_128_hexdigest(hdr + leaves)
 *   tree(0, [2, 3], np.arange(6, dtype='<f4').tobytes())
 *   tree(1, [4], np.array([1, -2, 3, -4], dtype='<i4').tobytes())
 *   tree(0, [0], b'')
 *   i = np.arange(3 * 100000)
 *   tree(0, [3, 100000], (((i % 4099) - 2000) * 0.25).astype('<f4').tobytes())
 *   tree(1, [2, 3], np.arange(6, dtype='<f4').tobytes())
 *
 * (dtype codes: f32 = 0, i32 = 1, the sb_dtype values.) */
#define HEX_F32_2X3 "2ac2d4ba3882dcd50a82f9bb22f324ab"
#define HEX_I32_4 "4de715c21053d23cae88a720ad1034ee"
#define HEX_F32_EMPTY "ca3c940572bb9221e45b418e1be950b9"
#define HEX_F32_3X100000 "25b98729f1cfba70c3e633fb6861d739"
#define HEX_I32_2X3_F32_BYTES "b2d2b351f625732e1ffab798b3c06703"

static void expect_hex(const sb_tensor *t, const char *want)
{
    sb_hash h = sb_hash_tensor(t);
    char hex[33];
    sb_hash_hex(&h, hex);
    ck_assert_str_eq(hex, want);
}

static sb_tensor tensor(sb_dtype dtype, int ndim, int64_t d0, int64_t d1, void *data)
{
    sb_tensor t = {.dtype = dtype, .ndim = ndim, .dim = {d0, d1, 1, 1}, .data = data};
    return t;
}

/* 3 x 100000 floats: 1.2 MB, five leaves, the last one partial. */
static float *big_tensor_data(void)
{
    float *v = malloc(sizeof(float) * 300000);
    ck_assert_ptr_nonnull(v);
    for (int i = 0; i < 300000; i++)
        v[i] = (float)((i % 4099) - 2000) * 0.25f;
    return v;
}

START_TEST(fixed_vectors)
{
    float f[6] = {0, 1, 2, 3, 4, 5};
    int32_t k[4] = {1, -2, 3, -4};
    sb_tensor t = tensor(SB_DTYPE_F32, 2, 2, 3, f);
    expect_hex(&t, HEX_F32_2X3);
    t = tensor(SB_DTYPE_I32, 1, 4, 1, k);
    expect_hex(&t, HEX_I32_4);
    t = tensor(SB_DTYPE_F32, 1, 0, 1, NULL);
    expect_hex(&t, HEX_F32_EMPTY);
    float *big = big_tensor_data();
    t = tensor(SB_DTYPE_F32, 2, 3, 100000, big);
    expect_hex(&t, HEX_F32_3X100000);
    free(big);
}
END_TEST

START_TEST(same_root_for_every_thread_count)
{
    /* 64 MiB + 3 floats: 257 leaves, so more than one batch of leaves and a
     * short last leaf. */
    size_t n = ((size_t)1 << 24) + 3;
    float *v = malloc(n * sizeof(float));
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(i % 1021) - 510.0f;
    sb_tensor t = tensor(SB_DTYPE_F32, 1, (int64_t)n, 1, v);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    sb_hash one = sb_hash_tensor(&t);
    for (int threads = 2; threads <= 8; threads++) {
        omp_set_num_threads(threads);
        sb_hash h = sb_hash_tensor(&t);
        ck_assert_msg(sb_hash_equal(&one, &h), "root differs at %d threads", threads);
    }
    omp_set_num_threads(saved);
    /* One changed bit in the last leaf changes the root. */
    v[n - 1] = -v[n - 1];
    sb_hash flipped = sb_hash_tensor(&t);
    ck_assert(!sb_hash_equal(&one, &flipped));
    free(v);
}
END_TEST

/* The leaf digests of t, cut here from its bytes: what a kernel's hashed
 * mode hands over with a probe. */
static sb_leaf_digest *leaves_of(const sb_tensor *t, size_t *count)
{
    size_t nbytes = sb_tensor_bytes(t);
    *count = (nbytes + SB_HASH_LEAF_BYTES - 1) / SB_HASH_LEAF_BYTES;
    sb_leaf_digest *d = calloc(*count ? *count : 1, sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (size_t k = 0; k < *count; k++) {
        size_t off = k * SB_HASH_LEAF_BYTES;
        size_t len = nbytes - off < SB_HASH_LEAF_BYTES ? nbytes - off : SB_HASH_LEAF_BYTES;
        sb_hash_leaf(&d[k], (const unsigned char *)t->data + off, len);
    }
    return d;
}

static void expect_hex_from_leaves(const sb_tensor *t, const char *want)
{
    size_t count;
    sb_leaf_digest *d = leaves_of(t, &count);
    sb_hash h = sb_hash_tensor_leaves(t, d);
    char hex[33];
    sb_hash_hex(&h, hex);
    ck_assert_str_eq(hex, want);
    free(d);
}

/* The root from leaf digests is the tree hash: the fixed vectors again (no
 * leaf, a short leaf, five leaves with a short last), then a whole number of
 * leaves against sb_hash_tensor, and a changed digest changes the root. */
START_TEST(root_from_leaf_digests)
{
    float f[6] = {0, 1, 2, 3, 4, 5};
    int32_t k[4] = {1, -2, 3, -4};
    sb_tensor t = tensor(SB_DTYPE_F32, 2, 2, 3, f);
    expect_hex_from_leaves(&t, HEX_F32_2X3);
    t = tensor(SB_DTYPE_I32, 1, 4, 1, k);
    expect_hex_from_leaves(&t, HEX_I32_4);
    t = tensor(SB_DTYPE_F32, 1, 0, 1, NULL);
    expect_hex_from_leaves(&t, HEX_F32_EMPTY);
    sb_hash no_leaves = sb_hash_tensor_leaves(&t, NULL), empty = sb_hash_tensor(&t);
    ck_assert(sb_hash_equal(&no_leaves, &empty));
    float *big = big_tensor_data();
    t = tensor(SB_DTYPE_F32, 2, 3, 100000, big);
    expect_hex_from_leaves(&t, HEX_F32_3X100000);

    /* 2 leaves exactly */
    t = tensor(SB_DTYPE_F32, 2, 2, (int64_t)(SB_HASH_LEAF_BYTES / sizeof(float)), big);
    size_t count;
    sb_leaf_digest *d = leaves_of(&t, &count);
    ck_assert_uint_eq(count, 2);
    sb_hash whole = sb_hash_tensor(&t), root = sb_hash_tensor_leaves(&t, d);
    ck_assert(sb_hash_equal(&whole, &root));
    d[1].bytes[15] ^= 1;
    root = sb_hash_tensor_leaves(&t, d);
    ck_assert(!sb_hash_equal(&whole, &root));
    free(d);
    free(big);
}
END_TEST

START_TEST(dtype_and_shape_are_hashed)
{
    float f[6] = {0, 1, 2, 3, 4, 5};
    sb_tensor a = tensor(SB_DTYPE_F32, 2, 2, 3, f);
    sb_tensor b = tensor(SB_DTYPE_I32, 2, 2, 3, f);
    expect_hex(&b, HEX_I32_2X3_F32_BYTES);
    sb_hash ha = sb_hash_tensor(&a), hb = sb_hash_tensor(&b);
    ck_assert(!sb_hash_equal(&ha, &hb));
    sb_tensor c = tensor(SB_DTYPE_F32, 2, 3, 2, f);
    sb_tensor d = tensor(SB_DTYPE_F32, 1, 6, 1, f);
    sb_hash hc = sb_hash_tensor(&c), hd = sb_hash_tensor(&d);
    ck_assert(!sb_hash_equal(&ha, &hc));
    ck_assert(!sb_hash_equal(&ha, &hd));
    ck_assert(!sb_hash_equal(&hc, &hd));
}
END_TEST

START_TEST(hex_round_trip)
{
    sb_hash h;
    ck_assert(sb_hash_parse(&h, HEX_F32_3X100000));
    char hex[33];
    sb_hash_hex(&h, hex);
    ck_assert_str_eq(hex, HEX_F32_3X100000);
    ck_assert_uint_eq(h.bytes[0], 0x25);
    ck_assert_uint_eq(h.bytes[15], 0x39);

    sb_hash upper;
    ck_assert(sb_hash_parse(&upper, "25B98729F1CFBA70C3E633FB6861D739"));
    ck_assert(sb_hash_equal(&h, &upper));
}
END_TEST

START_TEST(bad_hex_is_rejected)
{
    static const char *const bad[] = {
        "",
        "25b98729f1cfba70c3e633fb6861d73",   /* 31 digits */
        "25b98729f1cfba70c3e633fb6861d7390", /* 33 digits */
        "25b98729f1cfba70c3e633fb6861d73g",  /* not a digit */
        "25b98729f1cfba70 3e633fb6861d739",  /* space inside */
        "0x5b98729f1cfba70c3e633fb6861d739", /* prefix */
        "25b98729f1cfba70c3e633fb6861d739\n",
    };
    sb_hash h, keep;
    memset(&keep, 0xab, sizeof keep);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        h = keep;
        ck_assert_msg(!sb_hash_parse(&h, bad[i]), "accepted \"%s\"", bad[i]);
        ck_assert_msg(sb_hash_equal(&h, &keep), "\"%s\" changed the output", bad[i]);
    }
}
END_TEST

Suite *make_hash_suite(void)
{
    Suite *s = suite_create("hash");
    TCase *tc = tcase_create("hash");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fixed_vectors);
    tcase_add_test(tc, same_root_for_every_thread_count);
    tcase_add_test(tc, root_from_leaf_digests);
    tcase_add_test(tc, dtype_and_shape_are_hashed);
    tcase_add_test(tc, hex_round_trip);
    tcase_add_test(tc, bad_hex_is_rejected);
    suite_add_tcase(s, tc);
    return s;
}
