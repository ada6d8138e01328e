/* The dense area's shared pieces, for its own files and the mutants of its
 * ops (kernels/mutants/). */
#ifndef SB_DENSE_H
#define SB_DENSE_H

#include "gemm/sb_data_move.h"
#include "op_kernels.h"

/* y's rows = b, without a library call per row: dense2's rows are 10 floats */
void sb_dense_fill_bias(float *y, const float *b, const sb_dense_shape *s);

#endif
