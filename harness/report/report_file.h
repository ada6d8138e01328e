/* Internal to the report writers: atomic report files and UTF-8 checks. */
#ifndef SB_REPORT_FILE_H
#define SB_REPORT_FILE_H

#include <stdio.h>

#include "samebits.h"

/* A report being written to a temporary file beside `path`; committing
 * renames it over `path`, so a reader never sees half a report. */
typedef struct sb_report_file {
    FILE *f;
    char tmp[1024];
    const char *path;
} sb_report_file;

sb_status sb_report_file_open(sb_report_file *rf, const char *path);
/* Flushes, syncs and renames; removes the temporary file on any error
 * (including an earlier write error on rf->f). */
sb_status sb_report_file_commit(sb_report_file *rf);

/* Length (1..4) of the well-formed UTF-8 sequence at s, or 0 when the byte
 * at s does not start one. */
size_t sb_utf8_len(const unsigned char *s);

#endif
