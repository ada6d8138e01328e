/* FAULT: a separately written tail path (the last thread's rows) written
 * for the (N, C) layout: it reads each row's incoming gradient at the row's
 * index, dloss[i], for every position of the row, not dloss[i d + p]. With
 * d = 1 that is right; with positions the tail's gradients take another
 * position's dloss. On one thread there is no tail: det's bits. */
#include "loss/nll.h"
#include "mutants.h"
#include "tail_paths.h"

void sb_mutant_nll_none_bwd_tail_row_dloss(float *dlogprob,         /* [n][k][d] */
                                           const float *dloss,      /* [n][d] */
                                           const int32_t *labels,   /* [n][d] */
                                           const float *weight,     /* [k] */
                                           const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++) {
        if (sb_mutant_in_tail())
            sb_nll_grad_row(dlogprob, &dloss[i], false, labels, weight, s, (size_t)i);
        else
            sb_nll_grad_row(dlogprob, dloss, true, labels, weight, s, (size_t)i);
    }
}
