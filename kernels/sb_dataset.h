/* Labelled image data sets read from IDX files (plain or gzipped). */
#ifndef SB_DATASET_H
#define SB_DATASET_H

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

/* A view of samples [begin, end) of d; SB_ERR_USAGE if out of range. */
sb_status sb_dataset_slice(sb_dataset *out, const sb_dataset *d, int64_t begin, int64_t end);

void sb_dataset_free(sb_dataset *d);

#endif
