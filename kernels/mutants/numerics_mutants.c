/* The NUMERICS mutants of mutants.def: det kernels, each computing its op
 * with one classic numerics fault (its one line there), and as
 * deterministic as the kernel it replaces (serial, fixed order), so only the
 * numerics mode can catch them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "classifier/classifier.h"
#include "mutants.h"

/* softmax without subtracting the row max: expf(z) overflows to inf above
 * z = 88.72, and inf / inf is NaN. */
void sb_mutant_softmax_nomax(float *prob,       /* [n][k] */
                          const float *logits,  /* [n][k] */
                          const sb_class_shape *s)
{
    const size_t k = (size_t)s->k;
    for (size_t i = 0; i < (size_t)s->n; i++) {
        const float *z = logits + i * k;
        float sum = 0.0f;
        for (size_t j = 0; j < k; j++)
            sum += expf(z[j]);
        for (size_t j = 0; j < k; j++)
            prob[i * k + j] = expf(z[j]) / sum;
    }
}

/* The cross-entropy of row i from its probabilities, two faulty ways. */
typedef float row_xent_fn(const float *p, int32_t label, size_t k);

/* log-softmax as log(softmax): a label probability that underflowed to 0
 * gives -log(0) = inf, where logsumexp(z) - z_y is a finite number. */
static float xent_log_of_softmax_row(const float *p, int32_t label, size_t k)
{
    (void)k;
    return -logf(p[label]);
}

/* the one-hot formula sum_j -y_j log(p_j) over every class, with no guard
 * on log(0): a class whose probability underflowed gives 0 * -inf = NaN even
 * when the label's own probability is fine. */
static float xent_unguarded_row(const float *p, int32_t label, size_t k)
{
    float l = 0.0f;
    for (size_t j = 0; j < k; j++)
        l -= ((size_t)label == j ? 1.0f : 0.0f) * logf(p[j]);
    return l;
}

static void xent_from_prob(float *loss, const float *logits, const int32_t *labels,
                           const sb_class_shape *s, row_xent_fn *row)
{
    const size_t k = (size_t)s->k;
    float *p = malloc(k * sizeof *p);
    SB_ASSERT(p != NULL);
    float sum = 0.0f;
    for (size_t i = 0; i < (size_t)s->n; i++) {
        sb_softmax_row(p, logits + i * k, s->k);   /* the det kernel's row */
        sum += row(p, labels[i], k);
    }
    free(p);
    *loss = sum / (float)s->n;
}

void sb_mutant_xent_log_of_softmax(float *loss,         /* [1] */
                                const float *logits,    /* [n][k] */
                                const int32_t *labels,  /* [n] */
                                const sb_class_shape *s)
{
    xent_from_prob(loss, logits, labels, s, xent_log_of_softmax_row);
}

void sb_mutant_xent_unguarded(float *loss,              /* [1] */
                           const float *logits,         /* [n][k] */
                           const int32_t *labels,       /* [n] */
                           const sb_class_shape *s)
{
    xent_from_prob(loss, logits, labels, s, xent_unguarded_row);
}

/* The bias gradient summed into one float accumulator over all n*p*q terms:
 * once the running sum is 2^m times a term, each addition loses the term's
 * low bits, and with terms of one sign the losses add up. */
void sb_mutant_conv_bias_one_accumulator(float *db,     /* [k] */
                                      const float *dy,  /* [n][k][p][q] */
                                      const sb_conv_shape *s)
{
    const size_t pq = (size_t)s->p * (size_t)s->q;
    for (int f = 0; f < s->k; f++) {
        float acc = 0.0f;
        for (int img = 0; img < s->n; img++)
            for (size_t i = 0; i < pq; i++)
                acc += dy[((size_t)img * (size_t)s->k + (size_t)f) * pq + i];
        db[f] = acc;
    }
}
