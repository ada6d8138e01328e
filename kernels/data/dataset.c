/* Views and the release of a loaded data set. */
#include <string.h>

#include "sb_dataset.h"

sb_status sb_dataset_slice(sb_dataset *out, const sb_dataset *d, int64_t begin, int64_t end)
{
    SB_ASSERT(out != NULL && d != NULL);
    if (begin < 0 || end < begin || end > d->n)
        return SB_ERR_USAGE;
    size_t image = (size_t)d->rows * (size_t)d->cols;
    out->n = end - begin;
    out->rows = d->rows;
    out->cols = d->cols;
    out->pixels = d->pixels + (size_t)begin * image;
    out->labels = d->labels + begin;
    out->owns = 0;
    return SB_OK;
}

void sb_dataset_free(sb_dataset *d)
{
    if (d == NULL)
        return;
    if (d->owns) {
        free(d->pixels);
        free(d->labels);
    }
    memset(d, 0, sizeof *d);
}
