/* Numerics variants of det kernels: each computes its op with one classic
 * numerics fault, and is as deterministic as the kernel it replaces (serial,
 * fixed order), so only the numerics mode can catch it. The fault of each is
 * its one line in the table at the end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sb_numerics_mutants.h"

/* softmax without subtracting the row max: expf(z) overflows to inf above
 * z = 88.72, and inf / inf is NaN. */
static void softmax_nomax(float *prob,          /* [n][k] */
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

/* the stable softmax of one row, as the det kernel computes it */
static void softmax_row(float *p, const float *z, size_t k)
{
    float m = z[0], sum = 0.0f;
    for (size_t j = 1; j < k; j++)
        m = z[j] > m ? z[j] : m;
    for (size_t j = 0; j < k; j++)
        sum += expf(z[j] - m);
    for (size_t j = 0; j < k; j++)
        p[j] = expf(z[j] - m) / sum;
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
        softmax_row(p, logits + i * k, k);
        sum += row(p, labels[i], k);
    }
    free(p);
    *loss = sum / (float)s->n;
}

static void xent_log_of_softmax(float *loss,            /* [1] */
                                const float *logits,    /* [n][k] */
                                const int32_t *labels,  /* [n] */
                                const sb_class_shape *s)
{
    xent_from_prob(loss, logits, labels, s, xent_log_of_softmax_row);
}

static void xent_unguarded(float *loss,                 /* [1] */
                           const float *logits,         /* [n][k] */
                           const int32_t *labels,       /* [n] */
                           const sb_class_shape *s)
{
    xent_from_prob(loss, logits, labels, s, xent_unguarded_row);
}

/* The bias gradient summed into one float accumulator over all n*p*q terms:
 * once the running sum is 2^m times a term, each addition loses the term's
 * low bits, and with terms of one sign the losses add up. */
static void conv_bias_one_accumulator(float *db,        /* [k] */
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

static void install_softmax_nomax(sb_kernel_table *t) { t->softmax_fwd = softmax_nomax; }
static void install_xent_log_of_softmax(sb_kernel_table *t) { t->xent_loss = xent_log_of_softmax; }
static void install_xent_unguarded(sb_kernel_table *t) { t->xent_loss = xent_unguarded; }
static void install_conv_bias(sb_kernel_table *t) { t->conv2d_bwd_bias = conv_bias_one_accumulator; }

static const sb_numerics_mutant mutants[] = {
    {"softmax_nomax", SB_OP_softmax_fwd, install_softmax_nomax,
     "softmax without subtracting the row max: expf overflows on logits above 88.7"},
    {"xent_log_of_softmax", SB_OP_xent_loss, install_xent_log_of_softmax,
     "log-softmax computed as log(softmax(z)): the log of a probability that underflowed to 0"},
    {"xent_unguarded", SB_OP_xent_loss, install_xent_unguarded,
     "cross-entropy as sum_j -y_j*log(p_j) with no guard on log(0): 0*-inf = NaN"},
    {"conv_bias_one_accumulator", SB_OP_conv2d_bwd_bias, install_conv_bias,
     "bias gradient in one float accumulator over n*p*q terms instead of fixed chunks"},
};

const sb_numerics_mutant *sb_numerics_mutants(size_t *count)
{
    *count = sizeof mutants / sizeof mutants[0];
    return mutants;
}

const sb_numerics_mutant *sb_numerics_mutant_find(const char *name)
{
    for (size_t i = 0; i < sizeof mutants / sizeof mutants[0]; i++)
        if (strcmp(mutants[i].name, name) == 0)
            return &mutants[i];
    return NULL;
}
