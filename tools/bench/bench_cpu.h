/* What a benchmark report says about the machine: the CPU, its instruction
 * sets, the path the kernels take on it, and the core OpenBLAS runs. */
#ifndef BENCH_CPU_H
#define BENCH_CPU_H

#include <stdbool.h>
#include <stddef.h>

typedef struct bench_cpu {
    char model[128];        /* /proc/cpuinfo's "model name", or "unknown" */
    bool avx512;            /* AVX-512 F, BW, DQ and VL: what OpenBLAS's SkylakeX core runs */
    bool avx2_fma;
} bench_cpu;

void bench_cpu_describe(bench_cpu *cpu);

/* Called first in main: where the CPU has AVX-512, OPENBLAS_CORETYPE is
 * unset and OpenBLAS picked a core without AVX-512 (0.3.21 takes recent
 * AVX-512 Xeons for "Prescott"), sets OPENBLAS_CORETYPE=SkylakeX and runs
 * the program again, since OpenBLAS reads the variable only when it loads.
 * Anywhere else it leaves OpenBLAS's choice, or the caller's, alone. */
void bench_openblas_choose_core(char **argv);

/* "SkylakeX (set here: OpenBLAS picked Prescott on this AVX-512 CPU)" and
 * the like: the core OpenBLAS runs and who chose it. */
void bench_openblas_core_text(char *out, size_t size);

#endif
