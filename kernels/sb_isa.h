/* The instruction sets the det kernels' paths are built for, and the cap
 * on them a run takes from the environment: SAMEBITS_ISA=avx512|avx2|baseline
 * (unset: the best this CPU and this build run). Every path the kernels
 * pick at run time goes through the cap: the GEMM register tiles
 * (kernels/gemm/gemm_tile.c), the random runs (kernels/rng/run.c) and the
 * functions built once per instruction set (SB_ISA_VARIANTS below). The
 * det contract holds across them: the same bits on every path. */
#ifndef SB_ISA_H
#define SB_ISA_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sb_isa { SB_ISA_BASELINE, SB_ISA_AVX2, SB_ISA_AVX512, SB_ISA_COUNT } sb_isa;

/* "baseline", "avx2", "avx512" */
const char *sb_isa_name(sb_isa i);
/* The level a name says; SB_ISA_COUNT if none. */
sb_isa sb_isa_from_name(const char *name);
/* Whether this CPU (its flags: AVX2 with FMA; AVX-512F) and this build run
 * path i: a build without AVX-512 (meson -Davx512=false) has no AVX-512
 * path, and one whose compiler flags already use an instruction set
 * (-march=native) has no path below it. */
bool sb_isa_runs(sb_isa i);
/* A level's name checked: *i the level; false with err "SAMEBITS_ISA=NAME:
 * why" when it names none, or one this CPU or build does not run. */
bool sb_isa_parse(const char *name, sb_isa *i, char *err, size_t errlen);
/* SAMEBITS_ISA read and checked: *cap the level (the best sb_isa_runs when
 * unset or empty); false with err "SAMEBITS_ISA=VALUE: why" when it names
 * no level or one this CPU or build does not run. */
bool sb_isa_from_env(sb_isa *cap, char *err, size_t errlen);
/* The cap of this process, read once (sb_isa_from_env); a bad SAMEBITS_ISA
 * prints its line and exits with status 2 (an input error). The `run`
 * child and a user's program call it first, so that a bad value stops them
 * before any work. */
sb_isa sb_isa_cap(void);

static inline bool sb_isa_allows(sb_isa i)
{
    return sb_isa_runs(i) && i <= sb_isa_cap();
}

/* A static void function built once per instruction set, the copy under the
 * cap called, for code whose bits cannot depend on the vector width: data
 * moves, and element-wise arithmetic that is correctly rounded and never
 * contracted (kernels/meson.build). Written
 *     SB_ISA_VARIANTS(name, (params), (args))
 *     { body }
 * args naming the parameters in order. The AVX2 and AVX-512 copies have FMA
 * (as the AVX2 level requires: kernels/isa.c), so that a loop that writes
 * fmaf vectorises there; a fused multiply-add is correctly rounded at any
 * width, and nothing else is contracted. One copy alone under ThreadSanitizer
 * (the baseline copy has the same bits), off x86-64 GCC or clang, and where
 * the compiler flags already use an instruction set. */
#if defined(__SANITIZE_THREAD__)
#define SB_ISA_ONE_COPY
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SB_ISA_ONE_COPY
#endif
#endif
#if !defined(__x86_64__) || !defined(__GNUC__) || defined(__INTEL_COMPILER) || \
    defined(__AVX2__) || defined(__AVX512F__)
#define SB_ISA_ONE_COPY
#endif

#if defined(SB_ISA_ONE_COPY)
#define SB_ISA_VARIANTS(name, params, args) static void name params
#else
#if defined(SB_WITHOUT_AVX512)
#define SB_ISA_AVX512_COPY(name, params, args)
#define SB_ISA_AVX512_CALL(name, args) name##_avx2 args
#else
#define SB_ISA_AVX512_COPY(name, params, args)                                     \
    __attribute__((target("avx512f,fma"))) static void name##_avx512 params        \
    {                                                                              \
        name##_body args;                                                          \
    }
#define SB_ISA_AVX512_CALL(name, args) name##_avx512 args
#endif
#define SB_ISA_VARIANTS(name, params, args)                                        \
    SB_ALWAYS_INLINE void name##_body params;                                      \
    SB_ISA_AVX512_COPY(name, params, args)                                         \
    __attribute__((target("avx2,fma"))) static void name##_avx2 params             \
    {                                                                              \
        name##_body args;                                                          \
    }                                                                              \
    static void name##_baseline params                                             \
    {                                                                              \
        name##_body args;                                                          \
    }                                                                              \
    static void name params                                                        \
    {                                                                              \
        switch (sb_isa_cap()) {                                                    \
        case SB_ISA_AVX512:                                                        \
            SB_ISA_AVX512_CALL(name, args);                                        \
            return;                                                                \
        case SB_ISA_AVX2:                                                          \
            name##_avx2 args;                                                      \
            return;                                                                \
        case SB_ISA_BASELINE:                                                      \
        case SB_ISA_COUNT:                                                         \
            break;                                                                 \
        }                                                                          \
        name##_baseline args;                                                      \
    }                                                                              \
    SB_ALWAYS_INLINE void name##_body params
#endif

#endif
