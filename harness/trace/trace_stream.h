/* Internal to libsamebits: a trace written as the run goes (trace_stream.c),
 * so that a run that dies leaves the records it made and the op it was in.
 * Its text form is in harness/FORMATS.md ("Trace streams"). */
#ifndef SB_TRACE_STREAM_H
#define SB_TRACE_STREAM_H

#include "sb_harness.h"

/* Room for one line: a record of 64 inputs of 127-character names fits. */
#define SB_TRACE_STREAM_LINE 16384

typedef struct sb_trace_stream {
    int fd;                     /* -1: closed */
    char *line;                 /* SB_TRACE_STREAM_LINE bytes: one line, one write(2) */
} sb_trace_stream;

/* Creates path (truncating it) and writes the magic line. */
sb_status sb_trace_stream_open(sb_trace_stream *s, const char *path, char *err, size_t errlen);
/* "start STEP PROBE OP": op is about to run and make probe. */
sb_status sb_trace_stream_start(sb_trace_stream *s, int64_t step, const char *probe,
                                const char *op);
/* The record as sb_trace_write writes it. */
sb_status sb_trace_stream_record(sb_trace_stream *s, const sb_record *r);
void sb_trace_stream_close(sb_trace_stream *s);

/* One record line, as in a trace (trace.c writes both). */
void sb_trace_write_record(FILE *f, const sb_record *r);

#endif
