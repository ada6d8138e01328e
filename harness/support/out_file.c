/* Output files that keep what they write to (REPORTS.md "Report files").
 *
 * A regular file (or a missing one) is replaced atomically: the new content
 * goes to a temporary beside it, `.NAME.sbtmp.XXXXXX`, locked while it is
 * written (sb_lock_owned), flushed, synced and renamed over it (still
 * locked), and the directory synced after. A symbolic link is followed: its
 * target is what gets replaced, the link stays. Anything else that is not a directory (a
 * device such as /dev/null, a FIFO) is written in place, since renaming over
 * it would put a regular file where it was; so is an open file of this
 * process (/dev/stdout, /dev/fd/N: a path into /proc/). A new file gets the mode the
 * umask allows (0666 & ~umask); a replaced one keeps its own. A temporary
 * left by a killed writer has no live lock: sb_out_stale_remove removes it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

static const char tmp_infix[] = ".sbtmp.";

static sb_status io_error(char *err, size_t errlen, const char *path, const char *what, int e)
{
    sb_err_set(err, errlen, "%s: %s: %s", path, what, strerror(e));
    return SB_ERR_IO;
}

/* An output whose directory `dir` refuses it: a missing directory named as
 * such (the system's reason alone does not say which part is missing). */
static sb_status dir_error(char *err, size_t errlen, const char *path, const char *dir,
                           const char *what, int e)
{
    if (e == ENOENT) {
        sb_err_set(err, errlen, "%s: its directory %s does not exist (create it): %s", path,
                   dir, strerror(e));
        return SB_ERR_IO;
    }
    return io_error(err, errlen, path, what, e);
}

/* "dir/name" -> "dir" ("." without a slash, "/" for "/name"). */
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

/* Whether path's directory, links followed, is the directory `other`
 * (same ends: true for both "/proc"s when same_fs only matches the file
 * system). */
static bool dir_is(const char *path, const char *other, bool same_fs)
{
    char dir[1024];
    struct stat a, b;
    dir_of(dir, sizeof dir, path);
    return stat(dir, &a) == 0 && stat(other, &b) == 0 && a.st_dev == b.st_dev &&
           (same_fs || a.st_ino == b.st_ino);
}

/* path with its symbolic links followed to the last one's target (which
 * need not exist yet); false with err on a loop or a name too long.
 * *descriptor: the path is or leads into /proc/ (/dev/stdout, /dev/fd/3):
 * an open file of this process, whatever its type, to write where it is. */
static bool links_follow(char *out, size_t len, const char *path, bool *descriptor, char *err,
                         size_t errlen)
{
    if ((size_t)snprintf(out, len, "%s", path) >= len) {
        sb_err_set(err, errlen, "%s: path too long", path);
        return false;
    }
    for (int depth = 0; depth < 40; depth++) {
        struct stat st;
        /* /dev/fd/3 is /proc/PID/fd/3 */
        if (dir_is(out, "/proc", true)) {
            *descriptor = true;
            return true;
        }
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
            return true;
        char target[1024], dir[1024];
        ssize_t n = readlink(out, target, sizeof target - 1);
        if (n < 0 || (size_t)n >= sizeof target - 1) {
            sb_err_set(err, errlen, "%s: cannot read the symbolic link", path);
            return false;
        }
        target[n] = '\0';
        dir_of(dir, sizeof dir, out);
        int m = target[0] == '/' ? snprintf(out, len, "%s", target)
                                 : snprintf(out, len, "%s/%s", dir, target);
        if (m < 0 || (size_t)m >= len) {
            sb_err_set(err, errlen, "%s: path too long", path);
            return false;
        }
    }
    sb_err_set(err, errlen, "%s: too many levels of symbolic links", path);
    return false;
}

static mode_t umask_mode(void)
{
    mode_t mask = umask(022);
    umask(mask);
    return 0666 & ~mask;
}

/* The descriptor N of a path N in /proc/self/fd/ (links followed), or -1. */
static int self_fd(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (base[0] < '0' || base[0] > '9' || !dir_is(path, "/proc/self/fd", false))
        return -1;
    char *end;
    long fd = strtol(base, &end, 10);
    return *end == '\0' && fd <= 1000000 ? (int)fd : -1;
}

static sb_status open_in_place(sb_out_file *o, mode_t type, char *err, size_t errlen)
{
    /* one of this process's descriptors (/dev/stdout) is written where it
     * stands, after what was written to it before, as a shell would; any
     * other file is opened with O_NONBLOCK: a FIFO nobody reads fails
     * (ENXIO) instead of waiting */
    int own = self_fd(o->path);
    if (own >= 0)
        fflush(NULL);   /* what stdio holds for it goes first */
    int fd = own >= 0 ? fcntl(own, F_DUPFD_CLOEXEC, 0)
                      : open(o->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(type))
            sb_err_set(err, errlen, "%s: a FIFO that no process reads", o->path);
        else
            io_error(err, errlen, o->path, "cannot open", errno);
        return SB_ERR_IO;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    o->in_place = true;
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        return io_error(err, errlen, o->path, "cannot open", errno);
    }
    return SB_OK;
}

sb_status sb_out_open(sb_out_file *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    bool descriptor = false;
    if (!links_follow(o->path, sizeof o->path, path, &descriptor, err, errlen))
        return SB_ERR_USAGE;
    struct stat st;
    bool exists = stat(o->path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        sb_err_set(err, errlen, "%s: is a directory, expected a file", path);
        return SB_ERR_USAGE;
    }
    if (exists && (!S_ISREG(st.st_mode) || descriptor))
        return open_in_place(o, st.st_mode, err, errlen);

    char dir[1024];
    dir_of(dir, sizeof dir, o->path);
    const char *base = strrchr(o->path, '/') ? strrchr(o->path, '/') + 1 : o->path;
    char pattern[1024];
    int len = snprintf(pattern, sizeof pattern, "%s/.%s%sXXXXXX", dir, base, tmp_infix);
    if (len < 0 || (size_t)len >= sizeof pattern) {
        sb_err_set(err, errlen, "%s: path too long", path);
        return SB_ERR_USAGE;
    }
    sb_out_stale_remove(dir);
    int fd;
    for (;;) {
        memcpy(o->tmp, pattern, (size_t)len + 1);
        fd = mkstemp(o->tmp);
        if (fd < 0)
            return dir_error(err, errlen, path, dir, "cannot create a temporary file beside it",
                             errno);
        if (sb_lock_owned(fd, o->tmp))
            break;
        close(fd);
    }
    (void)fchmod(fd, exists ? st.st_mode & 07777 : umask_mode());
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return io_error(err, errlen, path, "cannot open", e);
    }
    return SB_OK;
}

static sb_status sync_dir(const char *path, char *err, size_t errlen)
{
    char dir[1024];
    dir_of(dir, sizeof dir, path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return io_error(err, errlen, dir, "cannot open the directory to sync it", errno);
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    /* some file systems cannot fsync a directory; the rename is done */
    if (rc != 0 && e != EINVAL && e != ENOTSUP)
        return io_error(err, errlen, dir, "cannot sync the directory", e);
    return SB_OK;
}

/* The temporary gets its name while still open, and so still locked: closed
 * first, it stood unlocked under its temporary name, and another writer in
 * the same directory (a sweep's ranks write their traces side by side)
 * removed it there as a killed writer's, the rename then failing. */
sb_status sb_out_commit(sb_out_file *o, char *err, size_t errlen)
{
    errno = 0;
    int e = 0;
    const char *what = o->in_place ? "cannot write" : "cannot write, the old file left as it was";
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    else if (!o->in_place && fsync(fileno(o->f)) != 0)
        e = errno;
    else if (!o->in_place && rename(o->tmp, o->path) != 0) {
        e = errno;
        what = "cannot replace";
    }
    bool renamed = !o->in_place && e == 0;
    if (fclose(o->f) != 0 && e == 0) {
        e = errno;
        what = "cannot close";
    }
    o->f = NULL;
    if (e != 0) {
        if (!renamed && !o->in_place)
            unlink(o->tmp);
        return io_error(err, errlen, o->path, what, e);
    }
    if (o->in_place)
        return SB_OK;
    return sync_dir(o->path, err, errlen);
}

void sb_out_discard(sb_out_file *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (!o->in_place)
        unlink(o->tmp);
}

bool sb_out_check(const char *path, char *err, size_t errlen)
{
    char target[1024], dir[1024];
    bool descriptor = false;
    if (!links_follow(target, sizeof target, path, &descriptor, err, errlen))
        return false;
    struct stat st;
    if (stat(target, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            sb_err_set(err, errlen, "%s: is a directory, expected a file", path);
            return false;
        }
        if (!S_ISREG(st.st_mode) || descriptor) {
            if (access(target, W_OK) != 0) {
                io_error(err, errlen, path, "cannot write", errno);
                return false;
            }
            return true;
        }
    }
    dir_of(dir, sizeof dir, target);
    if (access(dir, W_OK | X_OK) != 0) {
        dir_error(err, errlen, path, dir, "cannot write in its directory", errno);
        return false;
    }
    return true;
}

bool sb_out_check_all(const char *const *paths, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (paths[i] && !sb_out_check(paths[i], err, errlen))
            return false;
    return true;
}

static bool is_out_temporary(const char *name)
{
    size_t n = strlen(name), infix = strlen(tmp_infix);
    return name[0] == '.' && n > infix + 7 && strncmp(name + n - 6 - infix, tmp_infix, infix) == 0;
}

void sb_out_stale_remove(const char *dir)
{
    sb_stale_remove_matching(dir, is_out_temporary);
}
