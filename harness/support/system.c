/* This executable's path and work directories, for the commands that spawn
 * children and keep their files. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && tmp[0] ? tmp : "/tmp";
    int n = snprintf(out, outlen, "%s/samebits.%s.XXXXXX", tmp, what);
    if (n < 0 || (size_t)n >= outlen || !mkdtemp(out)) {
        sb_err_set(err, errlen, "cannot create a work directory under %s: %s", tmp,
                   strerror(errno));
        return false;
    }
    return true;
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
