#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sb_common.h"

int sb_name_index(const char *const *names, int count, const char *name)
{
    int i = 0;
    while (name && i < count && strcmp(names[i], name) != 0)
        i++;
    return name ? i : count;
}

const char *sb_status_name(sb_status s)
{
    switch (s) {
    case SB_OK: return "ok";
    case SB_ERR_USAGE: return "usage error";
    case SB_ERR_INPUT: return "input error";
    case SB_ERR_IO: return "i/o error";
    case SB_ERR_SHAPE: return "shape error";
    case SB_ERR_NOMEM: return "out of memory";
    case SB_ERR_NO_MPI: return "built without MPI";
    }
    return "unknown status";
}

const char *sb_dtype_name(sb_dtype t)
{
    switch (t) {
    case SB_DTYPE_F32: return "f32";
    case SB_DTYPE_I32: return "i32";
    case SB_DTYPE_I64: return "i64";
    }
    return "?";
}

size_t sb_dtype_size(sb_dtype t)
{
    switch (t) {
    case SB_DTYPE_F32: return 4;
    case SB_DTYPE_I32: return 4;
    case SB_DTYPE_I64: return 8;
    }
    return 0;
}

size_t sb_tensor_count(const sb_tensor *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= (size_t)t->dim[i];
    return n;
}

size_t sb_tensor_bytes(const sb_tensor *t)
{
    return sb_tensor_count(t) * sb_dtype_size(t->dtype);
}

float *sb_floats_try(size_t n)
{
    if (n > (SIZE_MAX - 63) / sizeof(float))
        return NULL;
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    return aligned_alloc(64, bytes > 0 ? bytes : 64);
}

float *sb_floats_new(size_t n)
{
    float *p = sb_floats_try(n);
    SB_ASSERT(p != NULL);
    return p;
}

/* Elements a block of sb_partials_sum adds side by side */
enum { PARTIALS_BLOCK = 256 };

/* A block's sums run in out, part by part: independent chains a vector
 * wide, each element's adds in part order. Element by element, each sum
 * was a chain of dependent adds over loads n floats apart: conv2's 32
 * filter-gradient partials took 5% of its det kernel at 1 thread on a Zen 5
 * EPYC. */
void sb_partials_sum(float *out, const float *part, size_t n, int parts)
{
#pragma omp for schedule(static)
    for (size_t i0 = 0; i0 < n; i0 += PARTIALS_BLOCK) {
        size_t len = n - i0 < PARTIALS_BLOCK ? n - i0 : PARTIALS_BLOCK;
        float *o = out + i0;
        for (size_t i = 0; i < len; i++)
            o[i] = part[i0 + i];
        for (int g = 1; g < parts; g++) {
            const float *pg = part + n * (size_t)g + i0;
#pragma omp simd
            for (size_t i = 0; i < len; i++)
                o[i] += pg[i];
        }
    }
}

sb_status sb_msg(char *err, size_t errlen, sb_status st, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}
