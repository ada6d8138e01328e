/* Re-runs of one configuration that dump the probe of a divergence, for the
 * locator (against the golden) and the run-to-run check (between repeats):
 * their paths, spawning them, checking that they reproduce a hash, and
 * diffing two of them element by element. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge/judge.h"
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
                         const char *probe, char *err, size_t errlen)
{
    r->threads = threads;
    bool ok = path_fits(snprintf(r->dir, sizeof r->dir, "%s/%d%s", work_dir, threads, suffix),
                        sizeof r->dir)
              && path_fits(snprintf(r->trace, sizeof r->trace, "%s/run.trace", r->dir),
                           sizeof r->trace)
              && path_fits(snprintf(r->dump, sizeof r->dump, "%s/%s.npy", r->dir, probe),
                           sizeof r->dump)
              && path_fits(snprintf(r->bound, sizeof r->bound, "%s/%s.bound.npy", r->dir, probe),
                           sizeof r->bound)
              && path_fits(snprintf(r->log, sizeof r->log, "%s/stderr.log", r->dir),
                           sizeof r->log);
    if (!ok) {
        sb_err_set(err, errlen, "%s: work directory path too long", work_dir);
        return SB_ERR_USAGE;
    }
    sb_status st = dir_make(work_dir, err, errlen);
    return st == SB_OK ? dir_make(r->dir, err, errlen) : st;
}

/* Runs one child; stale dumps of an earlier locate are removed first so
 * that a child which fails to write them cannot pass for one that did (the
 * child's stale trace goes the same way in sb_child_spawn). */
static sb_status rerun_spawn(const sb_rerun *r, const sb_case *c, const char *self_exe,
                             const sb_divergence *d, char *err, size_t errlen)
{
    unlink(r->dump);
    unlink(r->bound);
    /* the child's complaints are kept beside its dumps */
    sb_child_run run = {.self_exe = self_exe, .c = c, .threads = r->threads,
                        .timeout_seconds = c->timeout_seconds, .trace_path = r->trace,
                        .stderr_path = r->log, .dump_probe = d->probe, .dump_step = d->step,
                        .dump_dir = r->dir};
    sb_child_result res;
    char how[320];
    sb_status st = sb_child_spawn(&run, &res, how, sizeof how);
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
                        const sb_divergence *d, sb_trace *t, const sb_record **rec,
                        char *err, size_t errlen)
{
    sb_trace_init(t);
    sb_status st = rerun_spawn(r, c, self_exe, d, err, errlen);
    if (st == SB_OK)
        st = sb_trace_read(t, r->trace, err, errlen);
    if (st != SB_OK)
        return st;
    /* the re-run's record at the divergence must tap the same probe */
    if (d->index < t->n_records) {
        const sb_record *x = &t->records[d->index];
        if (x->step == d->step && strcmp(x->name, d->probe) == 0) {
            *rec = x;
            return SB_OK;
        }
    }
    sb_err_set(err, errlen, "%s: record %zu is not step %" PRId64 " %s", r->trace, d->index,
               d->step, d->probe);
    return SB_ERR_INPUT;
}

sb_status sb_rerun_reproduce(const sb_rerun *r, const sb_case *c, const char *self_exe,
                             const sb_divergence *d, const sb_hash *want, int *tries,
                             bool *reproduced, char *err, size_t errlen)
{
    sb_status st = SB_OK;
    *reproduced = false;
    for (*tries = 0; st == SB_OK && !*reproduced && *tries < SB_LOCATE_TRIES;) {
        sb_trace t;
        const sb_record *rec = NULL;
        st = sb_rerun_once(r, c, self_exe, d, &t, &rec, err, errlen);
        ++*tries;
        *reproduced = st == SB_OK && sb_hash_equal(&rec->hash, want);
        sb_trace_free(&t);
    }
    return st;
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

/* The bound comes from a's side (computed from its inputs, which are the
 * same bits as b's when the inputs are identical); without a's bound file
 * the diff is unbounded. */
sb_status sb_rerun_dumps_diff(const sb_rerun *ra, const sb_rerun *rb, sb_elem_diff *e,
                              char *err, size_t errlen)
{
    sb_tensor a = {0}, b = {0}, bound = {0};
    sb_status st = sb_npy_read(ra->dump, &a, err, errlen);
    if (st == SB_OK)
        st = sb_npy_read(rb->dump, &b, err, errlen);
    if (st == SB_OK && !same_shape(&a, &b)) {
        sb_err_set(err, errlen, "%s: dtype or shape differs from %s", rb->dump, ra->dump);
        st = SB_ERR_SHAPE;
    }
    bool have_bound = st == SB_OK && a.dtype == SB_DTYPE_F32 && access(ra->bound, F_OK) == 0;
    if (have_bound) {
        st = sb_npy_read(ra->bound, &bound, err, errlen);
        if (st == SB_OK && (bound.dtype != SB_DTYPE_F32
                            || sb_tensor_count(&bound) != sb_tensor_count(&a))) {
            sb_err_set(err, errlen, "%s: bound is not f32 with %zu elements", ra->bound,
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
            sb_elem_diff_i32(e, a.data, b.data, n);
    }
    free(a.data);
    free(b.data);
    free(bound.data);
    return st;
}
