/* Labelled image data sets read from IDX files (plain or gzipped). */
#ifndef SB_DATASET_H
#define SB_DATASET_H

#include <stdbool.h>

#include "sb_common.h"

typedef struct sb_dataset {
    int64_t n;          /* samples */
    int rows, cols;
    uint8_t *pixels;    /* n * rows * cols, row-major */
    int32_t *labels;    /* n, 0..9 */
    int owns;           /* 1 when pixels and labels were allocated for this set */
} sb_dataset;

/* Reads an images IDX file (magic 0x00000803) and a labels IDX file
 * (0x00000801); either may be gzipped (detected from the content). On error
 * writes a one-line message naming the file and the position to err. */
sb_status sb_dataset_load_idx(sb_dataset *out, const char *images_path,
                              const char *labels_path, char *err, size_t errlen);

/* Opens a data set by name (all of its samples, or its training part):
 *   "mnist"              data_dir/mnist-images-idx3-ubyte, mnist-labels-idx1-ubyte
 *                        (10,000 digits written by tools/fetch-data)
 *   "fashion-mnist"      /usr/share/datasets/fashion-mnist/train-*-ubyte.gz
 *   "fashion-mnist-test" /usr/share/datasets/fashion-mnist/t10k-*-ubyte.gz
 * data_dir NULL means "data". A missing file gets a message that says how to
 * get it; an unknown name is SB_ERR_USAGE. */
sb_status sb_dataset_open(sb_dataset *train_or_all, const char *name,
                          const char *data_dir, char *err, size_t errlen);

/* The images file of a data set by name into out (as sb_dataset_open reads
 * it), for messages; false for an unknown name. */
bool sb_dataset_images_path(char *out, size_t outlen, const char *name, const char *data_dir);

/* A view of samples [begin, end) of d; SB_ERR_USAGE if out of range. */
sb_status sb_dataset_slice(sb_dataset *out, const sb_dataset *d, int64_t begin, int64_t end);

void sb_dataset_free(sb_dataset *d);

#endif
