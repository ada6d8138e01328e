/* The one error formatter: every message a library function hands back in
 * its err buffer is written here, the messages about an input file's
 * contents in one of three forms (support.h). */
#include <stdio.h>

#include "support.h"

void sb_err_set(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
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
