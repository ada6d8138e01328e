/* FAULT: a separately written tail path (the last thread's rows) that
 * forgets ignore_index: an ignored position's target gets -w[y] g like any
 * other instead of 0 (ignore_index lies among the classes here). On one
 * thread there is no tail: det's bits. */
#include <limits.h>

#include "loss/nll.h"
#include "mutants.h"
#include "tail_paths.h"

void sb_mutant_nll_sum_bwd_tail_no_ignore(float *dlogprob,         /* [n][k][d] */
                                          const float *dloss,      /* [1] */
                                          const int32_t *labels,   /* [n][d] */
                                          const float *weight,     /* [k] */
                                          const sb_nll_shape *s)
{
    sb_nll_shape_check(s);
    sb_nll_shape none_ignored = *s;
    none_ignored.ignore_index = INT_MIN;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < s->n; i++)
        sb_nll_grad_row(dlogprob, dloss, false, labels, weight,
                        sb_mutant_in_tail() ? &none_ignored : s, (size_t)i);
}
