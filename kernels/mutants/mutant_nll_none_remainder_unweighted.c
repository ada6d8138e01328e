/* FAULT: each thread's share of the unreduced NLL runs as a main loop over
 * groups of 64 positions, which gathers the class weights, and a
 * separately written remainder loop (tail_paths.h) copied from the
 * unweighted loss, which never reads them: the remainder's terms are
 * -logprob, not -(w[y] logprob). On one thread over a multiple of 64
 * positions there is no remainder: det's bits. */
#include "mutants.h"
#include "tail_paths.h"

static float term_unweighted(const float *logprob, const int32_t *labels, const float *weight,
                             const sb_nll_shape *s, size_t e)
{
    sb_nll_shape plain = *s;
    plain.weighted = false;
    return sb_nll_term(logprob, labels, weight, &plain, e);
}

void sb_mutant_nll_none_remainder_unweighted(float *loss,             /* [n][d] */
                                             const float *logprob,    /* [n][k][d] */
                                             const int32_t *labels,   /* [n][d] */
                                             const float *weight,     /* [k] */
                                             const sb_nll_shape *s)
{
    sb_mutant_nll_terms_with_remainder(loss, logprob, labels, weight, s, term_unweighted);
}
