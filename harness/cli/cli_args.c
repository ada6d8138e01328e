/* Helpers shared by the subcommands: options, numbers, thread lists, paths,
 * and the start and end of the commands that sweep a list of cases. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "samebits: option %s needs a value\n", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_unknown_option(const char *cmd, const char *arg)
{
    fprintf(stderr, "samebits %s: unknown option '%s' (see samebits %s --help)\n", cmd, arg,
            cmd);
    return SB_EXIT_INPUT;
}

bool cli_parse_int(const char *s, long lo, long hi, long *v, const char *what)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) {
        fprintf(stderr, "samebits: %s '%s' is not an integer in %ld..%ld\n", what, s, lo, hi);
        return false;
    }
    *v = x;
    return true;
}

bool cli_parse_seconds(const char *s, double *v, const char *what)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x) || x <= 0) {
        fprintf(stderr, "samebits: %s '%s' is not a positive number of seconds\n", what, s);
        return false;
    }
    *v = x;
    return true;
}

bool cli_parse_max_steps(const char *s, int64_t *v)
{
    long x;
    if (!cli_parse_int(s, 1, INT32_MAX, &x, "--max-steps"))
        return false;
    *v = x;
    return true;
}

/* One item of a thread list: "N", "A-B" or "A..B" (the case files' form). */
static bool thread_item(const char *item, int *threads, int *n, const char *what)
{
    char lo_s[24], hi_s[24];
    const char *dots = strstr(item, "..");
    const char *sep = dots ? dots : strchr(item, '-');
    const char *hi_at = dots ? dots + 2 : sep ? sep + 1 : NULL;
    size_t len = sep ? (size_t)(sep - item) : strlen(item);
    if (len == 0 || len >= sizeof lo_s || (hi_at && strlen(hi_at) >= sizeof hi_s)) {
        fprintf(stderr, "samebits: %s: '%s' is not N, A-B or A..B\n", what, item);
        return false;
    }
    memcpy(lo_s, item, len);
    lo_s[len] = '\0';
    snprintf(hi_s, sizeof hi_s, "%s", hi_at ? hi_at : lo_s);
    long lo, hi;
    if (!cli_parse_int(lo_s, 1, SB_MAX_THREADS, &lo, what) ||
        !cli_parse_int(hi_s, lo, SB_MAX_THREADS, &hi, what))
        return false;
    for (long t = lo; t <= hi; t++) {
        if (*n >= SB_MAX_THREADS) {
            fprintf(stderr, "samebits: %s: more than %d thread counts\n", what, SB_MAX_THREADS);
            return false;
        }
        threads[(*n)++] = (int)t;
    }
    return true;
}

bool cli_parse_threads(const char *s, int *threads, int *n, const char *what)
{
    *n = 0;
    char item[64];
    while (*s) {
        size_t len = strcspn(s, ",");
        if (len >= sizeof item) {
            fprintf(stderr, "samebits: %s: item too long in '%s'\n", what, s);
            return false;
        }
        memcpy(item, s, len);
        item[len] = '\0';
        if (!thread_item(item, threads, n, what))
            return false;
        s += len;
        if (*s == ',')
            s++;
    }
    if (*n == 0) {
        fprintf(stderr, "samebits: %s: empty thread list\n", what);
        return false;
    }
    return true;
}

bool cli_self_exe(char *out, size_t outlen)
{
    ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
    if (n <= 0 || (size_t)n >= outlen - 1) {
        fprintf(stderr, "samebits: cannot find this executable via /proc/self/exe\n");
        return false;
    }
    out[n] = '\0';
    return true;
}

const char *cli_data_dir(const char *option)
{
    if (option) {
        setenv("SAMEBITS_DATA_DIR", option, 1);
        return option;
    }
    const char *env = getenv("SAMEBITS_DATA_DIR");
    return env && env[0] ? env : NULL;
}

bool cli_temp_dir(char *out, size_t outlen, const char *what)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(out, outlen, "%s/samebits.%s.XXXXXX", tmp && tmp[0] ? tmp : "/tmp", what);
    if (n < 0 || (size_t)n >= outlen || !mkdtemp(out)) {
        fprintf(stderr, "samebits: cannot create a work directory under %s: %s\n",
                tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
        return false;
    }
    return true;
}

bool cli_dir_remove_if_empty(const char *dir)
{
    return rmdir(dir) == 0;
}

void cli_dir_remove_tree(const char *dir)
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
                cli_dir_remove_tree(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

bool cli_case_load(sb_case *c, const char *path)
{
    char err[512];
    if (sb_case_load(c, path, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    return true;
}

bool cli_case_sweep(sb_case_result *r, const sb_case *c, const sb_sweep_options *o)
{
    sb_trace golden;
    sb_trace_init(&golden);
    char err[768];
    if (sb_golden_read(&golden, c->golden_path, c->digest, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    sb_status st = sb_sweep_case(c, &golden, o, r, err, sizeof err);
    sb_trace_free(&golden);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err);
        sb_case_result_free(r);
        return false;
    }
    return true;
}

static bool work_dir_open(cli_batch *b)
{
    b->temporary = !b->work_dir;
    if (b->temporary)
        return cli_temp_dir(b->work, sizeof b->work, b->cmd);
    if (mkdir(b->work_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: cannot create the work directory: %s\n", b->work_dir,
                strerror(errno));
        return false;
    }
    snprintf(b->work, sizeof b->work, "%s", b->work_dir);
    return true;
}

bool cli_batch_open(cli_batch *b, const char *cmd, int (*parse)(void *, int, char **),
                    void *args, int argc, char **argv, int *rc)
{
    b->cmd = cmd;
    b->paths = calloc((size_t)argc, sizeof *b->paths);
    if (!b->paths) {
        *rc = SB_EXIT_INPUT;
        return false;
    }
    *rc = parse(args, argc, argv);
    if (*rc != SB_EXIT_OK) {
        free(b->paths);
        *rc = *rc < 0 ? SB_EXIT_OK : *rc;
        return false;
    }
    if (!cli_self_exe(b->self, sizeof b->self) || !work_dir_open(b)) {
        free(b->paths);
        *rc = SB_EXIT_INPUT;
        return false;
    }
    cli_data_dir(b->data_dir);
    b->cases = calloc((size_t)b->n_paths, sizeof *b->cases);
    b->results = calloc((size_t)b->n_paths, sizeof *b->results);
    b->n_done = 0;
    return true;
}

void cli_batch_close(cli_batch *b, int rc, const char *what)
{
    if (b->temporary && rc == SB_EXIT_OK)
        cli_dir_remove_tree(b->work);
    else if (rc != SB_EXIT_OK && !cli_dir_remove_if_empty(b->work))
        fprintf(stderr, "samebits %s: %s are in %s\n", b->cmd, what, b->work);
    for (int i = 0; i < b->n_done; i++)
        sb_case_result_free(&b->results[i]);
    free(b->results);
    free(b->cases);
    free(b->paths);
}
