/* The optional [numerics] section of a case file: which numerics variant
 * replaces a det kernel, the value ranges of a kernel case's inputs, and the
 * finding the case expects (syntax in NUMERICS.md). sb_case_load has already
 * checked the file's INI syntax and leaves this section to us. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "numerics.h"
#include "support/support.h"

typedef struct reader {
    const char *path;
    char *err;
    size_t errlen;
} reader;

/* "path:line: expected ..." */
#define fail(rd, line, ...) \
    sb_err_expected((rd)->err, (rd)->errlen, (rd)->path, sb_at_line((size_t)(line)), __VA_ARGS__)

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static bool parse_float(const char *s, float *v)
{
    char *end;
    errno = 0;
    *v = strtof(s, &end);
    return end != s && *end == '\0' && errno == 0 && isfinite(*v);
}

/* "LO..HI" with finite LO <= HI */
static bool parse_range(char *s, float *lo, float *hi)
{
    char *dots = strstr(s, "..");
    if (!dots)
        return false;
    *dots = '\0';
    return parse_float(trim(s), lo) && parse_float(trim(dots + 2), hi) && *lo <= *hi;
}

static sb_status entry(sb_numerics_case *nc, const sb_case *c, const reader *rd, int line,
                       const char *key, char *value)
{
    const int max_inputs = SB_OP_MAX_IN + SB_OP_MAX_OUT;
    if (strcmp(key, "mutant") == 0) {
        const int m = sb_mutant_find(value);
        if (m < 0 || sb_mutant_kind_of(m) != SB_MUTANT_NUMERICS)
            return fail(rd, line, "a numerics mutant (see NUMERICS.md), found '%s'", value);
        if (c->kind == SB_CASE_KERNEL && c->call.op != sb_mutant_op(m))
            return fail(rd, line, "a mutant of op %s (%s replaces %s)", sb_op_name(c->call.op),
                        value, sb_op_name(sb_mutant_op(m)));
        snprintf(nc->mutant, sizeof nc->mutant, "%s", value);
    } else if (strcmp(key, "inputs") == 0 || strncmp(key, "input.", 6) == 0) {
        if (c->kind != SB_CASE_KERNEL)
            return fail(rd, line, "input ranges only in a kind = kernel case");
        float lo, hi;
        if (!parse_range(value, &lo, &hi))
            return fail(rd, line, "a value range LO..HI of finite numbers, LO <= HI");
        int first = 0, last = max_inputs - 1;
        if (key[5] == '.') {
            char *end;
            long i = strtol(key + 6, &end, 10);
            if (*end != '\0' || end == key + 6 || i < 0 || i >= max_inputs)
                return fail(rd, line, "input.<i> with i in [0, %d)", max_inputs);
            first = last = (int)i;
        }
        for (int i = first; i <= last; i++) {
            nc->have_range[i] = true;
            nc->lo[i] = lo;
            nc->hi[i] = hi;
        }
    } else if (strcmp(key, "expect") == 0) {
        int f = 0;
        while (f < SB_FINDING_COUNT && strcmp(value, sb_numerics_finding_name((sb_numerics_finding)f)) != 0)
            f++;
        if (f == SB_FINDING_COUNT)
            return fail(rd, line, "expect = clean, beyond-bound or non-finite");
        nc->expect = (sb_numerics_finding)f;
    } else if (strcmp(key, "expect_probe") == 0) {
        if (strlen(value) == 0 || strlen(value) >= sizeof nc->expect_probe)
            return fail(rd, line, "a probe name of 1..%zu bytes", sizeof nc->expect_probe - 1);
        snprintf(nc->expect_probe, sizeof nc->expect_probe, "%s", value);
    } else {
        return fail(rd, line, "a [numerics] key (mutant, inputs, input.<i>, expect, "
                              "expect_probe), found '%s'", key);
    }
    return SB_OK;
}

sb_status sb_numerics_case_load(sb_numerics_case *nc, const sb_case *c, char *err, size_t errlen)
{
    memset(nc, 0, sizeof *nc);
    nc->expect = SB_FINDING_CLEAN;
    reader rd = {c->path, err, errlen};
    FILE *f = fopen(c->path, "r");
    if (!f) {
        sb_err_set(err, errlen, "%s: cannot open: %s", c->path, strerror(errno));
        return SB_ERR_IO;
    }
    char buf[512];
    bool in_section = false;
    sb_status st = SB_OK;
    for (int line = 1; st == SB_OK && fgets(buf, sizeof buf, f); line++) {
        char *s = trim(buf);
        if (*s == '[') {
            in_section = strncmp(s, "[numerics]", 10) == 0;
            continue;
        }
        if (!in_section || *s == '\0' || *s == ';' || *s == '#')
            continue;
        char *comment = strstr(s, " ;");
        if (comment)
            *comment = '\0';
        char *eq = strchr(s, '=');
        if (!eq) {
            st = fail(&rd, line, "key = value");
            break;
        }
        *eq = '\0';
        st = entry(nc, c, &rd, line, trim(s), trim(eq + 1));
    }
    fclose(f);
    return st;
}
