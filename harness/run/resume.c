/* A configuration resumed from a checkpoint: two children, one trace. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/resume.h"
#include "support/support.h"

typedef struct resume_paths {
    char checkpoint[1100], stop_trace[1100], trace[1100], stream[1100];
} resume_paths;

static bool paths_make(resume_paths *p, const sb_child_run *r)
{
    const char *stream = r->stream_path ? r->stream_path : "";
    return (size_t)snprintf(p->checkpoint, sizeof p->checkpoint, "%s.ckpt", r->trace_path) <
               sizeof p->checkpoint &&
           (size_t)snprintf(p->stop_trace, sizeof p->stop_trace, "%s.stop", r->trace_path) <
               sizeof p->stop_trace &&
           (size_t)snprintf(p->trace, sizeof p->trace, "%s.resumed", r->trace_path) <
               sizeof p->trace &&
           (size_t)snprintf(p->stream, sizeof p->stream, "%s.resumed", stream) <
               sizeof p->stream;
}

/* The last step a dumping run dumps at; -1 for a run that dumps nothing. */
static sb_status dump_last_step(const sb_child_run *r, int64_t *last, char *err, size_t errlen)
{
    *last = r->dump_probe ? r->dump_step : -1;
    if (!r->dump_list)
        return SB_OK;
    sb_dump_list l = {0};
    sb_status st = sb_dump_list_read(&l, r->dump_list, err, errlen);
    if (st == SB_OK)
        *last = sb_dump_list_last_step(&l);
    sb_dump_list_free(&l);
    return st;
}

/* The uninterrupted process: the case without its resume step. */
static sb_status spawn_whole(const sb_child_run *r, sb_child_result *cr, char *err,
                             size_t errlen)
{
    sb_case *whole = malloc(sizeof *whole);
    if (!whole)
        return SB_ERR_NOMEM;
    *whole = *r->c;
    whole->run_resume_at = 0;
    sb_child_run w = *r;
    w.c = whole;
    sb_status st = sb_child_spawn(&w, cr, err, errlen);
    free(whole);
    return st;
}

/* Appends the records and op lines of the second process's stream (all
 * but its magic line) to the first's. */
static void stream_append(const char *to, const char *from)
{
    FILE *in = fopen(from, "r");
    FILE *out = in ? fopen(to, "a") : NULL;
    if (out) {
        int ch;
        while ((ch = getc(in)) != EOF && ch != '\n')
            ;
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, out);
        fclose(out);
    }
    if (in)
        fclose(in);
}

/* The steps each process wrote: the first's below `at`, the second's from
 * `at` on (a producer that ignores its checkpoint starts again at 0). */
static sb_status steps_check(const sb_trace *first, const sb_trace *second, int64_t at,
                             char *err, size_t errlen)
{
    for (size_t i = 0; i < first->n_records; i++)
        if (first->records[i].step >= at) {
            sb_err_set(err, errlen, "the stopped process wrote records of step %lld (probe %s) "
                       "where it must stop before step %lld (K): it trains steps 0..K-1 only",
                       (long long)first->records[i].step, first->records[i].name,
                       (long long)at);
            return SB_ERR_INPUT;
        }
    for (size_t i = 0; i < second->n_records; i++)
        if (second->records[i].step < at) {
            sb_err_set(err, errlen, "the resumed process wrote records from step %lld (probe "
                       "%s) where it must start at step %lld (K): it restores the checkpoint "
                       "and trains on from it", (long long)second->records[i].step,
                       second->records[i].name, (long long)at);
            return SB_ERR_INPUT;
        }
    return SB_OK;
}

/* The first process's trace, then the second's records and metrics, into
 * `path`; the probe graph of the whole is checked as one run's (a user's
 * kernel that names inputs it never probes, external, as its runs are). */
static sb_status traces_join(const char *first, const char *second, const char *path,
                             int64_t at, bool external, char *err, size_t errlen)
{
    sb_trace a, b;
    sb_status st = sb_trace_read(&a, first, err, errlen);
    if (st != SB_OK)
        return st;
    if ((st = sb_trace_read(&b, second, err, errlen)) != SB_OK) {
        sb_trace_free(&a);
        return st;
    }
    st = steps_check(&a, &b, at, err, errlen);
    sb_record *records = NULL;
    if (st == SB_OK &&
        !(records = realloc(a.records, (a.n_records + b.n_records + 1) * sizeof *records)))
        st = SB_ERR_NOMEM;
    if (st == SB_OK) {
        /* the records move: b no longer owns them */
        a.records = records;
        memcpy(a.records + a.n_records, b.records, b.n_records * sizeof *b.records);
        a.n_records += b.n_records;
        a.cap_records = a.n_records + 1;
        b.n_records = 0;
    }
    for (int i = 0; st == SB_OK && i < b.n_metrics; i++)
        st = sb_trace_add_metrics(&a, &b.metrics[i]);
    if (st == SB_ERR_NOMEM)
        sb_err_set(err, errlen, "%s: out of memory joining the resumed run's trace", path);
    if (st == SB_OK)
        st = sb_trace_check_graph(&a, external, NULL, err, errlen);
    if (st == SB_OK)
        st = sb_trace_save(&a, path, err, errlen);
    sb_trace_free(&a);
    sb_trace_free(&b);
    return st;
}

sb_status sb_resume_spawn(const sb_child_run *r, sb_child_result *cr, char *err,
                          size_t errlen)
{
    const int64_t at = r->c->run_resume_at;
    resume_paths p;
    if (!paths_make(&p, r)) {
        sb_err_set(err, errlen, "%s: path too long", r->trace_path);
        return SB_ERR_USAGE;
    }
    int64_t last;
    sb_status st = dump_last_step(r, &last, err, errlen);
    if (st != SB_OK)
        return st;
    if (last >= 0 && last < at)
        return spawn_whole(r, cr, err, errlen);

    /* a stale trace or checkpoint must not pass for the pair's */
    unlink(r->trace_path);
    unlink(p.checkpoint);
    sb_child_run stop = *r;
    stop.checkpoint = p.checkpoint;
    stop.stop_at = at;
    stop.trace_path = p.stop_trace;
    stop.dump_probe = NULL;
    stop.dump_list = NULL;
    st = sb_child_spawn(&stop, cr, err, errlen);
    /* the harness only names the file (a producer's format is its own): it
     * must be there, not empty, for the second process to restore */
    struct stat ck;
    if (st == SB_OK && cr->end == SB_CHILD_EXITED && cr->exit_code == 0 &&
        (stat(p.checkpoint, &ck) != 0 || !S_ISREG(ck.st_mode) || ck.st_size == 0))
        cr->end = SB_CHILD_NO_CHECKPOINT;
    if (st != SB_OK || cr->end != SB_CHILD_EXITED || cr->exit_code != 0) {
        unlink(p.stop_trace);
        unlink(p.checkpoint);
        return st;
    }
    sb_child_run resume = *r;
    resume.checkpoint = p.checkpoint;
    resume.stop_at = 0;
    resume.trace_path = p.trace;
    resume.stream_path = r->stream_path ? p.stream : NULL;
    const double first_seconds = cr->seconds;
    st = sb_child_spawn(&resume, cr, err, errlen);
    cr->seconds += first_seconds;
    if (r->stream_path) {
        stream_append(r->stream_path, p.stream);
        unlink(p.stream);
    }
    if (st == SB_OK && cr->end == SB_CHILD_EXITED && cr->exit_code == 0) {
        char why[600];
        if (traces_join(p.stop_trace, p.trace, r->trace_path, at,
                        r->c->user_external_inputs, why, sizeof why) != SB_OK) {
            /* the caller names the case */
            sb_err_set(err, errlen, "the resumed run's trace: %s", why);
            st = SB_ERR_IO;
        }
    }
    unlink(p.stop_trace);
    unlink(p.trace);
    unlink(p.checkpoint);
    return st;
}

/* The first record of t at or after step `at`. */
static size_t first_from(const sb_trace *t, int64_t at)
{
    size_t i = 0;
    while (i < t->n_records && t->records[i].step < at)
        i++;
    return i;
}

void sb_resume_names_warn(const sb_case *c, const char *where, const sb_trace *golden,
                          const sb_trace *run, int64_t at, FILE *out)
{
    for (size_t g = first_from(golden, at), r = first_from(run, at);
         g < golden->n_records && r < run->n_records; g++, r++) {
        const sb_record *a = &golden->records[g], *b = &run->records[r];
        if (a->step != b->step || strcmp(a->name, b->name) != 0 || a->n_inputs != b->n_inputs)
            return;
        for (int i = 0; i < a->n_inputs; i++)
            if (strcmp(b->inputs[i], SB_TRACE_UNTRACED) == 0 &&
                strcmp(a->inputs[i], SB_TRACE_UNTRACED) != 0) {
                fprintf(out, "warning: %s: step %lld probe %s names its input %d \"%s\" where "
                        "the golden names %s: %s\n", where, (long long)b->step, b->name, i + 1,
                        SB_TRACE_UNTRACED, a->inputs[i],
                        c->user ? "call sb_probes_restored for each restored tensor, with the "
                                  "name of its last probe before the stop"
                                : "the resumed process must name its restored tensors as the "
                                  "run that never stopped does");
                return;
            }
    }
}

sb_status sb_resume_run(const sb_child_run *run, int64_t at, sb_child_result *cr, sb_trace *t,
                        char *err, size_t errlen)
{
    sb_case *c = malloc(sizeof *c);
    if (!c) {
        sb_err_set(err, errlen, "%s: out of memory", run->c->path);
        return SB_ERR_NOMEM;
    }
    *c = *run->c;
    c->run_resume_at = at;
    sb_child_run r = *run;
    r.c = c;
    sb_status st = sb_run_child(&r, cr, t, err, errlen);
    free(c);
    return st;
}
