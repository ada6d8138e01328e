/* oneDNN's convolution primitives, for samebits-bench-kernels --onednn:
 * bench_onednn.c when the build found oneDNN (libdnnl-dev),
 * bench_onednn_none.c when it did not. */
#ifndef BENCH_ONEDNN_H
#define BENCH_ONEDNN_H

#include <stdbool.h>
#include <stddef.h>

#include "sb_kernels.h"

typedef enum bench_conv_pass {
    BENCH_CONV_FWD,
    BENCH_CONV_BWD_DATA,
    BENCH_CONV_BWD_WEIGHTS,
} bench_conv_pass;

/* One primitive of one pass at one shape, its tensors allocated and filled. */
typedef struct bench_onednn bench_onednn;

/* The library's version ("2.6.3"), or NULL when the build has no oneDNN. */
const char *bench_onednn_version(void);

/* The primitive of pass at shape s, with its tensors in the formats oneDNN
 * chooses (format_tag_any: inputs already in them, as a framework keeps
 * its tensors) or, chosen false, plain (NCHW, OIHW). Its implementation's
 * name (dnnl's "jit:avx512_core") goes to impl. NULL, with a reason in
 * impl, when there is none. */
bench_onednn *bench_onednn_new(const sb_conv_shape *s, bench_conv_pass pass, bool chosen,
                               char *impl, size_t impl_len);
/* One execution, on omp_get_max_threads() threads, waited for. */
void bench_onednn_run(bench_onednn *c);
void bench_onednn_free(bench_onednn *c);

#endif
