/* Atomic report files and the UTF-8 check the JSON and XML writers share. */
#include <inttypes.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "report_file.h"
#include "support/support.h"

/* Why the last report write failed, for sb_report_error. */
static char last_error[1536];

sb_status sb_report_file_open(sb_report_file *rf, const char *path)
{
    sb_status st = sb_out_open(&rf->out, path, last_error, sizeof last_error);
    rf->f = rf->out.f;
    return st;
}

sb_status sb_report_file_commit(sb_report_file *rf)
{
    rf->f = NULL;
    return sb_out_commit(&rf->out, last_error, sizeof last_error);
}

void sb_report_file_discard(sb_report_file *rf)
{
    rf->f = NULL;
    sb_out_discard(&rf->out);
}

void sb_report_error_set(const char *path, const char *why)
{
    sb_err_set(last_error, sizeof last_error, "%s: cannot write: %s", path, why);
}

const char *sb_report_sweep_id(void)
{
    static char id[17];
    if (!id[0]) {
        uint64_t x = 0;
        if (getrandom(&x, sizeof x, 0) != (ssize_t)sizeof x)
            x = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
        snprintf(id, sizeof id, "%016" PRIx64, x);
    }
    return id;
}

const char *sb_report_error(void)
{
    return last_error;
}

size_t sb_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    unsigned cp = c & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;   /* also stops at the terminating NUL */
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    /* overlong forms, UTF-16 surrogates and code points past U+10FFFF */
    if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}
