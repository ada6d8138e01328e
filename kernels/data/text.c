/* The text reader: a file of bytes into tokens of the fixed character
 * vocabulary (sb_text.h), checked for length and content when the caller
 * knows them, and the text data sets by name. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "sb_text.h"

int sb_text_token(unsigned char byte)
{
    if (byte == '\n')
        return 0;
    if (byte == '\t')
        return 1;
    if (byte >= 0x20 && byte <= 0x7e)
        return 2 + (byte - 0x20);
    return SB_TEXT_OTHER;
}

char sb_text_char(int token)
{
    SB_ASSERT(token >= 0 && token < SB_TEXT_VOCAB);
    if (token == 0)
        return '\n';
    if (token == 1)
        return '\t';
    if (token == SB_TEXT_OTHER)
        return '?';
    return (char)(0x20 + token - 2);
}

/* Texts that only a wrong file reaches: 1 GiB. */
#define TEXT_MAX_BYTES ((int64_t)1 << 30)

sb_status sb_text_load(sb_text *out, const char *path, int64_t expect_bytes,
                       uint64_t expect_xxh3, char *err, size_t errlen)
{
    SB_ASSERT(out != NULL && path != NULL);
    memset(out, 0, sizeof *out);
    int fd;
    sb_status opened = sb_regular_open(path, &fd, err, errlen);
    if (opened != SB_OK)
        return opened;
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        close(fd);
        return sb_msg(err, errlen, SB_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    int64_t size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return sb_msg(err, errlen, SB_ERR_IO, "%s: cannot read its length", path);
    }
    sb_status st = SB_OK;
    if (size == 0)
        st = sb_msg(err, errlen, SB_ERR_INPUT, "%s: at byte 0: expected text, found an "
                       "empty file", path);
    else if (size > TEXT_MAX_BYTES)
        st = sb_msg(err, errlen, SB_ERR_INPUT, "%s: at byte %" PRId64 ": expected at most "
                       "%" PRId64 " bytes of text", path, TEXT_MAX_BYTES, TEXT_MAX_BYTES);
    else if (expect_bytes > 0 && size != expect_bytes)
        st = sb_msg(err, errlen, SB_ERR_INPUT, "%s: at byte %" PRId64 ": expected %" PRId64
                       " bytes, the file has %" PRId64 " (%s; run tools/fetch-data)", path,
                       size < expect_bytes ? size : expect_bytes, expect_bytes, size,
                       size < expect_bytes ? "truncated" : "not the pinned text");
    unsigned char *bytes = st == SB_OK ? malloc((size_t)size) : NULL;
    if (st == SB_OK && bytes == NULL)
        st = sb_msg(err, errlen, SB_ERR_NOMEM, "%s: cannot allocate %" PRId64 " bytes", path,
                       size);
    if (st == SB_OK && fread(bytes, 1, (size_t)size, f) != (size_t)size)
        st = sb_msg(err, errlen, SB_ERR_IO, "%s: read failed", path);
    fclose(f);
    if (st == SB_OK) {
        const unsigned char *nul = memchr(bytes, '\0', (size_t)size);
        if (nul != NULL)
            st = sb_msg(err, errlen, SB_ERR_INPUT, "%s: at byte %td: expected text, found "
                           "a NUL byte", path, nul - bytes);
    }
    if (st == SB_OK && expect_xxh3 != 0 && XXH3_64bits(bytes, (size_t)size) != expect_xxh3)
        st = sb_msg(err, errlen, SB_ERR_INPUT, "%s: at byte 0: expected the pinned text "
                       "(XXH3-64 %016" PRIx64 "), its content differs (run tools/fetch-data)",
                       path, expect_xxh3);
    if (st != SB_OK) {
        free(bytes);
        return st;
    }
    /* one token per byte, in place */
    for (int64_t i = 0; i < size; i++)
        bytes[i] = (unsigned char)sb_text_token(bytes[i]);
    out->n = size;
    out->tokens = bytes;
    out->owns = 1;
    return SB_OK;
}

typedef struct text_file {
    const char *name;
    const char *file;       /* under data_dir */
    int64_t bytes;
    uint64_t xxh3;
    const char *hint;
} text_file;

/* The pins are of the file tools/fetch-data builds (tools/data.sha256 has its
 * sha256): Debian 12's fortunes and fortunes-min 1:1.99.1-7.3. */
static const text_file text_table[] = {
    {"fortunes", "fortunes.txt", 2576674, UINT64_C(0x065763508241ddc0),
     "run tools/fetch-data (it needs Debian's fortunes package: apt-get install fortunes)"},
};

static const text_file *text_of(const char *name)
{
    for (size_t i = 0; i < sizeof text_table / sizeof text_table[0]; i++)
        if (strcmp(text_table[i].name, name) == 0)
            return &text_table[i];
    return NULL;
}

bool sb_text_known(const char *name)
{
    return text_of(name) != NULL;
}

sb_status sb_text_open(sb_text *out, const char *name, const char *data_dir, char *err,
                       size_t errlen)
{
    SB_ASSERT(out != NULL && name != NULL);
    memset(out, 0, sizeof *out);
    const text_file *t = text_of(name);
    if (t == NULL)
        return sb_msg(err, errlen, SB_ERR_USAGE, "unknown text data set '%s' (known: "
                         "fortunes)", name);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data_dir != NULL ? data_dir : "data", t->file);
    if (access(path, F_OK) != 0)
        return sb_msg(err, errlen, SB_ERR_INPUT, "%s: missing (data set '%s'); %s", path,
                         name, t->hint);
    sb_status st = sb_text_load(out, path, t->bytes, t->xxh3, err, errlen);
    return st == SB_ERR_IO ? SB_ERR_INPUT : st;
}

sb_status sb_text_slice(sb_text *out, const sb_text *t, int64_t begin, int64_t end)
{
    SB_ASSERT(out != NULL && t != NULL);
    if (begin < 0 || end < begin || end > t->n)
        return SB_ERR_USAGE;
    out->n = end - begin;
    out->tokens = t->tokens + begin;
    out->owns = 0;
    return SB_OK;
}

double sb_text_unigram_entropy(const sb_text *t)
{
    int64_t count[SB_TEXT_VOCAB] = {0};
    for (int64_t i = 0; i < t->n; i++)
        count[t->tokens[i]]++;
    double h = 0.0;
    for (int v = 0; v < SB_TEXT_VOCAB; v++) {
        if (count[v] == 0)
            continue;
        double f = (double)count[v] / (double)t->n;
        h -= f * log(f);
    }
    return h;
}

void sb_text_free(sb_text *t)
{
    if (t == NULL)
        return;
    if (t->owns)
        free(t->tokens);
    memset(t, 0, sizeof *t);
}
