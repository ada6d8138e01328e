/* ReduceMean (ONNX's, over one axis or consecutive axes folded into one):
 * x [outer][r][inner], y[o][j] = (sum over i of x[o][i][j]) / r, the sum
 * then one division by r (a count: exact up to 2^24). The families differ
 * only in the order of the sum. */
#ifndef SB_REDUCE_H
#define SB_REDUCE_H

#include "op_kernels.h"

static inline void sb_reduce_shape_check(const sb_reduce_shape *s)
{
    SB_ASSERT(s->outer > 0 && s->r > 0 && s->inner > 0);
}

/* the outputs and the first term of output e */
static inline size_t sb_reduce_outputs(const sb_reduce_shape *s)
{
    return (size_t)s->outer * (size_t)s->inner;
}

static inline size_t sb_reduce_first(const sb_reduce_shape *s, size_t e)
{
    const size_t inner = (size_t)s->inner;
    return (e / inner) * (size_t)s->r * inner + e % inner;
}

#endif
