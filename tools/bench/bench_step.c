/* samebits-bench-step: seconds per training step of a model (det family;
 * --model keras_mnist_cnn, the seed model, by default, or char_gpt at its
 * default size) in this process, with or without hashing every probe into a trace
 * (the harness's sb_trace_add_probe), for tools/bench/bench-all. Hashing is
 * done as `samebits run` does it: the model's ops hash the leaves of large
 * tensors while they are in cache (sb_hash_leaf) unless --no-fuse, which
 * hashes every tensor after its op. Prints one JSON object. Steps are timed
 * from the first probe of a step to the first probe of the next, so weight
 * initialisation and the closing evaluation are not counted; the median
 * over steps 2..S is reported.
 *
 * With --hash it also times the hashing itself: the leaf hashes the ops make
 * (thread-seconds, summed over the threads that make them) and the probe
 * hook (its wall time times the thread count: while it runs the other
 * threads wait). Their sum over threads x the step's wall time is the
 * step's `hash_share_inside`, the median over the timed steps. Unlike the
 * difference between a hashed and an unhashed run, it is measured within
 * one run, so a slow phase of a shared machine cannot swamp it; it leaves
 * out what hashing costs the ops around it (caches, a blocked loop).
 *
 * Without --hash it also times each op of one more step after the timed
 * ones (the step's `ops`, for a per-op breakdown): at each probe of that
 * step the hook runs the probed op again, as the model called it (the op
 * call comes with the probe), three times, and keeps the median. The
 * reruns take the step's own buffers, so an op's inputs are where the step
 * left them; a rerun of an in-place update (the optimiser) moves the
 * weights once more, after every timed step.
 *
 * Without --hash it also times the ops of the last timed step in place
 * (`ops_in_place`, and that step's time `place_step_s`): each op from its
 * start (the model's op_start call) to its probe or to the next op's start,
 * whichever comes first (the seed CNN holds some probes until the next op
 * has run), cold caches and all, with nothing run again. An op that does
 * not start on its own has no time in place: the char GPT's AdamW update of
 * every parameter in one call is timed as its first parameter's. What the
 * step spends outside its ops in place is the model's glue and the probe
 * hook. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb_harness.h"
#include "sb_model.h"

/* one op of the profiled step: its probe's name (copied: some names live
 * in the model, freed when training returns), the op, median seconds */
typedef struct op_time {
    char name[64];
    const char *op;
    double s;
} op_time;

#define MAX_OPS 256 /* the char GPT probes about 130 ops a step */
#define OP_RERUNS 3

typedef struct step_clock {
    bool hash;
    int64_t profile_step;   /* the step whose ops are timed, or -1 */
    op_time ops[MAX_OPS];
    int n_ops;
    int64_t place_step;     /* the step whose ops are timed in place, or -1 */
    op_time placed[MAX_OPS];
    int n_placed;
    char started[64];       /* the probe of the op that started last in place_step, */
    const char *started_op; /* its op and start, until it ends */
    double started_at;
    sb_trace trace;
    int64_t step;       /* of the last probe seen */
    double *start;      /* start[s]: time of step s's first probe */
    double *hashed;     /* hashed[s]: hashing thread-seconds before it */
    int64_t max_steps;
} step_clock;

/* Thread-seconds spent hashing so far. */
static double hash_thread_s;

/* sb_hash_leaf, timed; the ops call it from their parallel loops. */
static void timed_leaf_hash(sb_leaf_digest *out, const void *bytes, size_t len)
{
    double t0 = omp_get_wtime();
    sb_hash_leaf(out, bytes, len);
    double dt = omp_get_wtime() - t0;
#pragma omp atomic
    hash_thread_s += dt;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs the probed op again (bound_ctx is its op call, sb_model_probe_op) and
 * notes its median time. */
static void time_op(step_clock *c, const sb_probe_point *p)
{
    /* a source has no op; an update's state is a later output of the op
     * timed at its first */
    if (!p->bound_ctx || p->out_index != 0 || c->n_ops == MAX_OPS)
        return;
    double s[OP_RERUNS];
    for (int r = 0; r < OP_RERUNS; r++) {
        double t0 = omp_get_wtime();
        sb_op_call_run(sb_kernels(SB_FAMILY_DET), p->bound_ctx);
        s[r] = omp_get_wtime() - t0;
    }
    op_time *o = &c->ops[c->n_ops++];
    snprintf(o->name, sizeof o->name, "%s", p->name);
    o->op = p->op;
    o->s = median(s, OP_RERUNS);
}

/* In place_step: the op that started last (probe `started`, op
 * `started_op`) ends at its probe or at the next op's start, whichever
 * comes first; its time is noted then. */
static void place_end(step_clock *c, double now)
{
    if (!c->started[0] || c->n_placed == MAX_OPS)
        return;
    op_time *o = &c->placed[c->n_placed++];
    snprintf(o->name, sizeof o->name, "%s", c->started);
    o->op = c->started_op;
    o->s = now - c->started_at;
    c->started[0] = '\0';
}

static void on_op_start(void *ctx, int64_t step, const char *probe, const char *op)
{
    step_clock *c = ctx;
    if (step != c->place_step)
        return;
    double now = omp_get_wtime();
    place_end(c, now);
    snprintf(c->started, sizeof c->started, "%s", probe);
    c->started_op = op;
    c->started_at = omp_get_wtime();
}

/* The probe of the op that started last ends it. */
static void time_in_place(step_clock *c, const sb_probe_point *p, double now)
{
    if (p->step == c->place_step && p->out_index == 0 && strcmp(p->name, c->started) == 0)
        place_end(c, now);
}

static void on_probe(void *ctx, const sb_probe_point *p)
{
    step_clock *c = ctx;
    time_in_place(c, p, omp_get_wtime());
    if (p->step == c->profile_step)
        time_op(c, p);
    if (p->step != c->step && p->step >= 1 && p->step <= c->max_steps + 1) {
        c->step = p->step;
        c->start[p->step] = omp_get_wtime();
        c->hashed[p->step] = hash_thread_s;
    }
    if (!c->hash)
        return;
    double t0 = omp_get_wtime();
    if (sb_trace_add_probe(&c->trace, p) != SB_OK) {
        fprintf(stderr, "bench-step: hashing a probe failed\n");
        exit(EXIT_FAILURE);
    }
    hash_thread_s += (omp_get_wtime() - t0) * omp_get_max_threads();
}

/* What each model trains on here: the seed case's model on enough digits
 * that no epoch ends (and no evaluation runs) among the timed steps and the
 * profiled one; the GPT on the fortunes text split as its cases split it
 * (its evaluation is due after 100 steps, and max_steps cuts it). */
static void model_run_ranges(sb_model_run *r, const char *model, int steps)
{
    if (strcmp(model, "char_gpt") == 0) {
        r->dataset = "fortunes";
        r->train_begin = 0, r->train_end = 2318000;
        r->test_begin = 2318000, r->test_end = 2576674;
    } else {
        r->dataset = "mnist";
        r->train_begin = 0, r->train_end = (int64_t)(steps + 2) * 128;
        r->test_begin = r->train_end, r->test_end = r->train_end + 400;
    }
}

int main(int argc, char **argv)
{
    int steps = 5;
    bool hash = false, fuse = true;
    const char *data_dir = NULL, *model = "keras_mnist_cnn";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model = argv[++i];
        else if (strcmp(argv[i], "--hash") == 0)
            hash = true;
        else if (strcmp(argv[i], "--no-fuse") == 0)
            fuse = false;
        else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc)
            data_dir = argv[++i];
        else {
            fprintf(stderr, "usage: samebits-bench-step [--model NAME] [--steps S] [--hash [--no-fuse]] "
                            "[--data-dir DIR]\n"
                            "(threads from OMP_NUM_THREADS)\n");
            return EXIT_FAILURE;
        }
    }
    if (steps < 3) {
        fprintf(stderr, "bench-step: --steps must be at least 3\n");
        return EXIT_FAILURE;
    }
    const sb_model_kind *kind = sb_model_find(model);
    /* at most 70: the CNN's (steps + 2) * 128 digits and 400 more fit in the 10,000 */
    if (!kind || steps > 70) {
        fprintf(stderr, "bench-step: %s\n", kind ? "--steps must be at most 70"
                                                 : "--model: keras_mnist_cnn or char_gpt");
        return EXIT_FAILURE;
    }
    sb_train_config cfg;
    kind->defaults(&cfg);
    cfg.seed = 1;
    /* steps 0 .. steps - 1 and step `steps`, whose start ends the last
     * timed one (and whose ops are profiled without --hash); the cut epoch
     * or evaluation period is not evaluated */
    cfg.max_steps = steps + 1;
    cfg.cut_unevaluated = true;
    step_clock clock = {.hash = hash, .profile_step = hash ? -1 : steps,
                        .place_step = hash ? -1 : steps - 1, .step = 0, .max_steps = steps};
    clock.start = calloc((size_t)steps + 2, sizeof *clock.start);
    clock.hashed = calloc((size_t)steps + 2, sizeof *clock.hashed);
    sb_trace_init(&clock.trace);
    sb_model_run run = {.k = sb_kernels(SB_FAMILY_DET), .cfg = &cfg, .data_dir = data_dir,
                        .hook = on_probe, .hook_ctx = &clock, .op_start = on_op_start,
                        .leaf_hash = hash && fuse ? timed_leaf_hash : NULL,
                        .what = "samebits-bench-step"};
    model_run_ranges(&run, model, steps);
    sb_epoch_metrics metrics[16];
    int n_metrics = 0;
    char err[512];
    sb_status st = kind->run(&run, metrics, &n_metrics, err, sizeof err);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return st == SB_ERR_INPUT ? 2 : EXIT_FAILURE;
    }
    /* step s lasts from start[s] to start[s+1]; the last step has no end mark */
    int n = 0, threads = omp_get_max_threads();
    double *sec = calloc((size_t)steps, sizeof *sec), *share = calloc((size_t)steps, sizeof *share);
    for (int s = 2; s < steps; s++, n++) {
        sec[n] = clock.start[s + 1] - clock.start[s];
        share[n] = (clock.hashed[s + 1] - clock.hashed[s]) / (threads * sec[n]);
    }
    printf("{\"model\": \"%s\", \"threads\": %d, \"hash\": %s, \"fused\": %s, "
           "\"steps_timed\": %d, \"step_s\": %.6f, \"probes\": %zu",
           model, threads, hash ? "true" : "false", run.leaf_hash ? "true" : "false", n,
           median(sec, n), clock.trace.n_records);
    if (hash)
        printf(", \"hash_share_inside\": %.5f", median(share, n));
    else {
        printf(", \"ops\": [");
        for (int i = 0; i < clock.n_ops; i++)
            printf("%s{\"name\": \"%s\", \"op\": \"%s\", \"s\": %.7f}", i ? ", " : "",
                   clock.ops[i].name, clock.ops[i].op, clock.ops[i].s);
        printf("], \"place_step_s\": %.7f, \"ops_in_place\": [",
               clock.start[steps] - clock.start[steps - 1]);
        for (int i = 0; i < clock.n_placed; i++)
            printf("%s{\"name\": \"%s\", \"op\": \"%s\", \"s\": %.7f}", i ? ", " : "",
                   clock.placed[i].name, clock.placed[i].op, clock.placed[i].s);
        printf("]");
    }
    printf("}\n");
    free(sec);
    free(share);
    free(clock.start);
    free(clock.hashed);
    sb_trace_free(&clock.trace);
    return EXIT_SUCCESS;
}
