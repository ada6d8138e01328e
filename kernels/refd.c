/* Dispatch of the double-precision evaluations (a table generated from
 * kernels.def), the shared sum bound, and the description of an element's
 * inputs. */
#include <math.h>
#include <string.h>

#include "gemm/sb_gemm.h"
#include "refd_sums.h"

/* A double evaluation is of output 0, the only one (kernels.def). */
#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, refd, signature) \
    SB_IF_##refd(_Static_assert(SB_COUNT_##outputs == 1, #name ": a REFD op has one output");)
#include "kernels.def"
#undef SB_OP

static sb_refd_fn *const evaluations[SB_OP_COUNT] = {
#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, refd, signature) \
    [SB_OP_##name] = SB_CHOOSE_##refd(sb_##name##_refd, NULL),
#include "kernels.def"
#undef SB_OP
};

bool sb_refd_supported(sb_op op)
{
    return (unsigned)op < SB_OP_COUNT && evaluations[op] != NULL;
}

void sb_refd_eval(double *value, double *bound, const sb_op_call *c, int out_index,
                  sb_family f)
{
    SB_ASSERT(sb_refd_supported(c->op) && out_index == 0 && c->n_out == 1);
    evaluations[c->op](value, bound, c, f);
}

double sb_refd_sum_bound(double abs_sum, double m, double path)
{
    const double own = 2.0 * m * 0x1p-53;
    return (sb_gamma(path + 1.0) + own) * abs_sum + m * SB_REFD_UNDERFLOW;
}

double sb_refd_sum_path(sb_family f, double m, double chunks)
{
    if (f != SB_FAMILY_DET)
        return m;
    return fmin(m, (double)SB_GEMM_KC + chunks);
}

/* ---- describing an element's inputs --------------------------------------- */

static void append(char *buf, size_t len, const char *fmt, double v)
{
    size_t used = strlen(buf);
    if (used + 1 < len)
        snprintf(buf + used, len - used, fmt, v);
}

/* Elementwise ops: the element's own inputs. */
static void describe_elements(char *buf, size_t len, const sb_op_call *c, size_t index)
{
    for (int i = 0; i < c->n_in; i++) {
        append(buf, len, i ? " in%.0f=" : "in%.0f=", (double)i);
        append(buf, len, "%.9g", (double)SB_REFD_IN(c, i)[index]);
    }
}

/* Classifier ops: the row of the element (softmax, gradient; log-softmax's
 * rows of classes d apart in its (N, C, d) layout, row i d + p), or of the
 * first row holding a non-finite value or, failing that, row 0 (the ops whose
 * output is one value over the batch). */
static void describe_row(char *buf, size_t len, const sb_op_call *c, size_t index)
{
    const int k = c->cls.k;
    const size_t d = c->cls.d > 1 ? (size_t)c->cls.d : 1;
    const float *z = SB_REFD_IN(c, 0);
    size_t row = index / ((size_t)k * d) * d + index % d;
    if (sb_op_roles_of(c->op).out[0] == SB_ROLE_scalar) {
        row = 0;
        for (size_t i = 0; i < (size_t)c->cls.n * (size_t)k; i++)
            if (!isfinite(z[i])) {
                row = i / (size_t)k;
                break;
            }
    }
    const size_t at = row / d * (size_t)k * d + row % d;
    append(buf, len, "row %.0f:", (double)row);
    for (int j = 0; j < k && j < 16; j++)
        append(buf, len, " %.9g", (double)z[at + (size_t)j * d]);
    if (k > 16)
        append(buf, len, " ... (%.0f values)", (double)k);
    if (sb_op_params_of(c->op) == SB_PARAMS_cls && c->n_in > 1)
        append(buf, len, " label=%.0f", (double)SB_REFD_LABELS(c, 1)[row]);
}

/* Ops that read a window or a reduction of many values: how large the
 * float inputs got (token ids are not magnitudes: only named). */
static void describe_magnitudes(char *buf, size_t len, const sb_op_call *c)
{
    for (int i = 0; i < c->n_in; i++) {
        if (c->in[i].dtype == SB_DTYPE_I32) {
            append(buf, len, i ? "; in%.0f: tokens" : "in%.0f: tokens", (double)i);
            continue;
        }
        const float *x = SB_REFD_IN(c, i);
        size_t n = sb_tensor_count(&c->in[i]), nonfinite = 0;
        double amax = 0.0;
        for (size_t e = 0; e < n; e++) {
            if (!isfinite(x[e]))
                nonfinite++;
            else
                amax = fmax(amax, fabs((double)x[e]));
        }
        append(buf, len, i ? "; in%.0f:" : "in%.0f:", (double)i);
        append(buf, len, " max|finite|=%.9g", amax);
        append(buf, len, " non-finite=%.0f", (double)nonfinite);
    }
}

void sb_refd_describe_inputs(char *buf, size_t len, const sb_op_call *c, int out_index,
                             size_t index)
{
    (void)out_index;
    if (len == 0)
        return;
    buf[0] = '\0';
    const sb_op_params p = sb_op_params_of(c->op);
    if (!sb_refd_supported(c->op))
        snprintf(buf, len, "(not described)"); /* not evaluated in double */
    else if (p == SB_PARAMS_cls || p == SB_PARAMS_clsd)
        describe_row(buf, len, c, index);
    else if (p == SB_PARAMS_count && sb_op_roles_of(c->op).out[0] != SB_ROLE_scalar)
        describe_elements(buf, len, c, index);
    else
        describe_magnitudes(buf, len, c);
}
