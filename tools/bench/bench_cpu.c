/* The machine a benchmark ran on, and the OpenBLAS core it compares with. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench_cpu.h"

/* set before running the program again: the core OpenBLAS had picked */
#define DETECTED_VAR "SAMEBITS_BENCH_OPENBLAS_DETECTED"

void bench_cpu_describe(bench_cpu *cpu)
{
    memset(cpu, 0, sizeof *cpu);
    snprintf(cpu->model, sizeof cpu->model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            const char *v = strchr(line, ':') + 1;
            v += strspn(v, " \t");
            snprintf(cpu->model, sizeof cpu->model, "%.*s", (int)strcspn(v, "\n"), v);
            break;
        }
    if (f)
        fclose(f);
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    cpu->avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    cpu->avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
}

/* OpenBLAS 0.3.21's cores with AVX-512 kernels */
static bool core_has_avx512(const char *core)
{
    static const char *const cores[] = {"skylakex", "cooperlake", "sapphirerapids"};
    for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++)
        if (strcasecmp(core, cores[i]) == 0)
            return true;
    return false;
}

void bench_openblas_choose_core(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE"))
        return;
    bench_cpu cpu;
    bench_cpu_describe(&cpu);
    const char *core = openblas_get_corename();
    if (!cpu.avx512 || core_has_avx512(core))
        return;
    if (setenv("OPENBLAS_CORETYPE", "SkylakeX", 1) != 0 || setenv(DETECTED_VAR, core, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    perror("bench: running again with OPENBLAS_CORETYPE=SkylakeX failed");
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(DETECTED_VAR);
}

void bench_openblas_core_text(char *out, size_t size)
{
    const char *core = openblas_get_corename(), *detected = getenv(DETECTED_VAR);
    if (detected)
        snprintf(out, size, "%s (set here: OpenBLAS picked %s on this AVX-512 CPU)", core,
                 detected);
    else if (getenv("OPENBLAS_CORETYPE")) {
        /* a machine may set it for every process: say when it holds OpenBLAS
         * to kernels without AVX-512 on a CPU with it (about half their speed) */
        bench_cpu cpu;
        bench_cpu_describe(&cpu);
        bool slower = cpu.avx512 && !core_has_avx512(core);
        snprintf(out, size, "%s (OPENBLAS_CORETYPE=%s from the environment%s)", core,
                 getenv("OPENBLAS_CORETYPE"),
                 slower ? ": no AVX-512 kernels on this AVX-512 CPU; unset it for OpenBLAS's"
                          " own choice"
                        : "");
    } else
        snprintf(out, size, "%s (OpenBLAS's own choice)", core);
}
