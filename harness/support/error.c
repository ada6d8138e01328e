/* The one error formatter: every message a library function hands back in
 * its err buffer is written here, the messages about an input file's
 * contents in one of three forms (support.h). */
#include <stdio.h>

#include "support.h"

/* raw into err with every byte outside printable ASCII (a newline, a CR, a
 * control character, a non-UTF-8 or any non-ASCII byte from an input file)
 * written as \xNN: a message is one line that cannot upset a terminal. An
 * escape is never cut in half. */
static void printable_copy(char *err, size_t errlen, const char *raw)
{
    size_t used = 0;
    for (const unsigned char *c = (const unsigned char *)raw; *c; c++) {
        bool plain = *c >= 0x20 && *c < 0x7f;
        size_t need = plain ? 1 : 4;
        if (used + need >= errlen)
            break;
        if (plain)
            err[used] = (char)*c;
        else
            snprintf(err + used, 5, "\\x%02x", *c);
        used += need;
    }
    err[used] = '\0';
}

void sb_err_set(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    char raw[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    printable_copy(err, errlen, raw);
}

sb_status sb_err_vexpected(char *err, size_t errlen, const char *path, sb_at at,
                           const char *fmt, va_list ap)
{
    char what[1024];
    vsnprintf(what, sizeof what, fmt, ap);
    switch (at.kind) {
    case SB_AT_LINE:
        sb_err_set(err, errlen, "%s:%zu: expected %s", path, at.n, what);
        break;
    case SB_AT_BYTE:
        sb_err_set(err, errlen, "%s: byte %zu: expected %s", path, at.n, what);
        break;
    case SB_AT_KEY:
        sb_err_set(err, errlen, "%s: %s: expected %s", path, at.key, what);
        break;
    }
    return SB_ERR_INPUT;
}

sb_status sb_err_expected(char *err, size_t errlen, const char *path, sb_at at,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_status st = sb_err_vexpected(err, errlen, path, at, fmt, ap);
    va_end(ap);
    return st;
}
