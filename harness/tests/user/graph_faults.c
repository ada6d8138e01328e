/* A user's program whose probes get the graph wrong, one way per kernel
 * (test_graph.sh): each must stop its golden with a one-line error naming
 * the probe and step, except `external`, which declares that it names an
 * input it never probes and gets a warning. `clean` is right. With a
 * resume hook: `stray` probes steps its process does not run (a run that
 * stops must fail, naming the probe), `external_resumed` runs its steps
 * and names an outside input (its resumed run is its golden);
 * `steps_unhooked` asks for its steps with no hook (its run must fail);
 * `restored_named` names its restored tensor and `restored_unnamed` does
 * not (its resumed run must be warned of its "?" input). */
#include "samebits.h"

typedef struct fault {
    const char *input;          /* the name y's probe gives its input */
    int64_t y_step;             /* the step of y's second probe */
    const char *op;             /* y's op */
} fault;

static sb_status fault_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    const fault *f = ctx;
    float x[4] = {1, 2, 3, 4}, y[4] = {2, 4, 6, 8};
    sb_tensor tx = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = x};
    sb_tensor ty = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = y};
    const char *inputs[] = {f->input};
    sb_probe_point px = {.step = 0, .name = "x", .op = "source", .tensor = &tx};
    sb_probe_point py = {.step = 0, .name = "y", .op = f->op, .tensor = &ty,
                         .inputs = inputs, .n_inputs = 1};
    probe(probe_ctx, &px);
    probe(probe_ctx, &py);
    py.step = f->y_step;
    py.op = "twice";
    probe(probe_ctx, &py);
    return SB_OK;
}

/* x at step 0, then y = 2x at each step this process runs */
static sb_status stepped_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    const fault *f = ctx;
    float x[4] = {1, 2, 3, 4}, y[4] = {2, 4, 6, 8};
    sb_tensor tx = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = x};
    sb_tensor ty = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = y};
    const char *inputs[] = {"x", f->input};
    sb_user_steps steps = sb_user_run_steps(probe_ctx);
    sb_probe_point px = {.step = 0, .name = "x", .op = "source", .tensor = &tx};
    if (steps.first == 0)
        probe(probe_ctx, &px);
    for (int64_t s = steps.first; s < steps.end; s++) {
        sb_probe_point py = {.step = s, .name = "y", .op = f->op, .tensor = &ty,
                             .inputs = inputs, .n_inputs = 2, .exact = true};
        probe(probe_ctx, &py);
    }
    return SB_OK;
}

/* w at step 0, then y = 2 w at each step this process runs, its input named
 * after w's last probe: in a resumed process, w's probe before the stop
 * when *ctx (sb_probes_restored), else nothing ("?"). */
static sb_status restored_run(void *ctx, sb_probe_fn *probe, void *probe_ctx)
{
    const bool *name_restored = ctx;
    float w[4] = {1, 2, 3, 4}, y[4] = {2, 4, 6, 8};
    sb_user_steps steps = sb_user_run_steps(probe_ctx);
    sb_probes pc = sb_probes_begin(probe, probe_ctx);
    if (steps.first == 0)
        sb_probe_source(&pc, 0, "w", sb_f32(w, 4));
    else if (*name_restored)
        sb_probes_restored(&pc, w, "w");
    const sb_tensor in = sb_f32(w, 4);
    for (int64_t s = steps.first; s < steps.end; s++)
        sb_probe_op(&pc, s, "y", "twice", sb_f32(y, 4), 1, &in, NULL, NULL);
    return sb_probes_end(&pc);
}

/* The resume hook of a kernel with no state: a byte, read back. */
static sb_status nothing_save(void *ctx, FILE *f)
{
    (void)ctx;
    return fputc('\n', f) == '\n' ? SB_OK : SB_ERR_IO;
}

static sb_status nothing_restore(void *ctx, FILE *f)
{
    (void)ctx;
    return fgetc(f) == '\n' ? SB_OK : SB_ERR_INPUT;
}

static fault clean = {"x", 1, "twice"}, misspelt = {"xx", 1, "twice"},
                   same_step = {"x", 0, "twice"}, no_op = {"x", 1, NULL},
                   external = {"outside", 1, "twice"};
static bool named = true, unnamed = false;

int main(int argc, char **argv)
{
    const sb_user_kernel k[] = {
        {.name = "clean", .version = "1", .run = fault_run, .ctx = &clean},
        {.name = "misspelt", .version = "1", .run = fault_run, .ctx = &misspelt},
        {.name = "same_step", .version = "1", .run = fault_run, .ctx = &same_step},
        {.name = "no_op", .version = "1", .run = fault_run, .ctx = &no_op},
        {.name = "external", .version = "1", .run = fault_run, .ctx = &external,
         .external_inputs = true},
        {.name = "stray", .version = "1", .run = fault_run, .ctx = &clean, .steps = 2,
         .save = nothing_save, .restore = nothing_restore},
        {.name = "external_resumed", .version = "1", .run = stepped_run, .ctx = &external,
         .external_inputs = true, .steps = 3, .save = nothing_save,
         .restore = nothing_restore},
        {.name = "steps_unhooked", .version = "1", .run = stepped_run, .ctx = &clean},
        {.name = "restored_named", .version = "1", .run = restored_run, .ctx = &named,
         .steps = 3, .save = nothing_save, .restore = nothing_restore},
        {.name = "restored_unnamed", .version = "1", .run = restored_run, .ctx = &unnamed,
         .steps = 3, .save = nothing_save, .restore = nothing_restore},
    };
    return sb_user_main_kernels(argc, argv, k, sizeof k / sizeof k[0]);
}
