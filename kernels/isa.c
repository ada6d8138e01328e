/* The instruction-set cap of a run (sb_isa.h): SAMEBITS_ISA against the
 * CPU's flags and the build. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb_common.h"

static const char *const isa_names[SB_ISA_COUNT] = {
    [SB_ISA_BASELINE] = "baseline",
    [SB_ISA_AVX2] = "avx2",
    [SB_ISA_AVX512] = "avx512",
};

const char *sb_isa_name(sb_isa i)
{
    return (unsigned)i < SB_ISA_COUNT ? isa_names[i] : "?";
}

sb_isa sb_isa_from_name(const char *name)
{
    return (sb_isa)sb_name_index(isa_names, SB_ISA_COUNT, name);
}

/* The level the compiler flags already use: no path of this build is below it. */
static sb_isa build_floor(void)
{
#if defined(__AVX512F__)
    return SB_ISA_AVX512;
#elif defined(__AVX2__)
    return SB_ISA_AVX2;
#else
    return SB_ISA_BASELINE;
#endif
}

static bool cpu_has(sb_isa i)
{
    switch (i) {
    case SB_ISA_BASELINE:
        return true;
    case SB_ISA_AVX2:
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
        return false;
#endif
    case SB_ISA_AVX512:
#if defined(__x86_64__) && defined(__GNUC__) && !defined(SB_WITHOUT_AVX512)
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && cpu_has(SB_ISA_AVX2);
#else
        return false;
#endif
    case SB_ISA_COUNT:
        break;
    }
    return false;
}

bool sb_isa_runs(sb_isa i)
{
    return i >= build_floor() && cpu_has(i);
}

bool sb_isa_from_env(sb_isa *cap, char *err, size_t errlen)
{
    const char *v = getenv("SAMEBITS_ISA");
    if (!v || !*v) {
        *cap = SB_ISA_BASELINE;
        for (int i = SB_ISA_COUNT - 1; i >= 0; i--)
            if (sb_isa_runs((sb_isa)i)) {
                *cap = (sb_isa)i;
                break;
            }
        return true;
    }
    return sb_isa_parse(v, cap, err, errlen);
}

bool sb_isa_parse(const char *v, sb_isa *out, char *err, size_t errlen)
{
    sb_isa i = sb_isa_from_name(v);
    if (i == SB_ISA_COUNT) {
        snprintf(err, errlen, "SAMEBITS_ISA=%.40s: expected avx512, avx2 or baseline", v);
        return false;
    }
    if (i < build_floor()) {
        snprintf(err, errlen, "SAMEBITS_ISA=%s: this build's compiler flags already use %s "
                 "(-march): it has no %s path", v, sb_isa_name(build_floor()), v);
        return false;
    }
    if (!cpu_has(i)) {
#if defined(SB_WITHOUT_AVX512)
        const char *why = i == SB_ISA_AVX512 ? "this build has no AVX-512 path (-Davx512=false)"
                                             : "this CPU lacks it (no avx2 and fma flags)";
#else
        const char *why = i == SB_ISA_AVX512 ? "this CPU lacks it (no avx512f flag)"
                                             : "this CPU lacks it (no avx2 and fma flags)";
#endif
        snprintf(err, errlen, "SAMEBITS_ISA=%s: %s", v, why);
        return false;
    }
    *out = i;
    return true;
}

sb_isa sb_isa_cap(void)
{
    /* read once; two threads that race here read the same value */
    static atomic_int cap = -1;
    int c = atomic_load_explicit(&cap, memory_order_relaxed);
    if (c >= 0)
        return (sb_isa)c;
    sb_isa i;
    char err[160];
    if (!sb_isa_from_env(&i, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
    atomic_store_explicit(&cap, (int)i, memory_order_relaxed);
    return i;
}
