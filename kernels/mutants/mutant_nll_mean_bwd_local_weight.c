/* FAULT: the weighted NLL mean's gradient divides each thread's positions
 * by its own share's weight sum, a local mean (as a sharded loss that
 * averages per shard and forgets the global denominator): each thread takes
 * one contiguous run of det's position blocks (the static schedule's
 * share), sums their weights in block order and scales its positions'
 * gradients by dloss over that partial sum. One thread's run is all the
 * blocks, det's W and det's bits; at more threads every gradient is off by
 * its share's fraction of W. */
#include <omp.h>
#include <string.h>

#include "loss/nll.h"
#include "mutants.h"

void sb_mutant_nll_mean_bwd_local_weight(float *dlogprob,         /* [n][k][d] */
                                         const float *dloss,      /* [1] */
                                         const int32_t *labels,   /* [n][d] */
                                         const float *weight,     /* [k] */
                                         const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    const int m = (int)sb_nll_count(s);
    float den[SB_ROW_BLOCKS];
    sb_nll_block_sums(NULL, den, NULL, labels, weight, s);
    memset(dlogprob, 0, (size_t)m * (size_t)s->k * sizeof *dlogprob);
#pragma omp parallel
    {
        const int me = omp_get_thread_num(), team = omp_get_num_threads();
        const int first = SB_ROW_BLOCKS * me / team, last = SB_ROW_BLOCKS * (me + 1) / team;
        float local = 0.0f;
        for (int b = first; b < last; b++)
            local += den[b];
        const float q = *dloss / local;
        for (int e = sb_row_block_begin(m, first); e < sb_row_block_begin(m, last); e++)
            dlogprob[sb_nll_target_at(labels, s, (size_t)e)] =
                sb_nll_grad(weight, labels, s, (size_t)e, -q);
    }
}
