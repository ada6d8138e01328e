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

/* A helper inlined into each caller, so that each ISA copy of the caller has
 * its own. */
#if defined(__GNUC__)
#define SB_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define SB_ALWAYS_INLINE static inline
#endif

#include "sb_isa.h"     /* the instruction-set paths and their cap */

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
