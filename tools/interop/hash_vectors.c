/* The shared hash test vectors, hashed by libsamebits: one line
 * "NAME HASH" each. samebits_torch.py (`hash-vectors`) builds the same
 * tensors from the same formulas and hashes them in Python; the interop
 * test requires the two listings to be equal, so a trace written from
 * PyTorch hashes a tensor exactly as a trace written by samebits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samebits.h"

static void print_hash(const char *name, sb_dtype dtype, int ndim, const int64_t *dim,
                       void *data)
{
    sb_tensor t = {.dtype = dtype, .ndim = ndim, .data = data};
    for (int d = 0; d < ndim; d++)
        t.dim[d] = dim[d];
    sb_hash h = sb_hash_tensor(&t);
    char hex[33];
    sb_hash_hex(&h, hex);
    printf("%s %s\n", name, hex);
}

/* i * 2654435761 mod 2^32, read as int32 (two's complement). */
static int32_t *words(size_t n)
{
    int32_t *w = malloc(sizeof *w * n);
    SB_ASSERT(w != NULL);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)(i * 2654435761u);
        memcpy(&w[i], &u, sizeof u);
    }
    return w;
}

int main(void)
{
    float scalar = 1.5f;
    print_hash("f32_scalar", SB_DTYPE_F32, 0, NULL, &scalar);

    int64_t empty_dim[] = {0};
    print_hash("f32_empty", SB_DTYPE_F32, 1, empty_dim, NULL);

    float small[] = {1.0f, -2.0f, 0.5f};
    int64_t small_dim[] = {3};
    print_hash("f32_3", SB_DTYPE_F32, 1, small_dim, small);

    int32_t ints[] = {-3, -2, -1, 0, 1, 2};
    int64_t ints_dim[] = {2, 3};
    print_hash("i32_2x3", SB_DTYPE_I32, 2, ints_dim, ints);
    /* int64 (tokens of other producers): one beyond int32 */
    int64_t longs[] = {-3, -2, -1, 0, 1, (int64_t)1 << 40};
    print_hash("i64_2x3", SB_DTYPE_I64, 2, ints_dim, longs);

    /* 1,080,000 bytes: four full leaves and a short one; integers below
     * 2^24, so every value is exact in float */
    size_t n3 = 3 * 300 * 300;
    float *spread = malloc(sizeof *spread * n3);
    SB_ASSERT(spread != NULL);
    for (size_t i = 0; i < n3; i++)
        spread[i] = (float)((i * 7919u) % 1000003u) - 500000.0f;
    int64_t spread_dim[] = {3, 300, 300};
    print_hash("f32_3x300x300", SB_DTYPE_F32, 3, spread_dim, spread);
    free(spread);

    int32_t *w = words(65537);
    int64_t one_leaf[] = {65536}, one_leaf_and_4[] = {65537};
    print_hash("i32_65536", SB_DTYPE_I32, 1, one_leaf, w);
    print_hash("i32_65537", SB_DTYPE_I32, 1, one_leaf_and_4, w);
    free(w);

    /* +0, -0, +inf, -inf, quiet NaN, smallest subnormal, largest float */
    const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                             0x7fc00000u, 0x00000001u, 0x7f7fffffu};
    float special[7];
    memcpy(special, bits, sizeof special);
    int64_t special_dim[] = {1, 1, 1, 7};
    print_hash("f32_special_1x1x1x7", SB_DTYPE_F32, 4, special_dim, special);
    return 0;
}
