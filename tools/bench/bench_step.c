/* samebits-bench-step: seconds per training step of the seed model (det
 * family) in this process, with or without hashing every probe into a trace
 * (the harness's sb_trace_add_probe), for tools/bench/bench-all. Hashing is
 * done as `samebits run` does it: the model's ops hash the leaves of large
 * tensors while they are in cache (sb_hash_leaf) unless --no-fuse, which
 * hashes every tensor after its op. Prints one JSON object. Steps are timed from the first probe of a step to the first
 * probe of the next, so weight initialisation and the closing evaluation are
 * not counted; the median over steps 2..S is reported. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samebits.h"
#include "sb_model.h"

typedef struct step_clock {
    bool hash;
    sb_trace trace;
    int64_t step;       /* of the last probe seen */
    double *start;      /* start[s]: time of step s's first probe */
    int64_t max_steps;
} step_clock;

static void on_probe(void *ctx, const sb_probe_point *p)
{
    step_clock *c = ctx;
    if (p->step != c->step && p->step >= 1 && p->step <= c->max_steps + 1) {
        c->step = p->step;
        c->start[p->step] = omp_get_wtime();
    }
    if (c->hash && sb_trace_add_probe(&c->trace, p) != SB_OK) {
        fprintf(stderr, "bench-step: hashing a probe failed\n");
        exit(EXIT_FAILURE);
    }
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    int steps = 5;
    bool hash = false, fuse = true;
    const char *data_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--hash") == 0)
            hash = true;
        else if (strcmp(argv[i], "--no-fuse") == 0)
            fuse = false;
        else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc)
            data_dir = argv[++i];
        else {
            fprintf(stderr, "usage: samebits-bench-step [--steps S] [--hash [--no-fuse]] [--data-dir DIR]\n"
                            "(threads from OMP_NUM_THREADS)\n");
            return EXIT_FAILURE;
        }
    }
    if (steps < 3) {
        fprintf(stderr, "bench-step: --steps must be at least 3\n");
        return EXIT_FAILURE;
    }
    char err[512];
    sb_dataset all, train, test;
    if (sb_dataset_open(&all, "mnist", data_dir, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    /* the seed case's model on enough digits that no epoch ends (and no
     * evaluation runs) among the timed steps */
    int64_t n_train = (int64_t)(steps + 1) * 128;
    if (sb_dataset_slice(&train, &all, 0, n_train) != SB_OK ||
        sb_dataset_slice(&test, &all, n_train, n_train + 400) != SB_OK) {
        fprintf(stderr, "bench-step: too few mnist digits for %d steps\n", steps);
        return 2;
    }
    sb_train_config cfg;
    sb_train_config_defaults(&cfg);
    cfg.seed = 1;
    cfg.max_steps = steps;
    step_clock clock = {.hash = hash, .step = 0, .max_steps = steps};
    clock.start = calloc((size_t)steps + 2, sizeof *clock.start);
    sb_trace_init(&clock.trace);
    sb_epoch_metrics metrics[16];
    int epochs_done = 0;
    sb_leaf_hash_fn *leaf_hash = hash && fuse ? sb_hash_leaf : NULL;
    if (sb_model_train(sb_kernels(SB_FAMILY_DET), &cfg, &train, &test, on_probe, &clock,
                       leaf_hash, metrics, &epochs_done) != SB_OK) {
        fprintf(stderr, "bench-step: training failed\n");
        return EXIT_FAILURE;
    }
    /* step s lasts from start[s] to start[s+1]; the last step has no end mark */
    int n = 0;
    double *sec = calloc((size_t)steps, sizeof *sec);
    for (int s = 2; s < steps; s++)
        sec[n++] = clock.start[s + 1] - clock.start[s];
    qsort(sec, (size_t)n, sizeof *sec, cmp_double);
    double median = n % 2 ? sec[n / 2] : 0.5 * (sec[n / 2 - 1] + sec[n / 2]);
    printf("{\"threads\": %d, \"hash\": %s, \"fused\": %s, \"steps_timed\": %d, "
           "\"step_s\": %.6f, \"probes\": %zu}\n",
           omp_get_max_threads(), hash ? "true" : "false", leaf_hash ? "true" : "false", n,
           median, clock.trace.n_records);
    free(sec);
    free(clock.start);
    sb_trace_free(&clock.trace);
    sb_dataset_free(&all);
    return EXIT_SUCCESS;
}
