/* The probe sink of a run (sb_run_sink, samebits.h): every probe appended
 * to the trace and the stream, and the one the locator asked for dumped, or
 * every probe of one step (--dump-all) with a manifest of their ops and
 * inputs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sb_harness.h"
#include "sb_refd.h"
#include "sb_refd_floor.h"
#include "support/support.h"
#include "trace/trace_stream.h"

/* <dump_dir>/<name><suffix> (with a dump list <dump_dir>/<step>/<name><suffix>,
 * the step's folder made here); false (and s->err) when it does not fit or
 * cannot be made. */
static bool dump_path(sb_run_sink *s, char path[1024], int64_t step, const char *name,
                      const char *suffix)
{
    int n = s->o->dump_list
        ? snprintf(path, 1024, "%s/%lld/%s%s", s->o->dump_dir, (long long)step, name, suffix)
        : snprintf(path, 1024, "%s/%s%s", s->o->dump_dir, name, suffix);
    if (n >= 0 && n < 1024 && s->o->dump_list) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%lld", s->o->dump_dir, (long long)step);
        return sb_mkdir_parents(dir, s->err, sizeof s->err);
    }
    if (n >= 0 && n < 1024)
        return true;
    sb_err_set(s->err, sizeof s->err, "%.200s: dump path too long", s->o->dump_dir);
    return false;
}

/* --dump-all starts the manifest empty, so that an earlier run's lines
 * cannot pass for this one's. */
static void manifest_create(sb_run_sink *s)
{
    char path[1024];
    if (!dump_path(s, path, 0, "manifest", ".tsv")) {
        s->status = SB_ERR_USAGE;
        return;
    }
    FILE *f = fopen(path, "w");
    if (!f || fclose(f) != 0) {
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write: %s", path, strerror(errno));
        s->status = SB_ERR_IO;
    }
}

/* The stream is opened before the first probe, so that a run that dies at
 * once still leaves a stream that says so. */
static void stream_open(sb_run_sink *s)
{
    s->stream = malloc(sizeof *s->stream);
    if (!s->stream) {
        s->status = SB_ERR_NOMEM;
        return;
    }
    s->status = sb_trace_stream_open(s->stream, s->o->stream_path, s->err, sizeof s->err);
    if (s->status != SB_OK) {
        free(s->stream);
        s->stream = NULL;
    }
}

void sb_run_sink_init(sb_run_sink *s, sb_trace *t, const sb_run_options *o)
{
    memset(s, 0, sizeof *s);
    s->trace = t;
    s->o = o;
    /* a dump goes into its folder, made here when missing */
    if (o && o->dump_dir && (o->dump_all || o->dump_probe || o->dump_list) &&
        !sb_mkdir_parents(o->dump_dir, s->err, sizeof s->err))
        s->status = SB_ERR_IO;
    if (s->status == SB_OK && o && o->dump_list) {
        s->list_left = o->dump_list->n;
        s->list_dumped = calloc((size_t)o->dump_list->n + 1, sizeof *s->list_dumped);
        if (!s->list_dumped)
            s->status = SB_ERR_NOMEM;
    }
    if (s->status == SB_OK && o && o->dump_all && o->dump_dir)
        manifest_create(s);
    if (s->status == SB_OK && o && o->stream_path)
        stream_open(s);
}

void sb_run_sink_close(sb_run_sink *s)
{
    free(s->list_dumped);
    s->list_dumped = NULL;
    if (!s->stream)
        return;
    sb_trace_stream_close(s->stream);
    free(s->stream);
    s->stream = NULL;
}

/* A stream that cannot be written fails the run: a crash it should have
 * located would otherwise pass unlocated. */
static void stream_failed(sb_run_sink *s, sb_status st)
{
    int e = errno;
    s->status = st;
    sb_err_set(s->err, sizeof s->err, "%.200s: cannot write the trace stream: %s",
               s->o->stream_path, st == SB_ERR_IO && e ? strerror(e) : sb_status_name(st));
}

void sb_run_sink_op_start(void *ctx, int64_t step, const char *probe, const char *op)
{
    sb_run_sink *s = ctx;
    if (s->status != SB_OK || !s->stream)
        return;
    sb_status st = sb_trace_stream_start(s->stream, step, probe, op);
    if (st != SB_OK)
        stream_failed(s, st);
}

/* The item of the dump list that p is and that is not written yet, or -1. */
static int list_item(const sb_run_sink *s, const sb_probe_point *p)
{
    const sb_dump_list *l = s->o ? s->o->dump_list : NULL;
    for (int i = 0; l && s->list_dumped && i < l->n; i++)
        if (!s->list_dumped[i] && l->items[i].step == p->step &&
            strcmp(l->items[i].probe, p->name) == 0)
            return i;
    return -1;
}

static bool dump_wanted(const sb_run_sink *s, const sb_probe_point *p)
{
    const sb_run_options *o = s->o;
    if (o && o->dump_list)
        return list_item(s, p) >= 0;
    if (!o || p->step != o->dump_step)
        return false;
    if (o->dump_all)
        return true;
    return o->dump_probe && !s->dumped && strcmp(p->name, o->dump_probe) == 0;
}

static sb_status dump_tensor(sb_run_sink *s, int64_t step, const char *name,
                             const char *suffix, const sb_tensor *t)
{
    char path[1024], file_suffix[40];
    snprintf(file_suffix, sizeof file_suffix, "%s.npy", suffix);
    if (!dump_path(s, path, step, name, file_suffix))
        return SB_ERR_USAGE;
    sb_status st = sb_npy_write(path, t);
    if (st != SB_OK)
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write (%s)", path, sb_status_name(st));
    return st;
}

/* One manifest line: name, op, and the input names joined by commas ("-"
 * for none), tab-separated; probe names have no tab, space or comma. */
static sb_status manifest_add(sb_run_sink *s, const sb_probe_point *p)
{
    char path[1024];
    if (!dump_path(s, path, 0, "manifest", ".tsv"))
        return SB_ERR_USAGE;
    FILE *f = fopen(path, "a");
    if (!f) {
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write: %s", path, strerror(errno));
        return SB_ERR_IO;
    }
    fprintf(f, "%s\t%s\t", p->name, p->op);
    if (p->n_inputs == 0)
        fputs("-", f);
    for (int i = 0; i < p->n_inputs; i++)
        fprintf(f, i ? ",%s" : "%s", p->inputs[i]);
    fputc('\n', f);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        sb_err_set(s->err, sizeof s->err, "%.200s: cannot write", path);
        return SB_ERR_IO;
    }
    return SB_OK;
}

/* In --dump-all a name must not repeat within the step: its files would
 * overwrite the earlier record's. The record just added is the last one. */
static bool name_repeats_in_step(const sb_run_sink *s, const sb_probe_point *p)
{
    long at = sb_trace_find_latest(s->trace, p->name, s->trace->n_records - 1);
    return at >= 0 && s->trace->records[at].step == p->step;
}

/* <probe>.bound.npy: the op's bound, zeros for an exact op. */
static sb_status dump_bound(sb_run_sink *s, const sb_probe_point *p)
{
    sb_tensor bound = *p->tensor;
    bound.dtype = SB_DTYPE_F32;
    size_t count = sb_tensor_count(&bound);
    float *b = calloc(count ? count : 1, sizeof *b);
    if (!b)
        return SB_ERR_NOMEM;
    if (p->bound)
        p->bound(b, p->bound_ctx, p->out_index);
    bound.data = b;
    sb_status st = dump_tensor(s, p->step, p->name, ".bound", &bound);
    free(b);
    return st;
}

/* <probe>.err.npy, .seqerr.npy and .floor.npy of an op of the kernel list
 * with a double-precision evaluation (sb_refd_floor.h): what the locator's
 * precision test reads. Nothing for other probes, nor for a probe whose
 * bound comes from an op call that is not its own op: a data-parallel
 * step's allreduce takes the bound of the whole batch's gradient from
 * backward buffers that hold every row only on a rank that computed them
 * all, so its call's inputs are not what the probe's inputs say. */
static sb_status dump_precision(sb_run_sink *s, const sb_probe_point *p)
{
    const sb_op_call *c = p->bound == sb_op_call_bound ? p->bound_ctx : NULL;
    if (!c || p->out_index != 0 || p->tensor->dtype != SB_DTYPE_F32 ||
        !sb_refd_supported(c->op) || strcmp(p->op, sb_op_name(c->op)) != 0 ||
        p->tensor->data != c->out[0].data)
        return SB_OK;
    sb_tensor t[3] = {*p->tensor, *p->tensor, *p->tensor};
    size_t count = sb_tensor_count(p->tensor);
    float *buf = malloc(3 * (count ? count : 1) * sizeof *buf);
    if (!buf)
        return SB_ERR_NOMEM;
    for (int i = 0; i < 3; i++)
        t[i].data = buf + (size_t)i * count;
    sb_status st = sb_refd_precision_eval(t[0].data, t[1].data, t[2].data, c,
                                          p->tensor->data) ? SB_OK : SB_ERR_NOMEM;
    static const char *const suffixes[3] = {".err", ".seqerr", ".floor"};
    for (int i = 0; st == SB_OK && i < 3; i++)
        st = dump_tensor(s, p->step, p->name, suffixes[i], &t[i]);
    free(buf);
    return st;
}

/* <probe>.npy, <probe>.bound.npy (zeros for an exact op, none when no
 * bound is known: harness/FORMATS.md), <probe>.in<i>.npy for each live
 * input, and (not in --dump-all, whose every probe would cost a double
 * evaluation and a serial run) the precision test's files. */
static sb_status dump_probe(sb_run_sink *s, const sb_probe_point *p)
{
    if (!s->o->dump_dir || strchr(p->name, '/')) {
        sb_err_set(s->err, sizeof s->err, "cannot dump probe %.200s: %s", p->name,
                   s->o->dump_dir ? "name has a '/'" : "no dump directory");
        return SB_ERR_USAGE;
    }
    sb_status st = dump_tensor(s, p->step, p->name, "", p->tensor);
    if (st == SB_OK && (p->bound || p->exact || sb_op_name_exact(p->op)))
        st = dump_bound(s, p);
    for (int i = 0; st == SB_OK && i < p->n_input_tensors; i++) {
        char suffix[24];
        snprintf(suffix, sizeof suffix, ".in%d", i);
        st = dump_tensor(s, p->step, p->name, suffix, &p->input_tensors[i]);
    }
    if (st == SB_OK && !s->o->dump_all)
        st = dump_precision(s, p);
    if (st == SB_OK && s->o->dump_all)
        st = manifest_add(s, p);
    return st;
}

void sb_run_sink_probe(void *ctx, const sb_probe_point *p)
{
    sb_run_sink *s = ctx;
    if (s->status != SB_OK)
        return;
    sb_probe_point untrusted;
    if (p->leaves && !s->trust_leaves) {
        untrusted = *p;
        untrusted.leaves = NULL;
        p = &untrusted;
    }
    if (!p->op || p->op[0] == '\0') {
        sb_err_set(s->err, sizeof s->err, "step %lld probe %.200s: no op (the op's name, or "
                   "\"source\")", (long long)p->step, p->name ? p->name : "(no name)");
        s->status = SB_ERR_INPUT;
        return;
    }
    s->status = sb_trace_add_probe(s->trace, p);
    if (s->status != SB_OK) {
        sb_err_set(s->err, sizeof s->err, "probe %.200s: cannot add to the trace (%s)",
                   p->name, sb_status_name(s->status));
        return;
    }
    if (s->stream) {
        sb_status st = sb_trace_stream_record(s->stream, &s->trace->records[s->trace->n_records - 1]);
        if (st != SB_OK) {
            stream_failed(s, st);
            return;
        }
    }
    if (!dump_wanted(s, p))
        return;
    if (s->o->dump_all && name_repeats_in_step(s, p)) {
        sb_err_set(s->err, sizeof s->err,
                   "probe %.160s appears twice at step %lld: cannot dump both", p->name,
                   (long long)p->step);
        s->status = SB_ERR_INPUT;
        return;
    }
    int item = list_item(s, p);
    s->status = dump_probe(s, p);
    if (item >= 0 && s->status == SB_OK) {
        s->list_dumped[item] = true;
        s->list_left--;
    }
    s->dumped = s->status == SB_OK && (item < 0 || s->list_left == 0);
}

sb_status sb_run_sink_finish(sb_run_sink *s, char *err, size_t errlen)
{
    const sb_dump_list *l = s->o ? s->o->dump_list : NULL;
    if (s->status == SB_OK && l && s->list_left > 0) {
        int i = 0;
        while (s->list_dumped[i])
            i++;
        sb_err_set(s->err, sizeof s->err, "probe %.160s at step %lld never happened (and %d "
                   "more of the dump list)", l->items[i].probe, (long long)l->items[i].step,
                   s->list_left - 1);
        s->status = SB_ERR_INPUT;
    }
    sb_run_sink_close(s);
    if (s->status == SB_OK && s->o && (s->o->dump_probe || s->o->dump_all) && !s->dumped) {
        char step[32];
        snprintf(step, sizeof step, "%lld", (long long)s->o->dump_step);
        if (s->o->dump_all)
            sb_err_set(s->err, sizeof s->err, "no probe at step %s", step);
        else
            sb_err_set(s->err, sizeof s->err, "probe %.160s at step %s never happened",
                       s->o->dump_probe, step);
        s->status = SB_ERR_INPUT;
    }
    /* a resumed run's inputs from before its first step are in the trace
     * of the run that wrote its checkpoint (run/resume.c checks the two) */
    bool resumed = s->o && s->o->checkpoint && s->o->stop_at == 0;
    if (s->status == SB_OK && !resumed)
        s->status = sb_trace_check_graph(s->trace, s->o && s->o->external_inputs, stderr, s->err,
                                         sizeof s->err);
    if (s->status != SB_OK)
        sb_err_set(err, errlen, "%s", s->err);
    return s->status;
}
