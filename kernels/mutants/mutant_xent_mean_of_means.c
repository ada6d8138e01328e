/* FAULT: the batch loss as the mean of per-thread means. Each thread takes
 * a share of the det row blocks, sums them in block order and divides by
 * its own row count; the thread means are then averaged. That is the mean
 * only when every thread has as many rows, so it is rounding at first (the
 * per-thread means of an untrained model are all near log 10) and a bias
 * later, when the rows' losses spread. On one thread it is det's sum over
 * the blocks divided by n. */
#include <omp.h>

#include "classifier/classifier.h"
#include "mutants.h"

void sb_mutant_xent_mean_of_means(float *loss,              /* [1] */
                                  const float *logits,      /* [n][k] */
                                  const int32_t *labels,    /* [n] in [0, k) */
                                  const sb_class_shape *s)
{
    sb_class_shape_check(s, 1);
    float part[SB_ROW_BLOCKS];
    sb_xent_block_sums(part, logits, labels, s);
    const int nth = omp_get_max_threads() < SB_ROW_BLOCKS ? omp_get_max_threads()
                                                          : SB_ROW_BLOCKS;
    float means = 0.0f;
    for (int t = 0; t < nth; t++) {
        /* thread t's blocks, as schedule(static) gives them out */
        const int b0 = SB_ROW_BLOCKS * t / nth, b1 = SB_ROW_BLOCKS * (t + 1) / nth;
        float sum = 0.0f;
        for (int b = b0; b < b1; b++)
            sum += part[b];
        const int rows = sb_row_block_begin(s->n, b1) - sb_row_block_begin(s->n, b0);
        means += rows > 0 ? sum / (float)rows : 0.0f;
    }
    *loss = means / (float)nth;
}
