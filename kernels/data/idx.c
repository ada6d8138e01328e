/* The IDX reader: an images file and a labels file, plain or gzipped, into
 * one sb_dataset. zlib's gz* functions read plain files unchanged, so one
 * path serves both. Byte positions in messages count bytes of the IDX
 * content, i.e. after decompression. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sb_dataset.h"

#define IDX_IMAGES_MAGIC 0x00000803u /* unsigned bytes, 3 dimensions */
#define IDX_LABELS_MAGIC 0x00000801u /* unsigned bytes, 1 dimension */

/* Limits that only a corrupt header exceeds; they keep a bad count from
 * turning into a huge allocation. Full MNIST is 60000 x 28 x 28 (47 MB). */
#define IDX_MAX_SAMPLES 16777216
#define IDX_MAX_SIDE 4096
#define IDX_MAX_PIXEL_BYTES ((uint64_t)1 << 30)

#define IDX_MAX_DIMS 3

/* gzread takes an unsigned count; larger reads go in pieces of this size. */
#define IDX_READ_CHUNK ((size_t)1 << 28)

typedef struct idx_file {
    const char *path;
    gzFile gz;
    uint64_t pos;       /* bytes of content consumed so far */
    char *err;
    size_t errlen;
} idx_file;

/* Formats "path: at byte N: what" into the caller's buffer. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static sb_status idx_fail(const idx_file *f, uint64_t at, const char *fmt, ...)
{
    if (f->err == NULL || f->errlen == 0)
        return SB_ERR_INPUT;
    int used = snprintf(f->err, f->errlen, "%s: at byte %" PRIu64 ": ", f->path, at);
    if (used >= 0 && (size_t)used < f->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->err + used, f->errlen - (size_t)used, fmt, ap);
        va_end(ap);
    }
    return SB_ERR_INPUT;
}

static sb_status idx_nomem(const idx_file *f, uint64_t bytes)
{
    if (f->err != NULL && f->errlen > 0)
        snprintf(f->err, f->errlen, "%s: cannot allocate %" PRIu64 " bytes", f->path, bytes);
    return SB_ERR_NOMEM;
}

static sb_status idx_open(idx_file *f, const char *path, char *err, size_t errlen)
{
    f->path = path;
    f->pos = 0;
    f->err = err;
    f->errlen = errlen;
    int fd;
    if (sb_regular_open(path, &fd, err, errlen) != SB_OK) {
        f->gz = NULL;
        return SB_ERR_INPUT;
    }
    errno = 0;
    f->gz = gzdopen(fd, "rb");
    if (f->gz == NULL) {
        close(fd);
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "%s: cannot open: %s", path,
                     errno != 0 ? strerror(errno) : "out of memory");
        return SB_ERR_INPUT;
    }
    return SB_OK;
}

static void idx_close(idx_file *f)
{
    if (f->gz != NULL)
        gzclose_r(f->gz);
    f->gz = NULL;
}

/* zlib's last error for the file, without the "path: " it puts in front. */
static const char *idx_gz_error(const idx_file *f, int *zerr)
{
    const char *msg = gzerror(f->gz, zerr);
    size_t len = strlen(f->path);
    if (strncmp(msg, f->path, len) == 0 && strncmp(msg + len, ": ", 2) == 0)
        msg += len + 2;
    return msg;
}

/* Reads n bytes into p: bytes [before, before + n) of a part of `total`
 * bytes that `what` names, for the truncation message. */
static sb_status idx_read_part(idx_file *f, uint8_t *p, size_t n, const char *what,
                               size_t before, size_t total)
{
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < IDX_READ_CHUNK ? n - done : IDX_READ_CHUNK;
        int got = gzread(f->gz, p + done, (unsigned)want);
        if (got < 0) {
            int zerr = 0;
            const char *msg = idx_gz_error(f, &zerr);
            idx_fail(f, f->pos + done, "cannot read %s: %s", what, msg);
            return zerr == Z_ERRNO ? SB_ERR_IO : SB_ERR_INPUT;
        }
        if (got == 0) {
            /* zlib notes a gzip stream that stops early ("unexpected end of file") */
            int zerr = Z_OK;
            const char *msg = idx_gz_error(f, &zerr);
            return idx_fail(f, f->pos + done, "file ends inside the %s (%zu of %zu bytes)%s%s",
                            what, before + done, total, zerr != Z_OK ? "; zlib: " : "",
                            zerr != Z_OK ? msg : "");
        }
        done += (size_t)got;
    }
    f->pos += n;
    return SB_OK;
}

/* Reads exactly n bytes; `what` names them for the truncation message. */
static sb_status idx_read(idx_file *f, void *buf, size_t n, const char *what)
{
    return idx_read_part(f, buf, n, what, 0, n);
}

/* Reads exactly n bytes into *out, a buffer grown as they come (doubling
 * from 1 MiB): a header may declare up to 1 GiB, a gzipped file's length
 * does not bound its content, and only what the file holds is allocated
 * (twice that at most). *out is NULL on failure. */
static sb_status idx_read_alloc(idx_file *f, uint8_t **out, size_t n, const char *what)
{
    size_t cap = 0;
    uint8_t *buf = NULL;
    sb_status st = SB_OK;
    do {
        size_t grown = cap == 0 ? (size_t)1 << 20 : 2 * cap;
        grown = grown < n ? grown : n;
        uint8_t *p = realloc(buf, grown ? grown : 1);
        if (p == NULL) {
            st = idx_nomem(f, grown);
            break;
        }
        buf = p;
        st = idx_read_part(f, buf + cap, grown - cap, what, cap, n);
        cap = grown;
    } while (st == SB_OK && cap < n);
    if (st != SB_OK) {
        free(buf);
        buf = NULL;
    }
    *out = buf;
    return st;
}

/* After the last expected byte the file must end. */
static sb_status idx_expect_end(idx_file *f)
{
    uint8_t extra;
    int got = gzread(f->gz, &extra, 1);
    if (got < 0) {
        int zerr = 0;
        const char *msg = idx_gz_error(f, &zerr);
        idx_fail(f, f->pos, "cannot read past the data: %s", msg);
        return zerr == Z_ERRNO ? SB_ERR_IO : SB_ERR_INPUT;
    }
    if (got > 0)
        return idx_fail(f, f->pos, "trailing bytes after the %" PRIu64 "-byte IDX content",
                        f->pos);
    return SB_OK;
}

static uint32_t be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* Reads magic and dimensions; checks the magic and each dimension's range
 * (dim[0] is the sample count, the others sides). */
static sb_status idx_read_header(idx_file *f, uint32_t magic, int ndims, uint32_t *dim)
{
    uint8_t head[4 * (1 + IDX_MAX_DIMS)];
    SB_ASSERT(ndims >= 1 && ndims <= IDX_MAX_DIMS);
    sb_status st = idx_read(f, head, 4 * (size_t)(1 + ndims), "IDX header");
    if (st != SB_OK)
        return st;
    uint32_t got = be32(head);
    if (got != magic)
        return idx_fail(f, 0, "magic 0x%08" PRIx32 ", expected 0x%08" PRIx32
                        " (IDX of unsigned bytes with %d dimension%s)",
                        got, magic, ndims, ndims == 1 ? "" : "s");
    for (int i = 0; i < ndims; i++) {
        dim[i] = be32(head + 4 * (1 + i));
        uint32_t max = i == 0 ? IDX_MAX_SAMPLES : IDX_MAX_SIDE;
        if (dim[i] == 0 || dim[i] > max)
            return idx_fail(f, 4 * (uint64_t)(1 + i), "dimension %d is %" PRIu32
                            ", expected 1..%" PRIu32, i, dim[i], max);
    }
    return SB_OK;
}

static sb_status images_read(sb_dataset *out, const char *path, char *err, size_t errlen)
{
    idx_file f;
    sb_status st = idx_open(&f, path, err, errlen);
    if (st != SB_OK)
        return st;
    uint32_t dim[3];
    st = idx_read_header(&f, IDX_IMAGES_MAGIC, 3, dim);
    uint64_t bytes = (uint64_t)dim[0] * dim[1] * dim[2];
    if (st == SB_OK && bytes > IDX_MAX_PIXEL_BYTES)
        st = idx_fail(&f, 4, "%" PRIu32 " x %" PRIu32 " x %" PRIu32
                      " pixels is more than the %" PRIu64 " bytes a data set may have",
                      dim[0], dim[1], dim[2], IDX_MAX_PIXEL_BYTES);
    if (st == SB_OK)
        st = idx_read_alloc(&f, &out->pixels, (size_t)bytes, "pixel data");
    if (st == SB_OK)
        st = idx_expect_end(&f);
    if (st == SB_OK) {
        out->n = dim[0];
        out->rows = (int)dim[1];
        out->cols = (int)dim[2];
    }
    idx_close(&f);
    return st;
}

static sb_status labels_read(sb_dataset *out, const char *path, const char *images_path,
                             char *err, size_t errlen)
{
    idx_file f;
    sb_status st = idx_open(&f, path, err, errlen);
    if (st != SB_OK)
        return st;
    uint32_t n = 0;
    uint8_t *raw = NULL;
    st = idx_read_header(&f, IDX_LABELS_MAGIC, 1, &n);
    if (st == SB_OK && (int64_t)n != out->n)
        st = idx_fail(&f, 4, "%" PRIu32 " labels, but %s has %" PRId64 " images",
                      n, images_path, out->n);
    if (st == SB_OK) {
        raw = malloc(n);
        out->labels = malloc(n * sizeof *out->labels);
        if (raw == NULL || out->labels == NULL)
            st = idx_nomem(&f, (uint64_t)n * (1 + sizeof *out->labels));
    }
    if (st == SB_OK)
        st = idx_read(&f, raw, n, "label data");
    if (st == SB_OK)
        st = idx_expect_end(&f);
    for (uint32_t i = 0; st == SB_OK && i < n; i++) {
        if (raw[i] > 9)
            st = idx_fail(&f, 8 + (uint64_t)i, "label %d is not in 0..9", raw[i]);
        else
            out->labels[i] = raw[i];
    }
    free(raw);
    idx_close(&f);
    return st;
}

sb_status sb_dataset_load_idx(sb_dataset *out, const char *images_path,
                              const char *labels_path, char *err, size_t errlen)
{
    SB_ASSERT(out != NULL && images_path != NULL && labels_path != NULL);
    memset(out, 0, sizeof *out);
    out->owns = 1;
    sb_status st = images_read(out, images_path, err, errlen);
    if (st == SB_OK)
        st = labels_read(out, labels_path, images_path, err, errlen);
    if (st != SB_OK)
        sb_dataset_free(out);
    return st;
}
