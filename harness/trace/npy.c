/* NumPy .npy version 1.0 files of little-endian float32 ('<f4'), int32
 * ('<i4') or int64 ('<i8') in C order, the dump format of the locator (FORMATS.md).
 *
 * Layout: "\x93NUMPY", major 1, minor 0, header length (uint16 LE), then a
 * Python dict literal padded with spaces and ended by '\n' so that the data
 * starts at a multiple of 64 bytes, then the raw elements. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "sb_harness.h"
#include "support/support.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c writes the host's bytes as '<f4'/'<i4'/'<i8': little-endian hosts only"
#endif

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* Largest element count a dump may declare: 2^32 (16 GiB), far beyond any
 * probe, small enough that the byte count cannot overflow. */
#define MAX_ELEMENTS ((uint64_t)1 << 32)

static const char *descr_of(sb_dtype t)
{
    switch (t) {
    case SB_DTYPE_F32: return "<f4";
    case SB_DTYPE_I32: return "<i4";
    case SB_DTYPE_I64: return "<i8";
    }
    return NULL;
}

sb_status sb_npy_write(const char *path, const sb_tensor *t)
{
    const char *descr = descr_of(t->dtype);
    if (descr == NULL || t->ndim < 0 || t->ndim > SB_MAX_DIMS)
        return SB_ERR_USAGE;
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                       descr);
    /* NumPy's spelling: () for a scalar, (n,) for one dimension, (a, b) for more. */
    for (int d = 0; d < t->ndim; d++) {
        if (t->dim[d] < 0)
            return SB_ERR_USAGE;
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%s%lld", d ? ", " : "",
                        (long long)t->dim[d]);
    }
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s), }", t->ndim == 1 ? "," : "");
    size_t total = (10 + (size_t)len + 1 + 63) / 64 * 64;
    size_t header_len = total - 10;

    unsigned char head[10];
    memcpy(head, magic, 6);
    head[6] = 1;
    head[7] = 0;
    head[8] = (unsigned char)(header_len & 0xff);
    head[9] = (unsigned char)(header_len >> 8);

    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return SB_ERR_IO;
    fwrite(head, 1, sizeof head, f);
    fwrite(dict, 1, (size_t)len, f);
    for (size_t i = (size_t)len; i + 1 < header_len; i++)
        fputc(' ', f);
    fputc('\n', f);
    size_t bytes = sb_tensor_bytes(t);
    if (bytes)
        fwrite(t->data, 1, bytes, f);
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    return ok ? SB_OK : SB_ERR_IO;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct parser {
    const char *s;      /* the header dict */
    size_t pos;
    const char *path;
    char *err;
    size_t errlen;
} parser;

/* "path: byte N: expected ..." at the parser's place in the header. */
#define fail(p, ...) \
    sb_err_expected((p)->err, (p)->errlen, (p)->path, sb_at_byte(10 + (p)->pos), __VA_ARGS__)

static void skip_space(parser *p)
{
    while (p->s[p->pos] == ' ')
        p->pos++;
}

static bool eat(parser *p, char ch)
{
    skip_space(p);
    if (p->s[p->pos] != ch)
        return false;
    p->pos++;
    return true;
}

/* A quoted string without escapes into out. */
static bool quoted(parser *p, char *out, size_t size)
{
    skip_space(p);
    char q = p->s[p->pos];
    if (q != '\'' && q != '"')
        return false;
    const char *start = p->s + p->pos + 1;
    const char *end = strchr(start, q);
    if (end == NULL || (size_t)(end - start) >= size)
        return false;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    p->pos += (size_t)(end - start) + 2;
    return true;
}

static bool integer(parser *p, int64_t *out)
{
    skip_space(p);
    const char *s = p->s + p->pos;
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0)
        return false;
    *out = v;
    p->pos += (size_t)(end - s);
    return true;
}

static sb_status parse_shape(parser *p, sb_tensor *t)
{
    if (!eat(p, '('))
        return fail(p, "a shape tuple \"(...)\"");
    t->ndim = 0;
    while (!eat(p, ')')) {
        if (t->ndim == SB_MAX_DIMS)
            return fail(p, "at most %d dimensions", SB_MAX_DIMS);
        if (!integer(p, &t->dim[t->ndim]))
            return fail(p, "a dimension (a non-negative integer)");
        t->ndim++;
        if (eat(p, ','))
            continue;
        if (eat(p, ')'))
            break;
        return fail(p, "',' or ')' in the shape");
    }
    uint64_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        if ((uint64_t)t->dim[d] > MAX_ELEMENTS || (count *= (uint64_t)t->dim[d]) > MAX_ELEMENTS)
            return fail(p, "at most 2^32 elements");
    }
    return SB_OK;
}

static sb_status parse_dict(parser *p, sb_tensor *t)
{
    bool have_descr = false, have_order = false, have_shape = false;
    if (!eat(p, '{'))
        return fail(p, "a header dict starting with '{'");
    while (!eat(p, '}')) {
        char key[32], value[32];
        if (!quoted(p, key, sizeof key) || !eat(p, ':'))
            return fail(p, "a quoted key and ':'");
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if (!quoted(p, value, sizeof value))
                return fail(p, "a quoted descr");
            if (strcmp(value, "<f4") == 0)
                t->dtype = SB_DTYPE_F32;
            else if (strcmp(value, "<i4") == 0)
                t->dtype = SB_DTYPE_I32;
            else if (strcmp(value, "<i8") == 0)
                t->dtype = SB_DTYPE_I64;
            else
                return fail(p, "descr '<f4', '<i4' or '<i8', found '%s'", value);
            have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            skip_space(p);
            if (strncmp(p->s + p->pos, "False", 5) != 0)
                return fail(p, "fortran_order False (C order)");
            p->pos += 5;
            have_order = true;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            sb_status st = parse_shape(p, t);
            if (st != SB_OK)
                return st;
            have_shape = true;
        } else {
            return fail(p, "the keys descr, fortran_order and shape once each, found '%s'", key);
        }
        if (!eat(p, ',')) {
            if (!eat(p, '}'))
                return fail(p, "',' or '}' after a value");
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape)
        return fail(p, "all of descr, fortran_order and shape");
    skip_space(p);
    if (p->s[p->pos] != '\n' || p->s[p->pos + 1] != '\0')
        return fail(p, "only spaces and a final newline after the dict");
    return SB_OK;
}

static sb_status read_file(FILE *f, const char *path, sb_tensor *t, char *err, size_t errlen)
{
    unsigned char head[10];
    if (fread(head, 1, sizeof head, f) != sizeof head || memcmp(head, magic, 6) != 0)
        return sb_err_expected(err, errlen, path, sb_at_byte(0),
                               "the .npy magic \"\\x93NUMPY\"");
    if (head[6] != 1 || head[7] != 0)
        return sb_err_expected(err, errlen, path, sb_at_byte(6),
                               ".npy format version 1.0, found %d.%d", head[6], head[7]);
    size_t header_len = (size_t)head[8] | (size_t)head[9] << 8;
    char *dict = malloc(header_len + 1);
    if (dict == NULL) {
        sb_err_set(err, errlen, "%s: out of memory for the header", path);
        return SB_ERR_NOMEM;
    }
    if (fread(dict, 1, header_len, f) != header_len) {
        free(dict);
        return sb_err_expected(err, errlen, path, sb_at_byte(10),
                               "a %zu-byte header (file truncated?)", header_len);
    }
    dict[header_len] = '\0';
    parser p = {.s = dict, .path = path, .err = err, .errlen = errlen};
    sb_status st = strlen(dict) == header_len ? parse_dict(&p, t)
                                             : fail(&p, "a header without NUL bytes");
    free(dict);
    if (st != SB_OK)
        return st;

    /* The file's length first: a header may declare any size up to 16 GiB,
     * and only what the file holds is allocated. */
    size_t bytes = sb_tensor_bytes(t);
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || (uint64_t)sb.st_size != 10 + header_len + (uint64_t)bytes)
        return sb_err_expected(err, errlen, path, sb_at_byte(10 + header_len),
                               "exactly %zu bytes of data after the header", bytes);
    t->data = malloc(bytes ? bytes : 1);
    if (t->data == NULL) {
        sb_err_set(err, errlen, "%s: out of memory for %zu bytes of data", path, bytes);
        return SB_ERR_NOMEM;
    }
    if (fread(t->data, 1, bytes, f) != bytes || fgetc(f) != EOF) {
        free(t->data);
        t->data = NULL;
        return sb_err_expected(err, errlen, path, sb_at_byte(10 + header_len),
                               "exactly %zu bytes of data after the header", bytes);
    }
    return SB_OK;
}

sb_status sb_npy_read(const char *path, sb_tensor *t, char *err, size_t errlen)
{
    FILE *f = sb_input_open(path, "rb", err, errlen);
    if (f == NULL)
        return SB_ERR_IO;
    sb_tensor tmp = {0};
    sb_status st = read_file(f, path, &tmp, err, errlen);
    fclose(f);
    if (st == SB_OK)
        *t = tmp;
    else
        t->data = NULL;
    return st;
}
