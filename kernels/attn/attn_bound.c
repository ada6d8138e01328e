/* Reordering bounds of attention_fwd and attention_bwd: every family
 * evaluates the same algorithm (attn.h) and differs only in the order of
 * its sums over keys and queries, and each order lies within the forward
 * error bound E of attn_refd.c of the exact value (that bound covers any
 * order: it charges every term of a sum over m terms with gamma(m)), so two
 * orders differ by at most 2E per element, rounded up to float. Where the
 * exact value or its bound is not finite (NaN or Inf inputs, overflow) the
 * bound is 0: no order explains a difference there. */
#include <stdlib.h>

#include "attn.h"

static void bound_from_error(float *bound, const double *value, const double *err, size_t n)
{
    for (size_t e = 0; e < n; e++) {
        const double b = 2.0 * err[e];
        float f = (float)b;
        if ((double)f < b)
            f = nextafterf(f, INFINITY);
        bound[e] = isfinite(value[e]) && isfinite(b) ? f : 0.0f;
    }
}

typedef struct eval_buffers {
    double *value, *err;
} eval_buffers;

static eval_buffers buffers_new(size_t n)
{
    eval_buffers e = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    SB_ASSERT(e.value != NULL && e.err != NULL);
    return e;
}

static void buffers_free(eval_buffers *e)
{
    free(e->value);
    free(e->err);
}

void sb_attention_fwd_bound(float *bound,      /* [b][t][C] */
                            const float *qkv,  /* [b][t][(h + 2 kv) d] */
                            const sb_attn_shape *s)
{
    const size_t n = (size_t)s->b * (size_t)s->t * (size_t)sb_attn_width(s);
    eval_buffers e = buffers_new(n);
    sb_attn_fwd_eval(e.value, e.err, qkv, s);
    bound_from_error(bound, e.value, e.err, n);
    buffers_free(&e);
}

void sb_attention_bwd_bound(float *bound,      /* [b][t][(h + 2 kv) d] */
                            const float *dy,   /* [b][t][C] */
                            const float *qkv,  /* [b][t][(h + 2 kv) d] */
                            const sb_attn_shape *s)
{
    const size_t n = (size_t)s->b * (size_t)s->t * (size_t)sb_attn_ld(s);
    eval_buffers e = buffers_new(n);
    sb_attn_bwd_eval(e.value, e.err, dy, qkv, s);
    bound_from_error(bound, e.value, e.err, n);
    buffers_free(&e);
}
