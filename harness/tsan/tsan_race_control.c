/* The positive control of the ThreadSanitizer run (README.md): the weight
 * gradient of the seed model's first dense layer at its real shape (9216
 * inputs, 128 outputs, a batch of 128) with a data race TSan must see.
 * Threads split the batch, as mutant_dense_weights_race does, but add their
 * samples straight into the shared gradient: every thread loads and stores
 * the first weight of every row of the gradient (one cache line per row)
 * with no synchronisation. Those accesses are plain loads and stores, which
 * TSan checks one by one, where the mutant's are two large memcpy calls.
 *
 * usage: tsan_race_control THREADS   (prints the gradient's sum) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/cnn.h"

enum { IN = SB_CNN_CONV2_K * 12 * 12, OUT = SB_CNN_HIDDEN, BATCH = 128 };

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    if (threads < 2) {
        fprintf(stderr, "usage: tsan_race_control THREADS (2 or more)\n");
        return 2;
    }
    float *dw = calloc((size_t)IN * OUT, sizeof *dw);
    float *x = malloc((size_t)BATCH * IN * sizeof *x);
    float *dy = malloc((size_t)BATCH * OUT * sizeof *dy);
    if (!dw || !x || !dy)
        return 1;
    for (size_t i = 0; i < (size_t)BATCH * IN; i++)
        x[i] = (float)(i % 7) * 0.25f;
    for (size_t i = 0; i < (size_t)BATCH * OUT; i++)
        dy[i] = (float)(i % 5) * 0.5f;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        int i0 = BATCH * t / nth, i1 = BATCH * (t + 1) / nth;
        for (int j = 0; j < IN; j++) {
            float *row = dw + (size_t)j * OUT;
            float acc = 0.0f;
            for (int i = i0; i < i1; i++)
                acc += x[(size_t)i * IN + j] * dy[(size_t)i * OUT];
            row[0] += acc; /* the race: every thread, every row, unsynchronised */
        }
    }
    double sum = 0;
    for (size_t i = 0; i < (size_t)IN * OUT; i++)
        sum += (double)dw[i];
    printf("%.9g\n", sum);
    free(dw);
    free(x);
    free(dy);
    return 0;
}
