/* Traces and goldens (harness/trace/trace.c): any bytes either read or give
 * one printable line naming the file; a trace that reads is exactly what the
 * writer writes for it (the reader takes only the writer's own output, so
 * the round trip reproduces the input byte for byte). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sb_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("fuzzed.golden");
    const char *again = fuzz_path("written.golden");
    fuzz_write(path, data, size);
    sb_trace t;
    char err[1024] = "";
    if (sb_trace_read(&t, path, err, sizeof err) != SB_OK) {
        fuzz_check_error(err, path);
        return 0;
    }
    FILE *f = fopen(again, "w");
    fuzz_require(f != NULL && sb_trace_write(&t, f) == SB_OK && fclose(f) == 0,
                 "a trace that read does not write");
    sb_trace_free(&t);
    size_t n;
    uint8_t *written = fuzz_read(again, &n);
    fuzz_require(n == size && memcmp(written, data, size) == 0,
                 "a trace read and written again differs from the input");
    free(written);
    return 0;
}
