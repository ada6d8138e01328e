/* Atomic report files and the UTF-8 check the JSON and XML writers share. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_file.h"

sb_status sb_report_file_open(sb_report_file *rf, const char *path)
{
    rf->f = NULL;
    rf->path = path;
    int n = snprintf(rf->tmp, sizeof rf->tmp, "%s.tmpXXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof rf->tmp)
        return SB_ERR_USAGE;
    int fd = mkstemp(rf->tmp);
    if (fd < 0)
        return SB_ERR_IO;
    rf->f = fdopen(fd, "w");
    if (!rf->f) {
        close(fd);
        unlink(rf->tmp);
        return SB_ERR_IO;
    }
    return SB_OK;
}

sb_status sb_report_file_commit(sb_report_file *rf)
{
    bool ok = fflush(rf->f) == 0 && !ferror(rf->f) && fsync(fileno(rf->f)) == 0;
    ok = fclose(rf->f) == 0 && ok;
    rf->f = NULL;
    if (ok && rename(rf->tmp, rf->path) == 0)
        return SB_OK;
    unlink(rf->tmp);
    return SB_ERR_IO;
}

void sb_report_file_discard(sb_report_file *rf)
{
    fclose(rf->f);
    rf->f = NULL;
    unlink(rf->tmp);
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
