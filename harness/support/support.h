/* Internal to libsamebits and the command: the one error formatter, the one
 * argument layer (options, integers, seconds, step counts, thread lists)
 * and the few system helpers (this executable, work directories).
 *
 * None of these print: each fills an error buffer (err, errlen; errlen 0
 * keeps nothing) and its caller prints the message in its own voice
 * ("samebits: --threads: ...", "PROG sweep: ...", "path:line: expected
 * threads as ..."). */
#ifndef SB_SUPPORT_H
#define SB_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sb_harness.h"

/* ---- error messages (error.c) ------------------------------------------------
 * Every message a library function hands back goes through these, so that
 * one place decides how they are written (and, later, how raw bytes of an
 * input file that a message quotes are made safe to print). */

/* Where in an input file a message points: a line (from 1), a byte offset,
 * or a key of a JSON file ("cases[0].runs[2]"). */
typedef enum sb_at_kind {
    SB_AT_LINE,
    SB_AT_BYTE,
    SB_AT_KEY,
} sb_at_kind;

typedef struct sb_at {
    sb_at_kind kind;
    size_t n;                   /* the line or the byte offset */
    const char *key;            /* SB_AT_KEY */
} sb_at;

static inline sb_at sb_at_line(size_t line)
{
    return (sb_at){.kind = SB_AT_LINE, .n = line};
}

static inline sb_at sb_at_byte(size_t byte)
{
    return (sb_at){.kind = SB_AT_BYTE, .n = byte};
}

static inline sb_at sb_at_key(const char *key)
{
    return (sb_at){.kind = SB_AT_KEY, .key = key};
}

/* err gets the message, every byte outside printable ASCII written as \xNN
 * (one line, whatever an input file held); nothing when err is NULL or
 * errlen 0. */
__attribute__((format(printf, 3, 4)))
void sb_err_set(char *err, size_t errlen, const char *fmt, ...);

/* "PATH:LINE: expected WHAT", "PATH: byte N: expected WHAT" or
 * "PATH: KEY: expected WHAT", WHAT from fmt; returns SB_ERR_INPUT. The
 * va_list form is for a reader's own variadic wrapper. */
__attribute__((format(printf, 5, 6)))
sb_status sb_err_expected(char *err, size_t errlen, const char *path, sb_at at,
                          const char *fmt, ...);
__attribute__((format(printf, 5, 0)))
sb_status sb_err_vexpected(char *err, size_t errlen, const char *path, sb_at at,
                           const char *fmt, va_list ap);

/* ---- arguments (args.c) ----------------------------------------------------- */

/* One option of a command line: "--name VALUE" or "--name=VALUE" when value
 * is set (the value is stored there), a flag "--name" when flag is set. A
 * table of them ends with {NULL}. */
typedef struct sb_option {
    const char *name;
    const char **value;
    bool *flag;
} sb_option;

typedef enum sb_args_status {
    SB_ARGS_OK,
    SB_ARGS_NO_VALUE,           /* an option at the end of the line without its value */
    SB_ARGS_UNKNOWN,            /* "-..." that is no option of the table (also --help) */
    SB_ARGS_EXTRA,              /* a positional argument beyond max_positional */
} sb_args_status;

typedef struct sb_args {
    const sb_option *options;
    const char **positional;    /* room for max_positional */
    int max_positional;
    int n_positional;           /* out */
    const char *bad;            /* out: the argument at fault */
} sb_args;

/* Reads argv[first..argc) in order and stops at the first fault. A lone
 * "-" is a positional argument. err gets "option --x needs a value",
 * "unknown option '--x'" or "unexpected argument 'x'". */
sb_args_status sb_args_parse(sb_args *a, int argc, char **argv, int first, char *err,
                             size_t errlen);

/* A decimal integer in lo..hi (optional sign, nothing after it); err
 * "'S' is not an integer in LO..HI". */
bool sb_int_parse(const char *s, int64_t lo, int64_t hi, int64_t *v, char *err, size_t errlen);
/* A finite number of seconds > 0; err "'S' is not a positive number of seconds". */
bool sb_seconds_parse(const char *s, double *v, char *err, size_t errlen);
/* A step limit (--max-steps): an integer in 1..INT32_MAX. */
bool sb_max_steps_parse(const char *s, int64_t *v, char *err, size_t errlen);

/* ---- thread lists (thread_list.c) -------------------------------------------
 * The one grammar (FORMATS.md, [sweep] threads): items joined by commas,
 * blanks around an item allowed, each item a count N, a range A..B or
 * A-B with A <= B, or `primes` (2, 3, 5, 7) or primes..B (the primes up to
 * B); every count in 1..SB_MAX_THREADS and listed once.
 * threads[0..*n) gets the counts in the order written. err: what is wrong,
 * e.g. "\"8..1\" is a reversed range: a..b and a-b need a <= b". */
bool sb_thread_list_parse(const char *s, int threads[SB_MAX_THREADS], int *n, char *err,
                          size_t errlen);
/* A batch-size list ([invariance] batch, sweep --batch): the same grammar
 * without primes, sizes in 1..SB_MAX_BATCH, at most SB_MAX_BATCH_SIZES. */
bool sb_batch_list_parse(const char *s, int sizes[SB_MAX_BATCH_SIZES], int *n, char *err,
                         size_t errlen);

/* A resume-step list ([sweep] resume, sweep --resume): the same grammar
 * without primes, steps in 1..SB_MAX_RESUME_STEP, at most SB_MAX_RESUME. */
#define SB_MAX_RESUME_STEP 65535
bool sb_resume_list_parse(const char *s, int steps[SB_MAX_RESUME], int *n, char *err,
                          size_t errlen);

/* ---- the system (system.c) ------------------------------------------------- */

/* The path of this executable, for children (readlink of /proc/self/exe). */
bool sb_self_exe(char *out, size_t outlen, char *err, size_t errlen);
/* A work directory into out: `given`, created when missing, or (given NULL)
 * a fresh $TMPDIR/samebits.<what>.XXXXXX (TMPDIR unset or empty: /tmp),
 * which *temporary then says; a temporary one is locked (sb_lock_owned)
 * while this process lives. */
bool sb_work_dir(char *out, size_t outlen, const char *given, const char *what, bool *temporary,
                 char *err, size_t errlen);
/* Creates directory path and its missing parents (mkdir -p); err gets
 * "PATH: cannot create: why". */
bool sb_mkdir_parents(const char *path, char *err, size_t errlen);
/* $TMPDIR, or /tmp when it is unset or empty. */
const char *sb_temp_dir(void);
/* Takes an exclusive flock on fd, the open file or directory at path, and
 * checks path still names it (sb_stale_remove may have removed it between
 * the creation and the lock); false when it does not: create another. */
bool sb_lock_owned(int fd, const char *path);
/* Removes the files and directories dir/<prefix>XXXXXX that no live process
 * holds a lock on (sb_lock_owned): temporaries of a killed writer. */
void sb_stale_remove(const char *dir, const char *prefix);
/* sb_stale_remove of the names `match` accepts. */
void sb_stale_remove_matching(const char *dir, bool (*match)(const char *name));
/* Removes dir and everything under it (symbolic links are not followed). */
void sb_dir_remove_tree(const char *dir);
/* An input file opened for reading, a regular file (sb_regular_open:
 * checked before any read, a FIFO does not block), or NULL with err "PATH:
 * cannot open: WHY" or "PATH: is a directory (a FIFO, ...), expected a
 * regular file". */
FILE *sb_input_open(const char *path, const char *mode, char *err, size_t errlen);

/* ---- output files (out_file.c) ------------------------------------------------
 * Every report and golden file samebits writes (REPORTS.md "Report files"):
 * a regular file replaced atomically through a locked temporary
 * `.NAME.sbtmp.XXXXXX` beside it, a symbolic link followed to its target,
 * anything else but a directory (a device, a FIFO) written in place. */
typedef struct sb_out_file {
    FILE *f;                    /* write here between open and commit */
    bool in_place;              /* the target is not a regular file */
    char path[1024];            /* the target, symbolic links followed */
    char tmp[1024];             /* the temporary beside it (not in place) */
} sb_out_file;

/* err: "PATH: is a directory, expected a file" (SB_ERR_USAGE), "PATH: a
 * FIFO that no process reads", "PATH: cannot create a temporary file beside
 * it: WHY" (SB_ERR_IO), ... */
sb_status sb_out_open(sb_out_file *o, const char *path, char *err, size_t errlen);
/* Flushes, syncs and renames (in place: flushes); on any error, an earlier
 * write's included, err says why with the errno's text ("PATH: cannot
 * write, the old file left as it was: No space left on device") and the
 * temporary is removed. */
sb_status sb_out_commit(sb_out_file *o, char *err, size_t errlen);
/* Closes and removes the temporary: the file at the path stays as it was. */
void sb_out_discard(sb_out_file *o);
/* Whether sb_out_open of path can succeed, checked before the work that
 * fills it: not a directory, and its directory (or the file, when it is
 * not a regular one) writable; err as sb_out_open's. */
bool sb_out_check(const char *path, char *err, size_t errlen);
/* sb_out_check of paths[0..n), skipping NULLs (options not given). */
bool sb_out_check_all(const char *const *paths, size_t n, char *err, size_t errlen);
/* Removes the temporaries of killed writers (no live lock) from dir. */
void sb_out_stale_remove(const char *dir);

/* ---- durations (duration.c) ---------------------------------------------------- */

/* Seconds on the monotonic clock (CLOCK_MONOTONIC), for measuring durations. */
double sb_monotonic_seconds(void);
/* A duration for a person: "12 ms", "4.56 s", "3 min 05 s", "2 h 03 min". */
void sb_duration_human(char *out, size_t len, double seconds);
/* Seconds for a table column: two decimals, three below 0.1 s. */
void sb_seconds_cell(char *out, size_t len, double seconds);

#endif
