/* The JSON values every JSON file of samebits is made of, and writing such
 * a file: one path, through jansson, for the sweep report, the numerics
 * report and the mutation score alike (their layouts: REPORTS.md,
 * NUMERICS.md, CLI.md). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_file.h"

json_t *sb_json_string(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    char *clean = malloc(3 * n + 1);    /* a byte becomes at most U+FFFD's 3 */
    if (!clean)
        return NULL;
    size_t k = 0;
    while (*p) {
        size_t len = sb_utf8_len(p);
        if (len == 0) {
            memcpy(clean + k, "\xef\xbf\xbd", 3);
            k += 3;
            p++;
        } else {
            memcpy(clean + k, p, len);
            k += len;
            p += len;
        }
    }
    json_t *v = json_stringn(clean, k);
    free(clean);
    return v;
}

json_t *sb_json_number(double x)
{
    if (isnan(x))
        return json_string("nan");
    if (isinf(x))
        return json_string(x > 0 ? "inf" : "-inf");
    /* "%.17g" writes an integral value below 1e17 without a fraction, and
     * readers have seen such values as integers: keep them so (not -0,
     * which only a real keeps) */
    double whole;
    bool zero = fpclassify(x) == FP_ZERO;
    if (fpclassify(modf(x, &whole)) == FP_ZERO && fabs(x) < 1e17 && !(zero && signbit(x)))
        return json_integer((json_int_t)x);
    return json_real(x);
}

json_t *sb_json_append(json_t *array, json_t *value)
{
    if (array && json_array_append_new(array, value) == 0)
        return array;
    if (!array)
        json_decref(value);
    json_decref(array);
    return NULL;
}

bool sb_json_keys_add(json_t *o, json_t *more)
{
    bool ok = o && more && json_object_update(o, more) == 0;
    json_decref(more);
    return ok;
}

bool sb_json_number_read(const json_t *v, double *x)
{
    if (json_is_number(v)) {
        *x = json_number_value(v);
        return true;
    }
    const char *s = json_string_value(v);
    if (!s)
        return false;
    if (strcmp(s, "inf") == 0)
        *x = (double)INFINITY;
    else if (strcmp(s, "-inf") == 0)
        *x = -(double)INFINITY;
    else if (strcmp(s, "nan") == 0)
        *x = (double)NAN;
    else
        return false;
    return true;
}

sb_status sb_json_write(const char *path, json_t *root)
{
    if (!root)
        return SB_ERR_NOMEM;
    sb_report_file rf;
    sb_status st = sb_report_file_open(&rf, path);
    if (st == SB_OK) {
        /* keys in the order they were set; 17 significant digits, so every
         * double reads back to the same bits */
        size_t flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
        if (json_dumpf(root, rf.f, flags) == 0 && fputc('\n', rf.f) != EOF) {
            st = sb_report_file_commit(&rf);
        } else {
            sb_report_error_set(path, ferror(rf.f) ? strerror(errno) : "out of memory");
            sb_report_file_discard(&rf);
            st = SB_ERR_IO;
        }
    }
    json_decref(root);
    return st;
}
