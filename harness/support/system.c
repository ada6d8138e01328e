/* This executable's path and work directories, for the commands that spawn
 * children and keep their files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

bool sb_self_exe(char *out, size_t outlen, char *err, size_t errlen)
{
    ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
    if (n <= 0 || (size_t)n >= outlen - 1) {
        sb_err_set(err, errlen, "cannot find this executable via /proc/self/exe");
        return false;
    }
    out[n] = '\0';
    return true;
}

bool sb_mkdir_parents(const char *path, char *err, size_t errlen)
{
    char dir[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof dir) {
        sb_err_set(err, errlen, "%.200s: cannot create: path empty or too long", path);
        return false;
    }
    memcpy(dir, path, n + 1);
    /* each prefix that ends before a '/', then the whole path */
    for (size_t i = 1; i <= n; i++) {
        if (dir[i] != '/' && dir[i] != '\0')
            continue;
        char c = dir[i];
        dir[i] = '\0';
        struct stat st;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            sb_err_set(err, errlen, "%.200s: cannot create: %s", dir, strerror(errno));
            return false;
        }
        if (c == '\0' && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
            sb_err_set(err, errlen, "%.200s: cannot create: a file of that name is there", dir);
            return false;
        }
        dir[i] = c;
    }
    return true;
}

bool sb_work_dir(char *out, size_t outlen, const char *given, const char *what, bool *temporary,
                 char *err, size_t errlen)
{
    *temporary = given == NULL;
    if (given) {
        if (mkdir(given, 0777) != 0 && errno != EEXIST) {
            sb_err_set(err, errlen, "%s: cannot create the work directory: %s", given,
                       strerror(errno));
            return false;
        }
        if ((size_t)snprintf(out, outlen, "%s", given) >= outlen) {
            sb_err_set(err, errlen, "%s: work directory path too long", given);
            return false;
        }
        return true;
    }
    const char *tmp = sb_temp_dir();
    char pattern[1024];
    int n = snprintf(pattern, sizeof pattern, "%s/samebits.%s.XXXXXX", tmp, what);
    for (;;) {
        if (n < 0 || (size_t)n >= sizeof pattern || (size_t)n >= outlen ||
            !mkdtemp(memcpy(out, pattern, (size_t)n + 1))) {
            sb_err_set(err, errlen, "cannot create a work directory under %s: %s", tmp,
                       strerror(errno));
            return false;
        }
        /* Locked for this process's life (the descriptor is never closed), so
         * that sb_stale_remove can tell it from one a killed run left. */
        int fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0 && sb_lock_owned(fd, out))
            return true;
        if (fd >= 0)
            close(fd);
    }
}

const char *sb_temp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && tmp[0] ? tmp : "/tmp";
}

bool sb_lock_owned(int fd, const char *path)
{
    struct stat by_fd, by_path;
    return flock(fd, LOCK_EX) == 0 && fstat(fd, &by_fd) == 0 && stat(path, &by_path) == 0 &&
           by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

/* "<prefix>XXXXXX": the prefix and six characters of mkstemp's or mkdtemp's. */
static bool is_temporary_of(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 && strlen(name + n) == 6;
}

static void stale_remove(const char *dir, const char *prefix, bool (*match)(const char *))
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[1024];
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        bool ours = prefix ? is_temporary_of(e->d_name, prefix) : match(e->d_name);
        if (!ours || n < 0 || (size_t)n >= sizeof path)
            continue;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        /* a lock we can take has no live owner: its writer was killed */
        if (fd >= 0 && fstat(fd, &st) == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (S_ISDIR(st.st_mode))
                sb_dir_remove_tree(path);
            else
                unlink(path);
        }
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
}

void sb_stale_remove(const char *dir, const char *prefix)
{
    stale_remove(dir, prefix, NULL);
}

void sb_stale_remove_matching(const char *dir, bool (*match)(const char *name))
{
    stale_remove(dir, NULL, match);
}

void sb_dir_remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char path[1024];
            int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (n < 0 || (size_t)n >= sizeof path || lstat(path, &st) != 0)
                continue;
            if (S_ISDIR(st.st_mode))
                sb_dir_remove_tree(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

FILE *sb_input_open(const char *path, const char *mode, char *err, size_t errlen)
{
    int fd;
    if (sb_regular_open(path, &fd, err, errlen) != SB_OK)
        return NULL;
    FILE *f = fdopen(fd, mode);
    if (f == NULL) {
        sb_err_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}
