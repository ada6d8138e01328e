/* Re-runs of one configuration that dump the probes of divergences (all of
 * a run's in one re-run), for the locator (against the golden) and the
 * run-to-run check (between repeats): their paths, spawning them, checking
 * what they reproduce, and diffing two of them element by element. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge/judge.h"
#include "judge/precision.h"
#include "run/child.h"
#include "support/support.h"

static bool path_fits(int n, size_t size)
{
    return n >= 0 && (size_t)n < size;
}

/* Makes path and any missing parent (a locate's directory sits inside the
 * run's, which the first locate of the run makes). */
static sb_status dir_make(const char *path, char *err, size_t errlen)
{
    char parent[1024];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n > 0 && n < sizeof parent) {
        memcpy(parent, path, n);
        parent[n] = '\0';
        struct stat st;
        if (stat(parent, &st) != 0 && dir_make(parent, err, errlen) != SB_OK)
            return SB_ERR_IO;
    }
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return SB_OK;
    sb_err_set(err, errlen, "%s: cannot create directory: %s", path, strerror(errno));
    return SB_ERR_IO;
}

sb_status sb_rerun_paths(sb_rerun *r, const char *work_dir, int threads, const char *suffix,
                         char *err, size_t errlen)
{
    r->threads = threads;
    bool ok = path_fits(snprintf(r->dir, sizeof r->dir, "%s/%d%s", work_dir, threads, suffix),
                        sizeof r->dir)
              && path_fits(snprintf(r->trace, sizeof r->trace, "%s/run.trace", r->dir),
                           sizeof r->trace)
              && path_fits(snprintf(r->list, sizeof r->list, "%s/dump.list", r->dir),
                           sizeof r->list)
              && path_fits(snprintf(r->log, sizeof r->log, "%s/stderr.log", r->dir),
                           sizeof r->log);
    if (!ok) {
        sb_err_set(err, errlen, "%s: work directory path too long", work_dir);
        return SB_ERR_USAGE;
    }
    sb_status st = dir_make(work_dir, err, errlen);
    return st == SB_OK ? dir_make(r->dir, err, errlen) : st;
}

bool sb_rerun_dump_path(char *out, size_t len, const sb_rerun *r, const sb_divergence *d,
                        const char *suffix)
{
    return path_fits(snprintf(out, len, "%s/%lld/%s%s.npy", r->dir, (long long)d->step,
                              d->probe, suffix), len);
}

/* Runs one child dumping every divergence's probe; stale dumps of an earlier
 * locate are removed first so that a child which fails to write them cannot
 * pass for one that did (the child's stale trace goes the same way in
 * sb_child_spawn). */
static sb_status rerun_spawn(const sb_rerun *r, const sb_case *c, const char *self_exe,
                             sb_divergence *const *ds, int n, char *err, size_t errlen)
{
    sb_dump_list list = {0};
    sb_status st = SB_OK;
    static const char *const suffixes[] = {"", ".bound", ".err", ".seqerr", ".floor"};
    for (int i = 0; i < n && st == SB_OK; i++) {
        for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
            char dump[1100];
            if (sb_rerun_dump_path(dump, sizeof dump, r, ds[i], suffixes[k]))
                unlink(dump);
        }
        st = sb_dump_list_add(&list, ds[i]->step, ds[i]->probe);
    }
    if (st == SB_OK)
        st = sb_dump_list_write(&list, r->list, err, errlen);
    else
        sb_err_set(err, errlen, "%s: cannot list the probes to dump (%s)", c->path,
                   sb_status_name(st));
    sb_dump_list_free(&list);
    if (st != SB_OK)
        return st;
    /* the child's complaints are kept beside its dumps */
    sb_child_run run = {.self_exe = self_exe, .c = c, .threads = r->threads,
                        .timeout_seconds = c->timeout_seconds, .trace_path = r->trace,
                        .stderr_path = r->log, .dump_list = r->list, .dump_dir = r->dir};
    sb_child_result res;
    char how[320];
    st = sb_child_spawn(&run, &res, how, sizeof how);
    if (st != SB_OK) {
        sb_err_set(err, errlen, "%s: re-run at %d threads: %s", c->path, r->threads, how);
        return st;
    }
    if (res.end == SB_CHILD_EXITED && res.exit_code == 0)
        return SB_OK;
    sb_child_describe(how, sizeof how, &res, r->log);
    sb_err_set(err, errlen, "%s: re-run at %d threads %s (see %s)", c->path, r->threads, how,
               r->log);
    return SB_ERR_IO;
}

sb_status sb_rerun_once(const sb_rerun *r, const sb_case *c, const char *self_exe,
                        sb_divergence *const *ds, int n, sb_trace *t, char *err,
                        size_t errlen)
{
    sb_trace_init(t);
    sb_status st = rerun_spawn(r, c, self_exe, ds, n, err, errlen);
    if (st == SB_OK)
        st = sb_trace_read(t, r->trace, err, errlen);
    /* the re-run's record at each divergence must tap the same probe */
    for (int i = 0; st == SB_OK && i < n; i++) {
        const sb_divergence *d = ds[i];
        const sb_record *x = d->index < t->n_records ? &t->records[d->index] : NULL;
        if (!x || x->step != d->step || strcmp(x->name, d->probe) != 0) {
            sb_err_set(err, errlen, "%s: record %zu is not step %" PRId64 " %s", r->trace,
                       d->index, d->step, d->probe);
            st = SB_ERR_INPUT;
        }
    }
    return st;
}

bool sb_rerun_has(const sb_trace *t, const sb_divergence *d, const sb_hash *want)
{
    return d->index < t->n_records && sb_hash_equal(&t->records[d->index].hash, want);
}

static bool same_shape(const sb_tensor *a, const sb_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return false;
    return true;
}

/* The precision test of d from the two re-runs' error dumps (a: the
 * golden's side, which also gives the serial error and the floor: both
 * follow from the inputs, the same bits on both sides). Not tested when a
 * file is missing: the op has no double evaluation, or the producer is not
 * samebits' own kernels. */
static sb_status precision_read(const sb_rerun *ra, const sb_rerun *rb, const sb_divergence *d,
                                sb_elem_diff *e, char *err, size_t errlen)
{
    static const char *const suffixes[4] = {".err", ".err", ".seqerr", ".floor"};
    char path[4][1100];
    for (int i = 0; i < 4; i++)
        if (!sb_rerun_dump_path(path[i], sizeof path[i], i == 1 ? rb : ra, d, suffixes[i]) ||
            access(path[i], F_OK) != 0)
            return SB_OK;
    sb_tensor t[4] = {{0}};
    sb_status st = SB_OK;
    for (int i = 0; i < 4 && st == SB_OK; i++) {
        st = sb_npy_read(path[i], &t[i], err, errlen);
        if (st == SB_OK && (t[i].dtype != SB_DTYPE_F32 || sb_tensor_count(&t[i]) != e->total)) {
            sb_err_set(err, errlen, "%s: not f32 with %zu elements", path[i], e->total);
            st = SB_ERR_SHAPE;
        }
    }
    if (st == SB_OK)
        sb_elem_precision(e, t[0].data, t[1].data, t[2].data, t[3].data, e->total);
    for (int i = 0; i < 4; i++)
        free(t[i].data);
    return st;
}

/* The bound comes from a's side (computed from its inputs, which are the
 * same bits as b's when the inputs are identical); without a's bound file
 * the diff is unbounded. */
sb_status sb_rerun_dumps_diff(const sb_rerun *ra, const sb_rerun *rb, const sb_divergence *d,
                              sb_elem_diff *e, char *err, size_t errlen)
{
    char dump_a[1100], dump_b[1100], bound_a[1100];
    if (!sb_rerun_dump_path(dump_a, sizeof dump_a, ra, d, "") ||
        !sb_rerun_dump_path(dump_b, sizeof dump_b, rb, d, "") ||
        !sb_rerun_dump_path(bound_a, sizeof bound_a, ra, d, ".bound")) {
        sb_err_set(err, errlen, "%s: dump path too long", ra->dir);
        return SB_ERR_USAGE;
    }
    sb_tensor a = {0}, b = {0}, bound = {0};
    sb_status st = sb_npy_read(dump_a, &a, err, errlen);
    if (st == SB_OK)
        st = sb_npy_read(dump_b, &b, err, errlen);
    if (st == SB_OK && !same_shape(&a, &b)) {
        sb_err_set(err, errlen, "%s: dtype or shape differs from %s", dump_b, dump_a);
        st = SB_ERR_SHAPE;
    }
    bool have_bound = st == SB_OK && a.dtype == SB_DTYPE_F32 && access(bound_a, F_OK) == 0;
    if (have_bound) {
        st = sb_npy_read(bound_a, &bound, err, errlen);
        if (st == SB_OK && (bound.dtype != SB_DTYPE_F32
                            || sb_tensor_count(&bound) != sb_tensor_count(&a))) {
            sb_err_set(err, errlen, "%s: bound is not f32 with %zu elements", bound_a,
                       sb_tensor_count(&a));
            st = SB_ERR_SHAPE;
        }
    }
    if (st == SB_OK) {
        size_t n = sb_tensor_count(&a);
        /* a missing bound file is no bound known (the verdict is then
         * unbounded); an op that declares itself exact dumps a bound of 0 */
        if (a.dtype == SB_DTYPE_F32)
            sb_elem_diff_f32(e, a.data, b.data, have_bound ? bound.data : NULL, n);
        else
            sb_elem_diff_ints(e, &a, &b);
        if (a.dtype == SB_DTYPE_F32 && have_bound)
            st = precision_read(ra, rb, d, e, err, errlen);
    }
    free(a.data);
    free(b.data);
    free(bound.data);
    return st;
}
