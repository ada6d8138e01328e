/* What the fuzz targets share (README.md): each writes its input to a file,
 * since the readers take paths, and checks the properties every reader owes
 * its caller. A broken property aborts, which libFuzzer reports as a finding
 * with the input that broke it. */
#ifndef SB_FUZZ_H
#define SB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* DIR/name in a private directory made on first use (and left for the
 * operating system's temporary-file cleaning: libFuzzer exits without
 * calling back). */
const char *fuzz_path(const char *name);
/* Replaces the file at path by data[0..size). */
void fuzz_write(const char *path, const uint8_t *data, size_t size);
/* An error message must be exactly one line of printable ASCII naming the
 * file: aborts, printing what is wrong, when it is not. */
void fuzz_check_error(const char *err, const char *path);
/* Aborts with the message when cond is false. */
void fuzz_require(int cond, const char *what);
/* The whole file at path into a malloc'd buffer, its length in *size. */
uint8_t *fuzz_read(const char *path, size_t *size);

#endif
