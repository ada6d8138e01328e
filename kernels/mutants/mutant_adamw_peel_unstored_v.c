/* FAULT: each thread's share of the elements after the first thread's
 * starts with a peeled element (a scalar prologue written before the
 * vector loop, for alignment) whose update steps the weight with the new
 * second moment held in a register, and never stores it: that element's v
 * keeps its old value. The weight and m are AdamW's at the step where it
 * happens; only the state is wrong, and the weight parts from det's a step
 * later, when it reads the stale v. On one thread there is no peel: det. */
#include <omp.h>

#include "mutants.h"
#include "optim/optim.h"

void sb_mutant_adamw_peel_unstored_v(float *w,          /* [n] weights, updated */
                                     float *m,          /* [n] first moment, updated */
                                     float *v,          /* [n] second moment, updated */
                                     const float *g,    /* [n] gradient */
                                     const sb_optim_params *o, int64_t t, size_t n)
{
    const sb_adamw_scalars k = sb_adamw_scalars_of(o, t);
#pragma omp parallel if (n >= SB_OPTIM_PARALLEL_MIN)
    {
        const size_t threads = (size_t)omp_get_num_threads(), id = (size_t)omp_get_thread_num();
        size_t lo = n * id / threads;
        const size_t hi = n * (id + 1) / threads;
        if (lo > 0 && lo < hi) {
            const float v_stored = v[lo];
            sb_adamw_step(&w[lo], &m[lo], &v[lo], g[lo], &k, o);
            v[lo] = v_stored; /* the prologue's store of v is missing */
            lo++;
        }
        for (size_t i = lo; i < hi; i++)
            sb_adamw_step(&w[i], &m[i], &v[i], g[i], &k, o);
    }
}
