/* The trace stream: every record written the moment it is made, one line
 * per write(2) and no buffer of ours in between, so whatever the process
 * had made is in the file when it is killed, aborts or hangs. No fsync: the
 * stream is for the parent on the same machine, and the page cache outlives
 * the process; only a machine crash could lose it. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "support/support.h"
#include "trace_stream.h"

sb_status sb_trace_stream_open(sb_trace_stream *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->line = malloc(SB_TRACE_STREAM_LINE);
    if (!s->line) {
        s->fd = -1;
        return SB_ERR_NOMEM;
    }
    s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        sb_err_set(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        sb_trace_stream_close(s);
        return SB_ERR_IO;
    }
    char magic[64];
    int n = snprintf(magic, sizeof magic, "%s %d\n", SB_TRACE_STREAM_MAGIC,
                     SB_TRACE_FORMAT_VERSION);
    if (write(s->fd, magic, (size_t)n) != n) {
        sb_err_set(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        sb_trace_stream_close(s);
        return SB_ERR_IO;
    }
    return SB_OK;
}

/* The line f formatted into s->line, in one write; a line too long for the
 * buffer, or a short write, is an error. */
static sb_status line_write(sb_trace_stream *s, FILE *f)
{
    long len = ftell(f);
    bool failed = ferror(f) != 0 || len <= 0 || len >= SB_TRACE_STREAM_LINE;
    if (fclose(f) != 0 || failed)
        return SB_ERR_USAGE;
    size_t n = (size_t)len;
    ssize_t w;
    do
        w = write(s->fd, s->line, n);
    while (w < 0 && errno == EINTR);
    return w == (ssize_t)n ? SB_OK : SB_ERR_IO;
}

sb_status sb_trace_stream_start(sb_trace_stream *s, int64_t step, const char *probe,
                                const char *op)
{
    FILE *f = fmemopen(s->line, SB_TRACE_STREAM_LINE, "w");
    if (!f)
        return SB_ERR_NOMEM;
    fprintf(f, "start %lld %s %s\n", (long long)step, probe, op);
    return line_write(s, f);
}

sb_status sb_trace_stream_record(sb_trace_stream *s, const sb_record *r)
{
    FILE *f = fmemopen(s->line, SB_TRACE_STREAM_LINE, "w");
    if (!f)
        return SB_ERR_NOMEM;
    sb_trace_write_record(f, r);
    return line_write(s, f);
}

void sb_trace_stream_close(sb_trace_stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->line);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
