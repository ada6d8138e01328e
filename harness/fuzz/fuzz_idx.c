/* IDX data sets (kernels/data/idx.c): the input's first byte says where the
 * images file ends and the labels file begins in the rest (at that fraction
 * of it, in 255ths); any bytes either load or give one printable line naming
 * one of the two files. Built twice: fuzz_idx writes the two files as they
 * are (a part that starts with the gzip magic takes the gzip path with
 * bytes the fuzzer chose), fuzz_idx_gzip (FUZZ_IDX_GZIP) gzips them first,
 * so that the IDX parser behind zlib sees the fuzzer's bytes. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "sb_dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_part(const char *path, const uint8_t *data, size_t size)
{
#ifdef FUZZ_IDX_GZIP
    gzFile gz = gzopen(path, "wb1");
    fuzz_require(gz != NULL && (size == 0 || gzwrite(gz, data, (unsigned)size) == (int)size) &&
                     gzclose(gz) == Z_OK,
                 "cannot write the gzipped input file");
#else
    fuzz_write(path, data, size);
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *images = fuzz_path("images-idx3-ubyte");
    const char *labels = fuzz_path("labels-idx1-ubyte");
    size_t rest = size - 1, split = rest * data[0] / 255;
    write_part(images, data + 1, split);
    write_part(labels, data + 1 + split, rest - split);
    sb_dataset d;
    char err[1024] = "";
    if (sb_dataset_load_idx(&d, images, labels, err, sizeof err) == SB_OK) {
        sb_dataset_free(&d);
        return 0;
    }
    fuzz_check_error(err, strncmp(err, labels, strlen(labels)) == 0 ? labels : images);
    return 0;
}
