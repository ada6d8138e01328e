/* Probing a user's program op by op: one call per op of the kernel list
 * that probes the op's output with its inputs' names, the op's name and its
 * reordering bound filled in, and one for an op of the user's own.
 *
 *     static sb_status my_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
 *     {   sb_probes pc = sb_probes_begin(probe, probe_ctx);
 *         sb_probe_source(&pc, 0, "x", sb_f32(x, N, IN));
 *         my_gemm(y, x, w, b);    // y [N][OUT] = x [N][IN] w [IN][OUT] + b
 *         sb_probe_dense_fwd(&pc, 0, "fc1.out", y, x, w, b,
 *                            &(sb_dense_shape){N, IN, OUT});
 *         return sb_probes_end(&pc); }
 *
 * An op's helper, sb_probe_<op>, takes the op's own signature (kernels.def;
 * the same as its bound function's, sb_<op>_bound) after the probes, the
 * step and the probe's name; every helper and bound function is declared in
 * sb_op_probes.h and listed with its tensors' layouts in
 * harness/examples/API.md (both made from the kernel list by
 * harness/user/api_gen.c). An input is named by the latest probe of the
 * same data pointer (sb_probe_source, or an earlier op's output); a pointer
 * no probe has had is named SB_TRACE_UNTRACED ("?": nothing vouches for its
 * bits). An update op (sgd_update, adam_update, ...) probes its first
 * output, the parameter, with the gradient and the parameter's previous
 * probe as inputs; its other outputs (the optimiser's state) are not read
 * and may be NULL. A helper returns SB_OK, or SB_ERR_SHAPE for an absurd
 * shape (said on stderr with the step and probe), and sb_probes_end returns
 * the first failure of the run: return it from the run function. */
#ifndef SB_PROBE_OPS_H
#define SB_PROBE_OPS_H

#include "sb_kernels.h"
#include "sb_probe.h"

/* The latest probe name of each data pointer probed. */
typedef struct sb_probe_name {
    const void *data;
    char *name;
} sb_probe_name;

typedef struct sb_probes {
    sb_probe_fn *probe;
    void *ctx;
    sb_status status;           /* the first failure */
    sb_probe_name *names;
    size_t n_names, cap_names;
} sb_probes;

sb_probes sb_probes_begin(sb_probe_fn *probe, void *probe_ctx);
/* Frees what pc holds; the first failure of its probes, else SB_OK. */
sb_status sb_probes_end(sb_probes *pc);

/* A run resumed from a checkpoint (samebits.h, sb_user_run_steps): data,
 * restored, is named as its latest probe was in the process that saved it
 * ("fc1.w"), so that the ops that read it name that probe; nothing is
 * probed. */
sb_status sb_probes_restored(sb_probes *pc, const void *data, const char *name);
/* Data entering the run (op "source", no inputs): inputs, initial weights. */
sb_status sb_probe_source(sb_probes *pc, int64_t step, const char *name, sb_tensor t);
/* An op of the user's own: its output out, made from in[0..n_in), named
 * after their latest probes; bound (NULL: the op has no reduction, any
 * difference is a bug) with bound_ctx, as sb_probe_point. */
sb_status sb_probe_op(sb_probes *pc, int64_t step, const char *name, const char *op,
                      sb_tensor out, int n_in, const sb_tensor *in, sb_bound_fn *bound,
                      const void *bound_ctx);

/* A float32 tensor over data with the dimensions given, outermost first:
 * sb_f32(x, N, IN) is x [N][IN]. */
#define sb_f32(data_, ...)                                                      \
    ((sb_tensor){.dtype = SB_DTYPE_F32,                                         \
                 .ndim = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                 .dim = {__VA_ARGS__}, .data = (data_)})
/* The same for int32 (labels, tokens). */
#define sb_i32(data_, ...)                                                      \
    ((sb_tensor){.dtype = SB_DTYPE_I32,                                         \
                 .ndim = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                 .dim = {__VA_ARGS__}, .data = (data_)})

#include "sb_op_probes.h"

#endif
