/* Types shared by the kernels and the harness: status codes, the always-on
 * assert, and the tensor view every probe and op call is made of. */
#ifndef SB_COMMON_H
#define SB_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Errors the API returns (first tier). */
typedef enum sb_status {
    SB_OK = 0,
    SB_ERR_USAGE,    /* a caller passed something meaningless */
    SB_ERR_INPUT,    /* a file or value from outside is malformed */
    SB_ERR_IO,       /* the system refused a read or write */
    SB_ERR_SHAPE,    /* a shape is absurd or inconsistent */
    SB_ERR_NOMEM,
    SB_ERR_NO_MPI,   /* the rank axis asked of a build without MPI */
} sb_status;

const char *sb_status_name(sb_status s);

/* The index of `name` in names[0 .. count), or count when it is not there
 * (or is NULL): the lookup behind every *_from_name. */
int sb_name_index(const char *const *names, int count, const char *name);

/* Broken invariants (second tier): always on, never compiled out. */
#define SB_ASSERT(cond)                                                        \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* A function compiled for AVX-512, AVX2 and the baseline, picked at load
 * time (an ifunc). Only for code whose bits cannot depend on the vector
 * width: data moves, and element-wise arithmetic that is correctly rounded
 * and never contracted (kernels/meson.build). SB_ISA_FMA_CLONES, for such
 * loops that write fmaf: its AVX2 copy is x86-64-v3, AVX2 with FMA, where
 * fmaf is one instruction and vectorises ("avx2" alone leaves it a library
 * call); a fused multiply-add is correctly rounded at any width. */
/* None under ThreadSanitizer: ifunc resolvers run before it is set up, and
 * crash it at load (the baseline copy has the same bits). */
#if defined(__SANITIZE_THREAD__)
#define SB_NO_ISA_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SB_NO_ISA_CLONES
#endif
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__INTEL_COMPILER) && \
    !defined(SB_NO_ISA_CLONES)
#if defined(SB_WITHOUT_AVX512)
#define SB_ISA_CLONES __attribute__((target_clones("avx2", "default")))
#define SB_ISA_FMA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SB_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define SB_ISA_FMA_CLONES \
    __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#endif
#else
#define SB_ISA_CLONES
#define SB_ISA_FMA_CLONES
#endif

/* Whether the code paths picked at run time (the GEMM tiles, the random
 * runs) may take their AVX-512 variant: the CPU has AVX-512F and the build
 * keeps those variants. A build configured with -Davx512=false leaves every
 * AVX-512 path out, clones included, so that the AVX2 paths can be measured
 * on an AVX-512 machine (tools/bench/README.md); x86-64 with GCC or clang. */
#if defined(SB_WITHOUT_AVX512)
#define SB_CPU_AVX512() false
#else
#define SB_CPU_AVX512() __builtin_cpu_supports("avx512f")
#endif

/* A helper inlined into each caller, so that each ISA copy of the caller has
 * its own. */
#if defined(__GNUC__)
#define SB_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define SB_ALWAYS_INLINE static inline
#endif

typedef enum sb_dtype {
    SB_DTYPE_F32,
    SB_DTYPE_I32,
    SB_DTYPE_I64, /* traces and dumps of other producers (int64 tokens); no kernel reads it */
} sb_dtype;

const char *sb_dtype_name(sb_dtype t); /* "f32", "i32", "i64" */
size_t sb_dtype_size(sb_dtype t);

#define SB_MAX_DIMS 4

/* A view of a dense, row-major tensor; the view does not own data. */
typedef struct sb_tensor {
    sb_dtype dtype;
    int ndim;
    int64_t dim[SB_MAX_DIMS];
    void *data;
} sb_tensor;

size_t sb_tensor_count(const sb_tensor *t);  /* product of dims */
size_t sb_tensor_bytes(const sb_tensor *t);

/* n floats, uninitialised, starting on a 64-byte boundary (a cache line, so
 * that vector loads never straddle two lines); free with free(). NULL when
 * out of memory or n too large. */
float *sb_floats_try(size_t n);
/* The same, SB_ASSERT when out of memory. */
float *sb_floats_new(size_t n);

/* out[i] = part[0][i] + part[1][i] + ... in part order (parts of n floats,
 * one after the other), one writer per element: an orphaned `omp for`, so
 * called by every thread of a team it shares the elements out, and called
 * outside a parallel region it runs them all. */
void sb_partials_sum(float *out, const float *part, size_t n, int parts);

/* A message of the kernels' loaders and models into err (nothing when err is
 * NULL or errlen 0); returns st, for `return sb_msg(err, errlen, st, ...)`. */
sb_status sb_msg(char *err, size_t errlen, sb_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A file opened for reading (*fd) that is a regular file, checked before
 * any read and without waiting (a FIFO nobody writes would block open and
 * read). SB_ERR_IO with err "PATH: cannot open: WHY", SB_ERR_INPUT with
 * "PATH: is a FIFO (a directory, a character device, ...), expected a
 * regular file"; *fd is then -1. */
sb_status sb_regular_open(const char *path, int *fd, char *err, size_t errlen);

#endif
