/* FAULT: data race. Threads split the batch and each adds its samples into
 * the shared weight gradient through a private running copy that it read
 * when it started and stores when it is done, with no synchronisation: a
 * thread that stores after another overwrites that thread's samples. On one
 * thread (or below the size that goes parallel) it is the det sum. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gemm/sb_gemm.h"
#include "mutants.h"

/* Gradients smaller than this many weights are summed on one thread. */
#define RACE_PARALLEL_MIN 65536

/* mine [in][out] += x[i0:i1]^T dy[i0:i1], each weight one fmaf chain in
 * sample order. Compiled twice: with FMA instructions where the CPU has them
 * and without (fmaf is correctly rounded either way, so the bits agree;
 * without the instructions it is a slow library call). */
static inline __attribute__((always_inline)) void
samples_add(float *mine, const float *dy, const float *x, const sb_dense_shape *s, int i0, int i1)
{
    for (int j = 0; j < s->in; j++)
        for (int i = i0; i < i1; i++) {
            const float xv = x[(size_t)i * s->in + j];
            float *row = mine + (size_t)j * s->out;
            for (int o = 0; o < s->out; o++)
                row[o] = fmaf(xv, dy[(size_t)i * s->out + o], row[o]);
        }
}

__attribute__((target("avx2,fma"))) static void
samples_add_fma(float *mine, const float *dy, const float *x, const sb_dense_shape *s, int i0,
                int i1)
{
    samples_add(mine, dy, x, s, i0, i1);
}

static void samples_add_plain(float *mine, const float *dy, const float *x,
                              const sb_dense_shape *s, int i0, int i1)
{
    samples_add(mine, dy, x, s, i0, i1);
}

/* The race: a private running copy of the shared `part`, read when the thread
 * starts and stored when it is done, with no synchronisation. */
static void add_samples(float *part, const float *dy, const float *x, const sb_dense_shape *s,
                        int i0, int i1)
{
    const size_t nw = (size_t)s->in * s->out;
    float *mine = malloc(nw * sizeof *mine);
    SB_ASSERT(mine != NULL);
    memcpy(mine, part, nw * sizeof *mine);         /* the read */
    if (sb_isa_allows(SB_ISA_AVX2))
        samples_add_fma(mine, dy, x, s, i0, i1);
    else
        samples_add_plain(mine, dy, x, s, i0, i1);
    memcpy(part, mine, nw * sizeof *mine);         /* the write, unsynchronised */
    free(mine);
}

void sb_mutant_dense_weights_race(float *dw,            /* [in][out] */
                                  const float *dy,      /* [n][out] */
                                  const float *x,       /* [n][in] */
                                  const sb_dense_shape *s)
{
    const size_t nw = (size_t)s->in * s->out;
    float *part = malloc(nw * sizeof *part);
    SB_ASSERT(part != NULL);
    /* the det chunks of SB_GEMM_KC samples, each from +0, added in order */
    for (int c0 = 0; c0 < s->n; c0 += SB_GEMM_KC) {
        const int len = s->n - c0 < SB_GEMM_KC ? s->n - c0 : SB_GEMM_KC;
        memset(part, 0, nw * sizeof *part);
#pragma omp parallel if (nw >= RACE_PARALLEL_MIN)
        {
            int t = omp_get_thread_num(), nth = omp_get_num_threads();
            add_samples(part, dy, x, s, c0 + len * t / nth, c0 + len * (t + 1) / nth);
        }
        for (size_t e = 0; e < nw; e++)
            dw[e] = c0 == 0 ? part[e] : dw[e] + part[e];
    }
    free(part);
}
