/* Judging probes: the float result of an op against its double value and
 * bound, element by element, and the first non-finite value of the run. */
#include <math.h>
#include <string.h>

#include "numerics.h"
#include "sb_refd.h"
#include "sb_refd_floor.h"

void sb_numerics_result_init(sb_numerics_result *r, sb_family f)
{
    memset(r, 0, sizeof *r);
    r->family = f;
    r->first_beyond = -1;
}

void sb_numerics_result_free(sb_numerics_result *r)
{
    free(r->probes);
    sb_numerics_result_init(r, r->family);
}

static double ratio_of(double err, double bound)
{
    if (!(err > 0.0))
        return 0.0;
    return bound > 0.0 ? err / bound : (double)INFINITY;
}

static void copy_name(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "?");
}

/* The first non-finite element of a float tensor, or its count. */
static size_t first_nonfinite(const sb_tensor *t)
{
    const size_t n = sb_tensor_count(t);
    if (t->dtype != SB_DTYPE_F32)
        return n;
    const float *x = t->data;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return i;
    return n;
}

static void note_nonfinite(sb_numerics_result *r, const sb_probe_point *p, const double *value,
                           sb_numerics_inputs_fn *inputs_fn, const void *inputs_ctx)
{
    if (r->nonfinite.found)
        return;
    const size_t i = first_nonfinite(p->tensor);
    if (i == sb_tensor_count(p->tensor))
        return;
    sb_numerics_nonfinite *nf = &r->nonfinite;
    nf->found = true;
    nf->step = p->step;
    copy_name(nf->name, sizeof nf->name, p->name);
    copy_name(nf->op, sizeof nf->op, p->op);
    nf->index = i;
    nf->value = ((const float *)p->tensor->data)[i];
    nf->have_expect = value != NULL;
    nf->expect = value ? value[i] : 0.0;
    if (inputs_fn)
        inputs_fn(nf->inputs, sizeof nf->inputs, inputs_ctx, i);
    else
        snprintf(nf->inputs, sizeof nf->inputs, "%s", strcmp(nf->op, "source") == 0
                     ? "(data entering the run)" : "(op not evaluated)");
}

/* Element i of a probed output as a double: a float, or an int32 index
 * (exact in double). */
static double got_at(const sb_tensor *t, size_t i)
{
    return t->dtype == SB_DTYPE_I32 ? (double)((const int32_t *)t->data)[i]
                                    : (double)((const float *)t->data)[i];
}

sb_status sb_numerics_check(sb_numerics_result *r, const sb_probe_point *p, const double *value,
                            const double *bound, sb_numerics_inputs_fn *inputs_fn,
                            const void *inputs_ctx)
{
    const bool index = p->tensor->dtype == SB_DTYPE_I32;
    SB_ASSERT(index || p->tensor->dtype == SB_DTYPE_F32);
    note_nonfinite(r, p, value, inputs_fn, inputs_ctx);
    if (r->n_probes == r->cap_probes) {
        size_t cap = r->cap_probes ? 2 * r->cap_probes : 64;
        sb_numerics_probe *more = realloc(r->probes, cap * sizeof *more);
        if (!more)
            return SB_ERR_NOMEM;
        r->probes = more;
        r->cap_probes = cap;
    }
    sb_numerics_probe *q = &r->probes[r->n_probes];
    memset(q, 0, sizeof *q);
    q->step = p->step;
    copy_name(q->name, sizeof q->name, p->name);
    copy_name(q->op, sizeof q->op, p->op);
    q->count = sb_tensor_count(p->tensor);

    double worst_ratio = -1.0;
    for (size_t i = 0; i < q->count; i++) {
        const double got = got_at(p->tensor, i);
        /* an index (exact in both) has no ulp: its distance is the error */
        const double err = index ? fabs(got - value[i]) : sb_refd_error((float)got, value[i]);
        const double ratio = ratio_of(err, bound[i]);
        const double mag = fabs(value[i]);
        const double rel = err > 0.0 ? (mag > 0.0 ? err / mag : (double)INFINITY) : 0.0;
        const int64_t ulp = index ? 0 : sb_ulp_distance((float)got, (float)value[i]);
        q->max_abs = fmax(q->max_abs, err);
        q->max_rel = fmax(q->max_rel, rel);
        q->max_ulp = fmax(q->max_ulp, index ? err
                                            : ulp == INT64_MAX ? (double)INFINITY : (double)ulp);
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            q->worst = i;
        }
    }
    if (q->count > 0) {
        q->ratio = worst_ratio;
        q->got = got_at(p->tensor, q->worst);
        q->expect = value[q->worst];
        q->bound = bound[q->worst];
    }
    if (q->ratio > 1.0) {
        if (inputs_fn)
            inputs_fn(q->inputs, sizeof q->inputs, inputs_ctx, q->worst);
        if (r->first_beyond < 0)
            r->first_beyond = (long)r->n_probes;
        r->n_beyond++;
    }
    r->n_probes++;
    return SB_OK;
}

static void call_inputs(char *buf, size_t len, const void *ctx, size_t index)
{
    sb_refd_describe_inputs(buf, len, ctx, 0, index);
}

void sb_numerics_probe_fn(void *ctx, const sb_probe_point *p)
{
    sb_numerics_result *r = ctx;
    if (r->status != SB_OK)
        return;
    /* only sb_op_call_bound says what its context is: the op call */
    const sb_op_call *c = p->bound == sb_op_call_bound ? p->bound_ctx : NULL;
    if (!c || !sb_refd_supported(c->op) || p->out_index != 0 ||
        (p->tensor->dtype != SB_DTYPE_F32 && p->tensor->dtype != SB_DTYPE_I32)) {
        note_nonfinite(r, p, NULL, c ? call_inputs : NULL, c);
        r->n_unchecked++;
        return;
    }
    const size_t n = sb_tensor_count(p->tensor);
    double *value = malloc((n ? n : 1) * sizeof *value);
    double *bound = malloc((n ? n : 1) * sizeof *bound);
    if (!value || !bound) {
        r->status = SB_ERR_NOMEM;
    } else {
        sb_refd_eval(value, bound, c, 0, r->family);
        r->status = sb_numerics_check(r, p, value, bound, call_inputs, c);
    }
    free(value);
    free(bound);
}

sb_numerics_finding sb_numerics_finding_of(const sb_numerics_result *r)
{
    if (r->nonfinite.found)
        return SB_FINDING_NONFINITE;
    return r->n_beyond > 0 ? SB_FINDING_BEYOND_BOUND : SB_FINDING_CLEAN;
}

const char *sb_numerics_finding_probe(const sb_numerics_result *r)
{
    if (r->nonfinite.found)
        return r->nonfinite.name;
    return r->first_beyond >= 0 ? r->probes[r->first_beyond].name : "";
}

const char *sb_numerics_finding_name(sb_numerics_finding f)
{
    static const char *const names[SB_FINDING_COUNT] = {"clean", "beyond-bound", "non-finite"};
    return (unsigned)f < SB_FINDING_COUNT ? names[f] : "?";
}
