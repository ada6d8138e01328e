/* Case files (harness/case/): any bytes either load or give one
 * printable line naming the file. */
#include "fuzz.h"
#include "sb_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("fuzzed.case");
    fuzz_write(path, data, size);
    sb_case c;
    char err[1024] = "";
    if (sb_case_load(&c, path, err, sizeof err) != SB_OK)
        fuzz_check_error(err, path);
    return 0;
}
