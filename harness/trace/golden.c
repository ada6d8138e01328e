/* Golden files: traces written through sb_out_file (support.h: a
 * temporary beside the golden, synced and renamed over it, a symbolic link
 * followed to its target) and read back with checks. Until the rename the
 * old golden is never opened for writing, and on every error the
 * temporary is removed; a killed writer's temporary is removed by the next
 * write in that directory. */
#include <errno.h>
#include <string.h>

#include "sb_harness.h"
#include "support/support.h"

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

sb_status sb_golden_write(const sb_trace *t, const char *path, char *err, size_t errlen)
{
    return sb_trace_save(t, path, err, errlen);
}

sb_status sb_trace_save(const sb_trace *t, const char *path, char *err, size_t errlen)
{
    sb_out_file o;
    sb_status st = sb_out_open(&o, path, err, errlen);
    if (st != SB_OK)
        return st;
    errno = 0;
    st = sb_trace_write(t, o.f);
    if (st == SB_ERR_USAGE) {
        sb_out_discard(&o);
        sb_err_set(err, errlen, "%s: the trace header is incomplete (case, digest, version, "
                   "family, threads, build)", path);
        return st;
    }
    /* a write error stays on o.f: the commit reports it, old golden kept */
    return sb_out_commit(&o, err, errlen);
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
