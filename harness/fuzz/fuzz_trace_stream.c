/* Trace streams (harness/trace/trace.c, sb_trace_stream_read): the stream a
 * run writes as it goes, which the sweep reads when the run died. Any bytes
 * either read or give one printable line naming the file; a stream that
 * reads holds as many records as its site counts, says where the run died
 * in one printable line, and written again by the stream writer (its
 * records, then the op it was in) reads back to the same records and the
 * same site. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "sb_harness.h"
#include "trace/trace_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void site_require_same(const sb_crash_site *a, const sb_crash_site *b)
{
    fuzz_require(a->in_op == b->in_op && a->step == b->step && a->records == b->records &&
                     strcmp(a->op, b->op) == 0 && strcmp(a->probe, b->probe) == 0 &&
                     strcmp(a->after, b->after) == 0,
                 "a stream written again says another place of death");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("fuzzed.stream");
    const char *again = fuzz_path("written.stream");
    fuzz_write(path, data, size);
    sb_trace t, back;
    sb_crash_site site, site_back;
    char err[1024] = "";
    if (sb_trace_stream_read(&t, &site, path, err, sizeof err) != SB_OK) {
        fuzz_check_error(err, path);
        return 0;
    }
    fuzz_require(site.streamed && site.records == t.n_records,
                 "a stream that read counts other records than it holds");
    char where[1024];
    sb_crash_describe(where, sizeof where, &site);
    for (const char *c = where; *c; c++)
        fuzz_require(*c >= 0x20 && *c < 0x7f, "where a run died is not one printable line");

    sb_trace_stream s;
    fuzz_require(sb_trace_stream_open(&s, again, err, sizeof err) == SB_OK,
                 "the stream writer cannot open its file");
    for (size_t i = 0; i < t.n_records; i++)
        fuzz_require(sb_trace_stream_record(&s, &t.records[i]) == SB_OK,
                     "a record that read does not write");
    if (site.in_op)
        fuzz_require(sb_trace_stream_start(&s, site.step, site.probe, site.op) == SB_OK,
                     "the op a run died in does not write");
    sb_trace_stream_close(&s);
    fuzz_require(sb_trace_stream_read(&back, &site_back, again, err, sizeof err) == SB_OK,
                 "a stream written again does not read");
    sb_divergence d;
    sb_trace_compare(&t, &back, &d);
    fuzz_require(!d.found && back.n_records == t.n_records,
                 "a stream written again holds other records");
    site_require_same(&site, &site_back);
    sb_trace_free(&t);
    sb_trace_free(&back);
    return 0;
}
