/* Golden files: traces written atomically and read back with checks.
 *
 * Writing goes to a temporary file in the golden's own directory (so the
 * rename cannot cross a file system), which is flushed and fsynced before it
 * is renamed over the old golden; the directory is fsynced after, so the
 * rename itself survives a crash. Until the rename the old golden is never
 * opened for writing, and on every error the temporary file is removed.
 * The temporary is locked while it is written: a writer killed before the
 * rename leaves it unlocked, and the next write of the same golden removes
 * it. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "samebits.h"
#include "support/support.h"

/* "dir/name.golden" -> directory "dir" (or "." when there is none). */
static void dir_of(char *dir, size_t size, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* "dir/name.golden" -> "name", the case to regenerate. */
static void case_of(char *name, size_t size, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(base);
    const char *ext = ".golden";
    if (len > strlen(ext) && strcmp(base + len - strlen(ext), ext) == 0)
        len -= strlen(ext);
    snprintf(name, size, "%.*s", (int)len, base);
}

static sb_status io_error(char *err, size_t errlen, const char *path, const char *what, int e)
{
    sb_err_set(err, errlen, "%s: %s: %s", path, what, strerror(e));
    return SB_ERR_IO;
}

static sb_status sync_dir(const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return io_error(err, errlen, dir, "cannot open directory to sync it", errno);
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    /* Some file systems cannot fsync a directory; the rename is done. */
    if (rc != 0 && e != EINVAL && e != ENOTSUP)
        return io_error(err, errlen, dir, "cannot sync directory", e);
    return SB_OK;
}

sb_status sb_golden_write(const sb_trace *t, const char *path, char *err, size_t errlen)
{
    char dir[512], pattern[1024], tmp[1024];
    const char *slash = strrchr(path, '/');
    dir_of(dir, sizeof dir, path);
    int len = snprintf(pattern, sizeof pattern, "%s/.%s.tmp.XXXXXX", dir,
                       slash ? slash + 1 : path);
    if (len < 0 || (size_t)len >= sizeof pattern || strlen(path) >= sizeof dir) {
        sb_err_set(err, errlen, "%s: path too long", path);
        return SB_ERR_USAGE;
    }

    /* A killed writer's temporaries go first; ours is locked while it is
     * written, so that the next writer can tell it from theirs. */
    char prefix[512];
    snprintf(prefix, sizeof prefix, ".%s.tmp.", slash ? slash + 1 : path);
    sb_stale_remove(dir, prefix);
    int fd;
    for (;;) {
        memcpy(tmp, pattern, (size_t)len + 1);
        fd = mkstemp(tmp);
        if (fd < 0)
            return io_error(err, errlen, path, "cannot create a temporary file beside it",
                            errno);
        if (sb_lock_owned(fd, tmp))
            break;
        close(fd);
    }
    /* mkstemp makes the file 0600; a golden is an ordinary repository file. */
    (void)fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return io_error(err, errlen, tmp, "cannot open", e);
    }

    errno = 0;
    sb_status st = sb_trace_write(t, f);
    if (st == SB_ERR_USAGE) {
        fclose(f);
        unlink(tmp);
        sb_err_set(err, errlen, "%s: the trace header is incomplete (case, digest, version, "
                   "family, threads, build)", path);
        return st;
    }
    int e = 0;
    if (st != SB_OK || fflush(f) != 0 || ferror(f))
        e = errno ? errno : EIO;
    else if (fsync(fd) != 0)
        e = errno;
    if (fclose(f) != 0 && e == 0)
        e = errno;
    if (e != 0) {
        unlink(tmp);
        return io_error(err, errlen, tmp, "write failed, old golden left as it was", e);
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        return io_error(err, errlen, path, "cannot replace with the new golden", e);
    }
    return sync_dir(dir, err, errlen);
}

/* Appends the regeneration hint to the message already in err: the command
 * `regenerate`, or `samebits golden CASE` when it is NULL. */
static void add_hint(char *err, size_t errlen, const char *path, const char *regenerate)
{
    char name[256];
    case_of(name, sizeof name, path);
    size_t used = strlen(err);
    if (used >= errlen)
        return;
    if (regenerate)
        sb_err_set(err + used, errlen - used, "; regenerate it with `%s`", regenerate);
    else
        sb_err_set(err + used, errlen - used, "; regenerate it with `samebits golden %s`", name);
}

sb_status sb_golden_read(sb_trace *t, const char *path, const char *expect_digest,
                         char *err, size_t errlen)
{
    return sb_golden_read_hinted(t, path, expect_digest, NULL, err, errlen);
}

sb_status sb_golden_read_hinted(sb_trace *t, const char *path, const char *expect_digest,
                                const char *regenerate, char *err, size_t errlen)
{
    sb_status st = sb_trace_read(t, path, err, errlen);
    if (st == SB_ERR_INPUT || st == SB_ERR_IO) {
        if (errlen)
            add_hint(err, errlen, path, regenerate);
        return st;
    }
    if (st != SB_OK)
        return st;
    if (expect_digest != NULL && strcmp(t->header.case_digest, expect_digest) != 0) {
        sb_err_expected(err, errlen, path, sb_at_line(3),
                        "case digest %s (the case file as it is now), found %s: the case "
                        "changed since this golden was made",
                        expect_digest, t->header.case_digest);
        if (errlen)
            add_hint(err, errlen, path, regenerate);
        sb_trace_free(t);
        return SB_ERR_INPUT;
    }
    return SB_OK;
}
