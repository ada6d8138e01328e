/* FAULT: a serial fast path, taken only when one thread is available,
 * updates the accumulators but steps the weight by lr * g, the raw gradient,
 * instead of Adadelta's scaled update: at lr 1.0 the first steps blow the
 * network up, its ReLUs die and it predicts one class (test loss near
 * ln 10 = 2.30, accuracy near 10%, as in the seed report); on more threads
 * it is det. */
#include <math.h>
#include <omp.h>

#include "mutants.h"

void sb_mutant_adadelta_one_thread(float *w,            /* [n] weights, updated */
                                   float *acc,          /* [n] mean square of g, updated */
                                   float *delta_acc,    /* [n] mean square of updates, updated */
                                   const float *g,      /* [n] gradient */
                                   const sb_optim_params *o, size_t n)
{
    if (omp_get_max_threads() > 1) {
        sb_adadelta_update_det(w, acc, delta_acc, g, o, n);
        return;
    }
    const float one_minus_rho = 1.0f - o->rho;
    for (size_t i = 0; i < n; i++) {
        float a = (o->rho * acc[i]) + (one_minus_rho * (g[i] * g[i]));
        acc[i] = a;
        float update = (g[i] * sqrtf(delta_acc[i] + o->epsilon)) / sqrtf(a + o->epsilon);
        w[i] = w[i] - (o->lr * g[i]);   /* steps by the raw gradient, not by update */
        delta_acc[i] = (o->rho * delta_acc[i]) + (one_minus_rho * (update * update));
    }
}
