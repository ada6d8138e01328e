/* No oneDNN in this build: no primitive (bench_onednn.h). */
#include <stdio.h>

#include "bench_onednn.h"

const char *bench_onednn_version(void)
{
    return NULL;
}

bench_onednn *bench_onednn_new(const sb_conv_shape *s, bench_conv_pass pass, bool chosen,
                               char *impl, size_t impl_len)
{
    (void)s, (void)pass, (void)chosen;
    snprintf(impl, impl_len, "no oneDNN in this build");
    return NULL;
}

void bench_onednn_run(bench_onednn *c)
{
    (void)c;
}

void bench_onednn_free(bench_onednn *c)
{
    (void)c;
}
