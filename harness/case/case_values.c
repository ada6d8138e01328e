/* Case files: looking entries up, the one error of a load, and the parsers
 * of values (integers, reals, booleans, ranges, verdict sets). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "case/case_loader.h"
#include "support/support.h"

/* The first error wins: later ones keep its message. */
__attribute__((format(printf, 3, 4)))
sb_status sb_case_fail(case_loader *ld, int line, const char *fmt, ...)
{
    if (ld->status != SB_OK)
        return ld->status;
    va_list ap;
    va_start(ap, fmt);
    ld->status =
        sb_err_vexpected(ld->err, ld->errlen, ld->path, sb_at_line((size_t)line), fmt, ap);
    va_end(ap);
    return ld->status;
}

const case_entry *sb_case_find(const case_loader *ld, const char *section, const char *key)
{
    for (int i = 0; i < ld->n_entries; i++)
        if (strcmp(ld->entries[i].section, section) == 0 && strcmp(ld->entries[i].key, key) == 0)
            return &ld->entries[i];
    return NULL;
}

int sb_case_section_line(const case_loader *ld, const char *section)
{
    for (int i = 0; i < ld->n_sections; i++)
        if (strcmp(ld->sections[i].name, section) == 0)
            return ld->sections[i].line;
    return 0;
}

sb_status sb_case_get_i64(case_loader *ld, const case_entry *e, int64_t lo, int64_t hi, int64_t *out)
{
    if (!sb_int_parse(e->value, lo, hi, out, NULL, 0))
        return sb_case_fail(ld, e->line, "%s as an integer in [%lld, %lld], found \"%s\"", e->key,
                    (long long)lo, (long long)hi, e->value);
    return SB_OK;
}

sb_status sb_case_get_u64(case_loader *ld, const case_entry *e, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(e->value, &end, 10);
    /* strtoull accepts a sign and wraps "-1" around; a seed is digits only. */
    if (e->value[0] < '0' || e->value[0] > '9' || *end != '\0' || errno != 0)
        return sb_case_fail(ld, e->line, "%s as an integer in [0, 2^64), found \"%s\"", e->key, e->value);
    *out = v;
    return SB_OK;
}

sb_status sb_case_get_real(case_loader *ld, const case_entry *e, double lo, double hi, bool hi_open,
                          float *out)
{
    char *end;
    errno = 0;
    double v = strtod(e->value, &end);
    bool ok = end != e->value && *end == '\0' && errno == 0 && isfinite(v) && v >= lo &&
              (hi_open ? v < hi : v <= hi) && fabs(v) <= (double)FLT_MAX;
    if (!ok)
        return sb_case_fail(ld, e->line, "%s as a finite number in [%g, %g%c, found \"%s\"", e->key, lo,
                    hi, hi_open ? ')' : ']', e->value);
    *out = (float)v;
    return SB_OK;
}

sb_status sb_case_get_bool(case_loader *ld, const case_entry *e, bool *out)
{
    if (strcmp(e->value, "true") == 0)
        *out = true;
    else if (strcmp(e->value, "false") == 0)
        *out = false;
    else
        return sb_case_fail(ld, e->line, "%s as true or false, found \"%s\"", e->key, e->value);
    return SB_OK;
}

/* "a..b": half-open, 0 <= a < b. */
sb_status sb_case_get_range(case_loader *ld, const case_entry *e, int64_t *begin, int64_t *end)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", e->value);
    char *dots = strstr(buf, "..");
    if (dots != NULL) {
        *dots = '\0';
        if (sb_int_parse(buf, 0, INT64_MAX, begin, NULL, 0) &&
            sb_int_parse(dots + 2, 0, INT64_MAX, end, NULL, 0)) {
            if (*begin < *end)
                return SB_OK;
            return sb_case_fail(ld, e->line, "%s as begin..end with begin < end, found \"%s\"", e->key,
                        e->value);
        }
    }
    return sb_case_fail(ld, e->line, "%s as a sample range begin..end (integers >= 0), found \"%s\"",
                e->key, e->value);
}

/* One verdict or a set of them joined by '|': "identical|reordering". */
sb_status sb_case_get_verdicts(case_loader *ld, const case_entry *e, sb_verdict_set *s)
{
    *s = sb_verdict_set_from_name(e->value);
    if (*s == 0)
        return sb_case_fail(ld, e->line, "%s as identical, reordering, unbounded, beyond-bound, "
                            "crash, timeout or nondeterministic, or several joined by '|', "
                            "found \"%s\"", e->key, e->value);
    return SB_OK;
}

const char *const sb_case_expect_per_count[] = {"expect", NULL};

bool sb_case_in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

/* True when key is one of the per-count keys "<prefix>.<N>" of prefixes
 * ("expect", ...); N is read where the section reads it. */
static bool per_count_key(const char *const *prefixes, const char *key)
{
    for (; *prefixes; prefixes++) {
        size_t n = strlen(*prefixes);
        if (strncmp(key, *prefixes, n) == 0 && key[n] == '.')
            return true;
    }
    return false;
}

/* Fails at the first key of [section] that is neither in keys nor a
 * per-count key of prefixes; `names` lists them all for the message. */
sb_status sb_case_keys_check(case_loader *ld, const char *section, const char *const *keys,
                                    const char *const *prefixes, const char *names)
{
    for (int i = 0; i < ld->n_entries; i++) {
        const case_entry *e = &ld->entries[i];
        if (strcmp(e->section, section) == 0 && !sb_case_in_list(keys, e->key) &&
            !per_count_key(prefixes, e->key))
            return sb_case_fail(ld, e->line, "a key of [%s] (%s), found \"%s\"", section, names,
                        e->key);
    }
    return SB_OK;
}

sb_status sb_case_per_count_once(case_loader *ld, const char *section, const char *prefix)
{
    size_t n = strlen(prefix);
    for (int i = 0; i < ld->n_entries; i++) {
        const case_entry *e = &ld->entries[i];
        int64_t count, other;
        if (strcmp(e->section, section) != 0 || strncmp(e->key, prefix, n) != 0 ||
            e->key[n] != '.' || !sb_int_parse(e->key + n + 1, 0, INT64_MAX, &count, NULL, 0))
            continue;
        for (int j = 0; j < i; j++) {
            const case_entry *d = &ld->entries[j];
            if (strcmp(d->section, section) == 0 && strncmp(d->key, prefix, n) == 0 &&
                d->key[n] == '.' && sb_int_parse(d->key + n + 1, 0, INT64_MAX, &other, NULL, 0) &&
                other == count)
                return sb_case_fail(ld, e->line, "one %s.<N> key per count, found \"%s\" "
                                                 "(count %lld, as \"%s\" on line %d)",
                                    prefix, e->key, (long long)count, d->key, d->line);
        }
    }
    return SB_OK;
}
