/* A golden replaced by a new reference trace, and what that changes: the one
 * way `samebits golden` and a user's program (`PROG golden`) write goldens.
 * An unchanged golden is not rewritten, so its file (and its build line)
 * stays as it was committed. */
#include <unistd.h>

#include "samebits.h"
#include "support/support.h"

/* What the new trace changes in the golden on disk, as one line. */
static void change_describe(char *out, size_t len, const char *path, const char *digest,
                            const sb_trace *t, bool *unchanged)
{
    *unchanged = false;
    if (access(path, F_OK) != 0) {
        snprintf(out, len, "new (%zu probes)", t->n_records);
        return;
    }
    sb_trace old;
    sb_trace_init(&old);
    char err[512];
    if (sb_golden_read(&old, path, digest, err, sizeof err) != SB_OK) {
        snprintf(out, len, "changed: the old golden did not read (%s)", err);
        return;
    }
    sb_divergence d;
    sb_trace_compare(&old, t, &d);
    if (d.found)
        snprintf(out, len, "changed: first at step %lld probe %s%s", (long long)d.step,
                 d.probe, d.structural ? " (probe sequence differs)" : "");
    else if (old.n_records != t->n_records)
        snprintf(out, len, "changed: %zu probes, were %zu", t->n_records, old.n_records);
    else {
        snprintf(out, len, "unchanged (%zu probes)", t->n_records);
        *unchanged = true;
    }
    sb_trace_free(&old);
}

sb_status sb_golden_update(const sb_trace *t, const char *path, const char *expect_digest,
                           char *said, size_t saidlen, char *err, size_t errlen)
{
    bool unchanged;
    change_describe(said, saidlen, path, expect_digest, t, &unchanged);
    return unchanged ? SB_OK : sb_golden_write(t, path, err, errlen);
}
