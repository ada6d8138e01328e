/* A run that crashed or timed out: where it died, read from the trace it
 * streamed as it went, the first line it wrote to stderr, and the first
 * divergence among the records it made before. */
#include <string.h>

#include "run/child.h"
#include "sb_harness.h"

void sb_trace_compare_partial(const sb_trace *golden, const sb_trace *partial,
                              sb_divergence *d)
{
    /* a shallow view of the golden's first records: as many as the run made */
    sb_trace g = *golden;
    if (g.n_records > partial->n_records)
        g.n_records = partial->n_records;
    sb_trace_compare(&g, partial, d);
}

void sb_crash_judge(sb_run_result *x, const sb_child_result *cr, const sb_trace *golden,
                    const char *stream_path, const char *stderr_path)
{
    sb_trace partial;
    char err[256];
    memset(&x->crash, 0, sizeof x->crash);
    if (sb_trace_stream_read(&partial, &x->crash, stream_path, err, sizeof err) == SB_OK) {
        /* a truncated run is compared, like a whole one, on its own steps */
        sb_trace_compare_partial(golden, &partial, &x->div);
        sb_trace_free(&partial);
    }
    sb_child_stderr_line(x->crash.stderr_line, sizeof x->crash.stderr_line, stderr_path, true);
    sb_child_describe(x->crash.how, sizeof x->crash.how, cr, NULL);
}

void sb_crash_describe(char *out, size_t len, const sb_crash_site *s)
{
    if (!s->streamed)
        snprintf(out, len, "%s, no trace stream to say where", s->how);
    else if (s->in_op && s->after[0])
        snprintf(out, len, "%s at step %lld in op %s (%s), after probe %s", s->how,
                 (long long)s->step, s->op, s->probe, s->after);
    else if (s->in_op)
        snprintf(out, len, "%s at step %lld in op %s (%s), before any probe", s->how,
                 (long long)s->step, s->op, s->probe);
    else if (s->after[0])
        snprintf(out, len, "%s at step %lld outside any op, after probe %s", s->how,
                 (long long)s->step, s->after);
    else
        snprintf(out, len, "%s before any op or probe", s->how);
}
