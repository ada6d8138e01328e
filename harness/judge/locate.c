/* Locating a divergence: re-run the reference configuration and the
 * diverging one as children that dump the divergent probe, then diff the
 * dumped elements against the op's reordering bound. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/child.h"
#include "samebits.h"
#include "support/support.h"

/* The paths of one re-run. */
typedef struct rerun {
    int threads;
    char dir[768];
    char trace[1024];
    char dump[1024];
    char bound[1024];
    char log[1024];
} rerun;

static bool path_fits(int n, size_t size)
{
    return n >= 0 && (size_t)n < size;
}

static sb_status dir_make(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return SB_OK;
    sb_err_set(err, errlen, "%s: cannot create directory: %s", path, strerror(errno));
    return SB_ERR_IO;
}

/* <work_dir>/<threads>/ holds a re-run's trace and dumps. When the run under
 * test has the reference thread count (a repeat that diverged from
 * itself), its re-run goes to <threads>.again so the two do not collide. */
static sb_status rerun_paths(rerun *r, const char *work_dir, int threads, bool again,
                             const char *probe, char *err, size_t errlen)
{
    r->threads = threads;
    bool ok = path_fits(snprintf(r->dir, sizeof r->dir, "%s/%d%s", work_dir, threads,
                                 again ? ".again" : ""), sizeof r->dir)
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
    return dir_make(r->dir, err, errlen);
}

/* Runs one child; stale dumps of an earlier locate are removed first so
 * that a child which fails to write them cannot pass for one that did (the
 * child's stale trace goes the same way in sb_child_spawn). */
static sb_status rerun_spawn(const rerun *r, const sb_case *c, const char *self_exe,
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

/* The re-run's record at the divergence, which must tap the same probe. */
static sb_status rerun_record(const sb_trace *t, const rerun *r, const sb_divergence *d,
                              const sb_record **rec, char *err, size_t errlen)
{
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

static bool same_shape(const sb_tensor *a, const sb_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return false;
    return true;
}

/* Diffs the two dumps; the bound comes from the reference side (computed
 * from its inputs, which are the same bits when the inputs are identical). */
static sb_status dumps_diff(const rerun *ref, const rerun *run, sb_elem_diff *e, char *err,
                            size_t errlen)
{
    sb_tensor a = {0}, b = {0}, bound = {0};
    sb_status st = sb_npy_read(ref->dump, &a, err, errlen);
    if (st == SB_OK)
        st = sb_npy_read(run->dump, &b, err, errlen);
    if (st == SB_OK && !same_shape(&a, &b)) {
        sb_err_set(err, errlen, "%s: dtype or shape differs from %s", run->dump, ref->dump);
        st = SB_ERR_SHAPE;
    }
    bool have_bound = st == SB_OK && a.dtype == SB_DTYPE_F32 && access(ref->bound, F_OK) == 0;
    if (have_bound) {
        st = sb_npy_read(ref->bound, &bound, err, errlen);
        if (st == SB_OK && (bound.dtype != SB_DTYPE_F32
                            || sb_tensor_count(&bound) != sb_tensor_count(&a))) {
            sb_err_set(err, errlen, "%s: bound is not f32 with %zu elements", ref->bound,
                       sb_tensor_count(&a));
            st = SB_ERR_SHAPE;
        }
    }
    if (st == SB_OK) {
        size_t n = sb_tensor_count(&a);
        /* a missing bound file is bound 0: any change is beyond it */
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

static bool reference_fits(const sb_locate_reference *r, const sb_divergence *d)
{
    return r && r->made && r->index == d->index && r->step == d->step &&
           strcmp(r->probe, d->probe) == 0;
}

static void reference_keep(sb_locate_reference *r, const sb_divergence *d,
                           const char *work_dir)
{
    if (!r || strlen(work_dir) >= sizeof r->work_dir)
        return;
    *r = (sb_locate_reference){.made = true, .index = d->index, .step = d->step};
    snprintf(r->probe, sizeof r->probe, "%s", d->probe);
    snprintf(r->work_dir, sizeof r->work_dir, "%s", work_dir);
}

sb_status sb_locate(const sb_case *c, const char *self_exe, int threads,
                    const char *work_dir, sb_locate_reference *reference, sb_divergence *d,
                    char *err, size_t errlen)
{
    if (!d->found || d->structural) {
        sb_err_set(err, errlen, "%s: nothing to locate (%s)", c->path,
                   d->found ? "the probe sequence differs" : "no divergence");
        return SB_ERR_USAGE;
    }
    if (strlen(self_exe) >= 1024) {
        sb_err_set(err, errlen, "%s: path of the samebits executable too long", c->path);
        return SB_ERR_USAGE;
    }
    rerun ref, run;
    bool reuse = reference_fits(reference, d);
    sb_status st = dir_make(work_dir, err, errlen);
    if (st == SB_OK)
        st = rerun_paths(&ref, reuse ? reference->work_dir : work_dir, c->reference_threads,
                         false, d->probe, err, errlen);
    if (st == SB_OK)
        st = rerun_paths(&run, work_dir, threads, threads == c->reference_threads, d->probe, err,
                         errlen);
    if (st == SB_OK && !reuse) {
        st = rerun_spawn(&ref, c, self_exe, d, err, errlen);
        if (st == SB_OK)
            reference_keep(reference, d, work_dir);
    }
    if (st == SB_OK)
        st = rerun_spawn(&run, c, self_exe, d, err, errlen);
    if (st != SB_OK)
        return st;

    sb_trace ta, tb;
    sb_trace_init(&ta);
    sb_trace_init(&tb);
    const sb_record *ra = NULL, *rb = NULL;
    st = sb_trace_read(&ta, ref.trace, err, errlen);
    if (st == SB_OK)
        st = sb_trace_read(&tb, run.trace, err, errlen);
    if (st == SB_OK)
        st = rerun_record(&ta, &ref, d, &ra, err, errlen);
    if (st == SB_OK)
        st = rerun_record(&tb, &run, d, &rb, err, errlen);
    if (st == SB_OK) {
        /* the sweep saw this probe differ; if the re-runs agree, some
         * configuration does not even repeat itself: a bug either way */
        d->nondeterministic = sb_hash_equal(&ra->hash, &rb->hash);
        st = dumps_diff(&ref, &run, &d->elem, err, errlen);
        d->have_elements = st == SB_OK;
    }
    sb_trace_free(&ta);
    sb_trace_free(&tb);
    return st;
}
