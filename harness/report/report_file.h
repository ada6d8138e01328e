/* Internal to the report writers: atomic report files, UTF-8 checks and the
 * JSON values of every JSON file samebits writes or reads. */
#ifndef SB_REPORT_FILE_H
#define SB_REPORT_FILE_H

#include <jansson.h>
#include <stdio.h>

#include "sb_harness.h"
#include "support/support.h"

/* A report being written (sb_out_file, support.h): a regular file
 * replaced atomically, so a reader never sees half a report; a device or a
 * FIFO written in place. Every failure leaves its one-line reason for
 * sb_report_error. */
typedef struct sb_report_file {
    FILE *f;
    sb_out_file out;
} sb_report_file;

sb_status sb_report_file_open(sb_report_file *rf, const char *path);
/* Flushes, syncs and renames; removes the temporary file on any error
 * (including an earlier write error on rf->f). */
sb_status sb_report_file_commit(sb_report_file *rf);
/* Closes and removes the temporary file: the report at `path` stays as it was. */
void sb_report_file_discard(sb_report_file *rf);
/* Sets what sb_report_error says for a failure found outside the file:
 * "PATH: cannot write: WHY". */
void sb_report_error_set(const char *path, const char *why);

/* Length (1..4) of the well-formed UTF-8 sequence at s, or 0 when the byte
 * at s does not start one. */
size_t sb_utf8_len(const unsigned char *s);

/* ---- JSON (json_values.c) ------------------------------------------------------
 * Every JSON file samebits writes or reads goes through jansson, its values
 * made and read by these; each returns NULL only when out of memory. */

/* A string: well-formed UTF-8 kept, any other byte replaced by U+FFFD, so
 * the file always parses (jansson refuses malformed UTF-8). */
json_t *sb_json_string(const char *s);
/* A number: infinities and NaN, which JSON has not, as the strings "inf",
 * "-inf" and "nan"; an integral value below 1e17 as an integer (as "%.17g"
 * writes it); any other as a real of 17 significant digits, which reads
 * back to the same bits. */
json_t *sb_json_number(double x);
/* Appends value to array and returns array; when either is NULL or out of
 * memory releases both and returns NULL, so that a loop builds an array
 * with `a = sb_json_append(a, item(i))` while a is not NULL. */
json_t *sb_json_append(json_t *array, json_t *value);
/* Adds the keys of the object `more` to o, after o's own and in their
 * order, and releases more; false when either is NULL or out of memory. */
bool sb_json_keys_add(json_t *o, json_t *more);
/* A number field written by sb_json_number: a number or one of the three
 * strings. */
bool sb_json_number_read(const json_t *v, double *x);
/* Writes root to path atomically (indented, keys in the order they were
 * set) and releases it; root NULL (a value that could not be made):
 * SB_ERR_NOMEM, nothing written. */
sb_status sb_json_write(const char *path, json_t *root);

/* The "crash" value of a run (REPORTS.md, report_json.c): null when the
 * run did not die, else how and where, as its trace stream says. */
json_t *sb_report_crash_json(const sb_crash_site *s);

#endif
