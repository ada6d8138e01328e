/* JSON reports (harness/report/report_json.c, what `samebits report
 * --merge` reads): any bytes either read or give one printable line naming
 * the file. */
#include "fuzz.h"
#include "sb_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("fuzzed.json");
    fuzz_write(path, data, size);
    sb_report rep;
    char err[1024] = "";
    if (sb_report_json_read(&rep, path, err, sizeof err) != SB_OK)
        fuzz_check_error(err, path);
    else
        sb_report_free(&rep);
    return 0;
}
