/* Tree XXH3-128 of a tensor (layout in samebits.h and FORMATS.md).
 *
 * The root is streamed: the header, then the leaf digests in leaf order. They
 * come either from here, a batch of leaves at a time (in parallel for large
 * tensors), or from a kernel that hashed each leaf with sb_hash_leaf while it
 * was in cache; neither the thread count, the batch size nor who hashed the
 * leaves can change the result. */
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>
#include <xxh_x86dispatch.h>

#include <string.h>

#include "sb_harness.h"

/* Leaves per batch: 256 leaves of 256 KiB is 64 MiB of tensor per parallel
 * region, and 4 KiB of leaf hashes on the stack. */
#define LEAF_BATCH 256

/* libxxhash's x86 dispatch returns with the upper halves of the vector registers
 * in use. On Intel's cores every SSE instruction after that (the baseline build's
 * scalar code, libm's) waits on them until something clears them: a hashed run of
 * the char GPT took 3.3 times its unhashed one at 1 thread on a Xeon. So every
 * leaf hash and every root clears them before it returns to its caller. The
 * intrinsic, in a function compiled for AVX, tells the compiler what it clobbers
 * at any -march. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

__attribute__((target("avx"))) static void vector_upper_clear_avx(void)
{
    _mm256_zeroupper();
}
#endif

static void vector_upper_clear(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx"))
        vector_upper_clear_avx();
#endif
}

static void put_u64_le(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

void sb_hash_leaf(sb_leaf_digest *out, const void *bytes, size_t len)
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_dispatch(bytes, len));
    vector_upper_clear();
    memcpy(out->bytes, c.digest, 16);
}

static size_t leaf_count(size_t nbytes)
{
    return (nbytes + SB_HASH_LEAF_BYTES - 1) / SB_HASH_LEAF_BYTES;
}

/* Leaf number `leaf` of a tensor of nbytes bytes. */
static void hash_leaf_at(sb_leaf_digest *out, const unsigned char *bytes, size_t nbytes,
                         size_t leaf)
{
    size_t off = leaf * SB_HASH_LEAF_BYTES;
    size_t len = nbytes - off < SB_HASH_LEAF_BYTES ? nbytes - off : SB_HASH_LEAF_BYTES;
    sb_hash_leaf(out, bytes + off, len);
}

/* Starts the root: the state over the tensor's header. */
static void root_begin(XXH3_state_t *state, const sb_tensor *t)
{
    SB_ASSERT(t->ndim >= 0 && t->ndim <= SB_MAX_DIMS);
    XXH3_128bits_reset(state);
    unsigned char header[8 * (2 + SB_MAX_DIMS)];
    put_u64_le(header, (uint64_t)t->dtype);
    put_u64_le(header + 8, (uint64_t)t->ndim);
    for (int d = 0; d < t->ndim; d++)
        put_u64_le(header + 16 + 8 * d, (uint64_t)t->dim[d]);
    XXH3_128bits_update_dispatch(state, header, 16 + 8 * (size_t)t->ndim);
}

static sb_hash root_end(XXH3_state_t *state)
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(state));
    vector_upper_clear();
    sb_hash h;
    memcpy(h.bytes, c.digest, 16);
    return h;
}

sb_hash sb_hash_tensor(const sb_tensor *t)
{
    XXH3_state_t state;
    root_begin(&state, t);
    size_t nbytes = sb_tensor_bytes(t);
    SB_ASSERT(nbytes == 0 || t->data != NULL);
    const unsigned char *bytes = t->data;

    size_t n_leaves = leaf_count(nbytes);
    sb_leaf_digest leaves[LEAF_BATCH];
    for (size_t first = 0; first < n_leaves; first += LEAF_BATCH) {
        long count = (long)(n_leaves - first < LEAF_BATCH ? n_leaves - first : LEAF_BATCH);
        /* Each leaf has one writer. A single leaf is not worth a team, nor
         * even the construct: a parallel region with its if clause false
         * still costs about 0.3 us a tensor (GCC 12's libgomp, Zen 4 EPYC),
         * more than the root over a tensor's leaf digests (0.04 us), and a
         * step of the char GPT hashes 35 tensors of one leaf here. */
        if (count == 1) {
            hash_leaf_at(&leaves[0], bytes, nbytes, first);
        } else {
#pragma omp parallel for schedule(static)
            for (long i = 0; i < count; i++)
                hash_leaf_at(&leaves[i], bytes, nbytes, first + (size_t)i);
        }
        XXH3_128bits_update_dispatch(&state, leaves, sizeof leaves[0] * (size_t)count);
    }
    return root_end(&state);
}

sb_hash sb_hash_tensor_leaves(const sb_tensor *t, const sb_leaf_digest *leaves)
{
    XXH3_state_t state;
    root_begin(&state, t);
    size_t n_leaves = leaf_count(sb_tensor_bytes(t));
    SB_ASSERT(n_leaves == 0 || leaves != NULL);
    XXH3_128bits_update_dispatch(&state, leaves, sizeof leaves[0] * n_leaves);
    return root_end(&state);
}

void sb_hash_hex(const sb_hash *h, char out[33])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[h->bytes[i] >> 4];
        out[2 * i + 1] = digits[h->bytes[i] & 15];
    }
    out[32] = '\0';
}

static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

bool sb_hash_parse(sb_hash *h, const char *hex)
{
    sb_hash parsed;
    for (int i = 0; i < 16; i++) {
        int hi = hex_value(hex[2 * i]);
        if (hi < 0)
            return false;
        int lo = hex_value(hex[2 * i + 1]);
        if (lo < 0)
            return false;
        parsed.bytes[i] = (unsigned char)(hi << 4 | lo);
    }
    if (hex[32] != '\0')
        return false;
    *h = parsed;
    return true;
}

bool sb_hash_equal(const sb_hash *a, const sb_hash *b)
{
    return memcmp(a->bytes, b->bytes, 16) == 0;
}
