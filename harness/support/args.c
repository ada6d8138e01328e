/* Command-line arguments from an option table, and the values options
 * take: integers in a range, seconds, step limits. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* The option of the table that argv[i] names ("--name" or "--name=..."), or
 * NULL. */
static const sb_option *option_find(const sb_option *options, const char *arg)
{
    for (const sb_option *o = options; o && o->name; o++) {
        size_t n = strlen(o->name);
        if (strncmp(arg, o->name, n) == 0 && (arg[n] == '\0' || (arg[n] == '=' && o->value)))
            return o;
    }
    return NULL;
}

sb_args_status sb_args_parse(sb_args *a, int argc, char **argv, int first, char *err,
                             size_t errlen)
{
    a->n_positional = 0;
    a->bad = NULL;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        const sb_option *o = arg[0] == '-' && arg[1] != '\0' ? option_find(a->options, arg)
                                                              : NULL;
        if (o && o->flag) {
            *o->flag = true;
        } else if (o) {
            size_t n = strlen(o->name);
            if (arg[n] == '=') {
                *o->value = arg + n + 1;
            } else if (i + 1 < argc) {
                *o->value = argv[++i];
            } else {
                a->bad = arg;
                sb_err_set(err, errlen, "option %s needs a value", arg);
                return SB_ARGS_NO_VALUE;
            }
        } else if (arg[0] == '-' && arg[1] != '\0') {
            a->bad = arg;
            sb_err_set(err, errlen, "unknown option '%s'", arg);
            return SB_ARGS_UNKNOWN;
        } else if (a->n_positional < a->max_positional) {
            a->positional[a->n_positional++] = arg;
        } else {
            a->bad = arg;
            sb_err_set(err, errlen, "unexpected argument '%s'", arg);
            return SB_ARGS_EXTRA;
        }
    }
    return SB_ARGS_OK;
}

bool sb_int_parse(const char *s, int64_t lo, int64_t hi, int64_t *v, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) {
        sb_err_set(err, errlen, "'%s' is not an integer in %lld..%lld", s, (long long)lo,
                   (long long)hi);
        return false;
    }
    *v = x;
    return true;
}

bool sb_seconds_parse(const char *s, double *v, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x) || x <= 0) {
        sb_err_set(err, errlen, "'%s' is not a positive number of seconds", s);
        return false;
    }
    *v = x;
    return true;
}

bool sb_max_steps_parse(const char *s, int64_t *v, char *err, size_t errlen)
{
    return sb_int_parse(s, 1, INT32_MAX, v, err, errlen);
}
