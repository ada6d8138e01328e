/* .npy dumps (harness/trace/npy.c): any bytes either read or give one
 * printable line naming the file, with nothing allocated beyond the file's
 * length; a tensor that reads is written and read back exactly (dtype,
 * shape, every data byte), and writing it again gives the same file. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sb_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_tensor(const sb_tensor *a, const sb_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dim[d] != b->dim[d])
            return false;
    return memcmp(a->data, b->data, sb_tensor_bytes(a)) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("fuzzed.npy");
    const char *first = fuzz_path("written.npy");
    const char *second = fuzz_path("rewritten.npy");
    fuzz_write(path, data, size);
    sb_tensor t = {0}, back = {0};
    char err[1024] = "";
    if (sb_npy_read(path, &t, err, sizeof err) != SB_OK) {
        fuzz_check_error(err, path);
        return 0;
    }
    fuzz_require(sb_npy_write(first, &t) == SB_OK, "a tensor that read does not write");
    fuzz_require(sb_npy_read(first, &back, err, sizeof err) == SB_OK,
                 "a written .npy does not read back");
    fuzz_require(same_tensor(&t, &back), "a .npy read back differs from the tensor written");
    fuzz_require(sb_npy_write(second, &back) == SB_OK, "a tensor read back does not write");
    size_t n1, n2;
    uint8_t *a = fuzz_read(first, &n1), *b = fuzz_read(second, &n2);
    fuzz_require(n1 == n2 && memcmp(a, b, n1) == 0, "writing a tensor twice gives two files");
    free(a);
    free(b);
    free(t.data);
    free(back.data);
    return 0;
}
