/* Dispatch of the double-precision evaluations, the shared sum bound, and the
 * description of an element's inputs. Switches with no default, so -Wswitch
 * names an op added to the list and not handled here. */
#include <math.h>
#include <string.h>

#include "gemm/sb_gemm.h"
#include "refd.h"

bool sb_refd_supported(sb_op op)
{
    switch (op) {
    case SB_OP_conv2d_fwd:
    case SB_OP_conv2d_bwd_data:
    case SB_OP_conv2d_bwd_filter:
    case SB_OP_conv2d_bwd_bias:
    case SB_OP_dense_fwd:
    case SB_OP_dense_bwd_data:
    case SB_OP_dense_bwd_weights:
    case SB_OP_dense_bwd_bias:
    case SB_OP_relu_fwd:
    case SB_OP_relu_bwd:
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd:
    case SB_OP_dropout_fwd:
    case SB_OP_dropout_bwd:
    case SB_OP_softmax_fwd:
    case SB_OP_xent_loss:
    case SB_OP_softmax_xent_bwd:
    case SB_OP_accuracy:
        return true;
    case SB_OP_dropout_mask:
    case SB_OP_sgd_update:
    case SB_OP_rmsprop_update:
    case SB_OP_adam_update:
    case SB_OP_adadelta_update:
    case SB_OP_COUNT:
        return false;
    }
    return false;
}

void sb_refd_eval(double *value, double *bound, const sb_op_call *c, int out_index,
                  sb_family f)
{
    SB_ASSERT(sb_refd_supported(c->op) && out_index == 0 && c->n_out == 1);
    switch (c->op) {
    case SB_OP_conv2d_fwd:
    case SB_OP_conv2d_bwd_data:
    case SB_OP_conv2d_bwd_filter:
    case SB_OP_conv2d_bwd_bias:
        refd_conv(value, bound, c, f);
        return;
    case SB_OP_dense_fwd:
    case SB_OP_dense_bwd_data:
    case SB_OP_dense_bwd_weights:
    case SB_OP_dense_bwd_bias:
        refd_dense(value, bound, c, f);
        return;
    case SB_OP_relu_fwd:
    case SB_OP_relu_bwd:
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd:
    case SB_OP_dropout_fwd:
    case SB_OP_dropout_bwd:
        refd_elementwise(value, bound, c);
        return;
    case SB_OP_softmax_fwd:
    case SB_OP_xent_loss:
    case SB_OP_softmax_xent_bwd:
    case SB_OP_accuracy:
        refd_classifier(value, bound, c);
        return;
    case SB_OP_dropout_mask:
    case SB_OP_sgd_update:
    case SB_OP_rmsprop_update:
    case SB_OP_adam_update:
    case SB_OP_adadelta_update:
    case SB_OP_COUNT:
        break;
    }
    SB_ASSERT(!"op not evaluated in double");
}

double refd_sum_bound(double abs_sum, double m, double path)
{
    const double own = 2.0 * m * 0x1p-53;
    return (sb_gamma(path + 1.0) + own) * abs_sum + m * REFD_UNDERFLOW;
}

double refd_sum_path(sb_family f, double m, double chunks)
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

void sb_refd_describe_inputs(char *buf, size_t len, const sb_op_call *c, int out_index,
                             size_t index)
{
    (void)out_index;
    if (len == 0)
        return;
    buf[0] = '\0';
    switch (c->op) {
    case SB_OP_relu_fwd:
    case SB_OP_relu_bwd:
    case SB_OP_dropout_fwd:
    case SB_OP_dropout_bwd:
        for (int i = 0; i < c->n_in; i++) {
            append(buf, len, i ? " in%.0f=" : "in%.0f=", (double)i);
            append(buf, len, "%.9g", (double)REFD_IN(c, i)[index]);
        }
        return;
    case SB_OP_softmax_fwd:
    case SB_OP_xent_loss:
    case SB_OP_softmax_xent_bwd:
    case SB_OP_accuracy: {
        /* the row of the element (softmax, gradient), or of the first row
         * holding a non-finite value or, failing that, row 0 (scalar ops) */
        const int k = c->cls.k;
        const float *z = REFD_IN(c, 0);
        size_t row = index / (size_t)k;
        if (c->op == SB_OP_xent_loss || c->op == SB_OP_accuracy) {
            row = 0;
            for (size_t i = 0; i < (size_t)c->cls.n * (size_t)k; i++)
                if (!isfinite(z[i])) {
                    row = i / (size_t)k;
                    break;
                }
        }
        append(buf, len, "row %.0f:", (double)row);
        for (int j = 0; j < k && j < 16; j++)
            append(buf, len, " %.9g", (double)z[row * (size_t)k + (size_t)j]);
        if (k > 16)
            append(buf, len, " ... (%.0f values)", (double)k);
        if (c->n_in > 1)
            append(buf, len, " label=%.0f", (double)REFD_LABELS(c, 1)[row]);
        return;
    }
    case SB_OP_conv2d_fwd:
    case SB_OP_conv2d_bwd_data:
    case SB_OP_conv2d_bwd_filter:
    case SB_OP_conv2d_bwd_bias:
    case SB_OP_dense_fwd:
    case SB_OP_dense_bwd_data:
    case SB_OP_dense_bwd_weights:
    case SB_OP_dense_bwd_bias:
    case SB_OP_maxpool_fwd:
    case SB_OP_maxpool_bwd: {
        /* a reduction reads many values: say how large the inputs got */
        for (int i = 0; i < c->n_in; i++) {
            const float *x = REFD_IN(c, i);
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
        return;
    }
    case SB_OP_dropout_mask:
    case SB_OP_sgd_update:
    case SB_OP_rmsprop_update:
    case SB_OP_adam_update:
    case SB_OP_adadelta_update:
    case SB_OP_COUNT:
        snprintf(buf, len, "(not described)");
        return;
    }
}
