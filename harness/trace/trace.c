/* Traces: building one from probe points, and its text form (FORMATS.md);
 * the reader of trace streams too, which share the records' syntax.
 *
 * The reader is strict: every line must be exactly what the writer produces,
 * and the first line that is not gives "path:line: expected ...". A trace
 * that fails to read is left empty, never half filled. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sb_harness.h"
#include "sb_build_info.h"
#include "support/support.h"
#include "trace_stream.h"

#define MAGIC "samebits-trace"

#if defined(__clang__)
#define SB_COMPILER __VERSION__
#elif defined(__GNUC__)
#define SB_COMPILER "gcc " __VERSION__
#else
#define SB_COMPILER "unknown compiler"
#endif

void sb_trace_init(sb_trace *t)
{
    memset(t, 0, sizeof *t);
    t->header.version = SB_TRACE_FORMAT_VERSION;
}

/* A record's strings and its array of inputs are one allocation, at its
 * name (append_record). */
static void record_free(sb_record *r)
{
    free(r->name);
}

void sb_trace_free(sb_trace *t)
{
    for (size_t i = 0; i < t->n_records; i++)
        record_free(&t->records[i]);
    free(t->records);
    free(t->metrics);
    sb_trace_init(t);
}

static void copy_field(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
}

void sb_trace_header_name(sb_trace_header *h, const sb_case *c)
{
    copy_field(h->case_name, sizeof h->case_name, c->name);
    copy_field(h->case_digest, sizeof h->case_digest, c->digest);
    copy_field(h->family, sizeof h->family, sb_case_family_label(c));
}

void sb_trace_header_from_case(sb_trace_header *h, const sb_case *c, int threads)
{
    memset(h, 0, sizeof *h);
    h->version = SB_TRACE_FORMAT_VERSION;
    sb_trace_header_name(h, c);
    copy_field(h->samebits_version, sizeof h->samebits_version, SB_VERSION);
    h->threads = threads;
    copy_field(h->build, sizeof h->build, SB_COMPILER " " SB_BUILD_OPTIONS);
}

/* A probe or op name: printable ASCII without space or comma (the inputs
 * field is comma-separated), and not "-" (which means "no inputs"). */
static bool name_ok(const char *s)
{
    if (s == NULL || s[0] == '\0' || strcmp(s, "-") == 0)
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == ',')
            return false;
    return true;
}

/* A record's own name: a name, and not the mark of an untraced input. */
static bool probe_name_ok(const char *s)
{
    return name_ok(s) && strcmp(s, SB_TRACE_UNTRACED) != 0;
}

/* A header token: printable ASCII without space. */
static bool token_ok(const char *s)
{
    if (s[0] == '\0')
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~')
            return false;
    return true;
}

static sb_status grow_records(sb_trace *t)
{
    if (t->n_records < t->cap_records)
        return SB_OK;
    size_t cap = t->cap_records ? 2 * t->cap_records : 64;
    sb_record *r = realloc(t->records, cap * sizeof *r);
    if (r == NULL)
        return SB_ERR_NOMEM;
    t->records = r;
    t->cap_records = cap;
    return SB_OK;
}

/* s copied to *at, which moves past it; the copy. */
static char *put_string(char **at, const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = memcpy(*at, s, n);
    *at += n;
    return copy;
}

/* Appends a record whose strings are copied; the trace is unchanged on error.
 * The copies and the array of inputs are one allocation: the name, the op,
 * the inputs' names, then the array. With an allocation for each (five for
 * a probe with three inputs), a probe whose leaves its op had hashed cost
 * the hook 3,300 instructions with its record's later free (callgrind),
 * 0.31 us (Zen 4 EPYC); with one, 1,900 and 0.21 us. The char GPT makes
 * 172 probes a step. */
static sb_status append_record(sb_trace *t, int64_t step, const char *name, const char *op,
                               sb_dtype dtype, int ndim, const int64_t *dim,
                               const sb_hash *hash, const char *const *inputs, int n_inputs)
{
    if (grow_records(t) != SB_OK)
        return SB_ERR_NOMEM;
    size_t chars = strlen(name) + 1 + strlen(op) + 1;
    for (int i = 0; i < n_inputs; i++)
        chars += strlen(inputs[i]) + 1;
    size_t array_at = (chars + _Alignof(char *) - 1) / _Alignof(char *) * _Alignof(char *);
    char *block = malloc(array_at + (size_t)n_inputs * sizeof(char *));
    if (block == NULL)
        return SB_ERR_NOMEM;
    sb_record r = {.step = step, .dtype = dtype, .ndim = ndim, .hash = *hash,
                   .n_inputs = n_inputs};
    for (int d = 0; d < ndim; d++)
        r.dim[d] = dim[d];
    char *at = block;
    r.name = put_string(&at, name);
    r.op = put_string(&at, op);
    r.inputs = n_inputs ? (char **)(void *)(block + array_at) : NULL;
    for (int i = 0; i < n_inputs; i++)
        r.inputs[i] = put_string(&at, inputs[i]);
    t->records[t->n_records++] = r;
    return SB_OK;
}

sb_status sb_trace_add_probe(sb_trace *t, const sb_probe_point *p)
{
    const sb_tensor *x = p->tensor;
    if (!probe_name_ok(p->name) || !name_ok(p->op) || p->step < 0 || x == NULL ||
        x->ndim < 0 || x->ndim > SB_MAX_DIMS || p->n_inputs < 0 ||
        (p->n_inputs > 0 && p->inputs == NULL))
        return SB_ERR_USAGE;
    for (int d = 0; d < x->ndim; d++)
        if (x->dim[d] < 0)
            return SB_ERR_USAGE;
    for (int i = 0; i < p->n_inputs; i++)
        if (!name_ok(p->inputs[i]))
            return SB_ERR_USAGE;
    sb_hash h = p->leaves ? sb_hash_tensor_leaves(x, p->leaves) : sb_hash_tensor(x);
    return append_record(t, p->step, p->name, p->op, x->dtype, x->ndim, x->dim, &h,
                         p->inputs, p->n_inputs);
}

/* (double)(float)x through a volatile: GCC 12.2 at -O2 and -O3 turns the
 * rounding of two adjacent fields of a struct copy into a plain copy of both
 * (train_loss and test_loss below were written with double precision). */
static double at_float_precision(double x)
{
    volatile float f = (float)x;
    return (double)f;
}

sb_status sb_trace_add_metrics(sb_trace *t, const sb_epoch_metrics *m)
{
    if (t->n_metrics == t->cap_metrics) {
        int cap = t->cap_metrics ? 2 * t->cap_metrics : 16;
        sb_epoch_metrics *v = realloc(t->metrics, (size_t)cap * sizeof *v);
        if (v == NULL)
            return SB_ERR_NOMEM;
        t->metrics = v;
        t->cap_metrics = cap;
    }
    /* Metrics are kept at float precision, which %.9g writes exactly, so a
     * trace read back from its text equals the trace that was written. */
    sb_epoch_metrics r = *m;
    r.train_loss = at_float_precision(r.train_loss);
    r.test_loss = at_float_precision(r.test_loss);
    r.test_accuracy = at_float_precision(r.test_accuracy);
    t->metrics[t->n_metrics++] = r;
    return SB_OK;
}

long sb_trace_find_latest(const sb_trace *t, const char *name, size_t before)
{
    size_t i = before < t->n_records ? before : t->n_records;
    while (i-- > 0)
        if (strcmp(t->records[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* ---- writing ------------------------------------------------------------- */

static void write_shape(FILE *f, int ndim, const int64_t *dim)
{
    if (ndim == 0) {
        fputs("scalar", f);
        return;
    }
    for (int d = 0; d < ndim; d++)
        fprintf(f, d ? "x%lld" : "%lld", (long long)dim[d]);
}

void sb_trace_write_record(FILE *f, const sb_record *r)
{
    char hex[33];
    sb_hash_hex(&r->hash, hex);
    fprintf(f, "%lld %s %s %s ", (long long)r->step, r->name, r->op, sb_dtype_name(r->dtype));
    write_shape(f, r->ndim, r->dim);
    fprintf(f, " %s ", hex);
    if (r->n_inputs == 0)
        fputc('-', f);
    for (int k = 0; k < r->n_inputs; k++)
        fprintf(f, k ? ",%s" : "%s", r->inputs[k]);
    fputc('\n', f);
}

sb_status sb_trace_write(const sb_trace *t, FILE *f)
{
    const sb_trace_header *h = &t->header;
    sb_hash digest;
    if (!token_ok(h->case_name) || !sb_hash_parse(&digest, h->case_digest) ||
        !token_ok(h->samebits_version) || !token_ok(h->family) || h->threads < 1 ||
        h->build[0] == '\0' || strchr(h->build, '\n') != NULL)
        return SB_ERR_USAGE;

    fprintf(f, "%s %d\n", MAGIC, SB_TRACE_FORMAT_VERSION);
    fprintf(f, "case %s\n", h->case_name);
    fprintf(f, "digest %s\n", h->case_digest);
    fprintf(f, "samebits %s\n", h->samebits_version);
    fprintf(f, "reference %s %d\n", h->family, h->threads);
    fprintf(f, "build %s\n", h->build);
    for (size_t i = 0; i < t->n_records; i++)
        sb_trace_write_record(f, &t->records[i]);
    for (int i = 0; i < t->n_metrics; i++) {
        const sb_epoch_metrics *m = &t->metrics[i];
        fprintf(f, "epoch %d steps %lld train_loss %.9g test_loss %.9g test_accuracy %.9g\n",
                m->epoch, (long long)m->steps, m->train_loss, m->test_loss, m->test_accuracy);
    }
    fprintf(f, "end %zu %d\n", t->n_records, t->n_metrics);
    return ferror(f) ? SB_ERR_IO : SB_OK;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct reader {
    FILE *f;
    const char *path;
    size_t line_no;
    char *line;
    size_t cap;
    char *err;
    size_t errlen;
} reader;

/* "path:line: expected ..." at the line being read. */
#define fail(rd, ...) \
    sb_err_expected((rd)->err, (rd)->errlen, (rd)->path, sb_at_line((rd)->line_no), __VA_ARGS__)

/* Next line without its newline. 1: a line; 0: end of file; -1: error set. */
static int next_line(reader *rd, sb_status *st)
{
    errno = 0;
    ssize_t n = getline(&rd->line, &rd->cap, rd->f);
    rd->line_no++;
    if (n < 0) {
        if (ferror(rd->f)) {
            sb_err_set(rd->err, rd->errlen, "%s:%zu: read failed: %s", rd->path, rd->line_no,
                       strerror(errno));
            *st = SB_ERR_IO;
            return -1;
        }
        return 0;
    }
    if (n == 0 || rd->line[n - 1] != '\n') {
        *st = fail(rd, "a line ending in a newline (file truncated?)");
        return -1;
    }
    rd->line[n - 1] = '\0';
    if ((size_t)(n - 1) != strlen(rd->line)) {
        *st = fail(rd, "text (the line holds a NUL byte)");
        return -1;
    }
    return 1;
}

/* Splits s in place at single spaces; false if there are more than max
 * fields or an empty one (two spaces, a leading or trailing space). */
static bool split(char *s, char **field, int max, int *n)
{
    *n = 0;
    for (;;) {
        if (*n == max)
            return false;
        field[(*n)++] = s;
        char *sp = strchr(s, ' ');
        if (sp == NULL)
            break;
        *sp = '\0';
        s = sp + 1;
    }
    for (int i = 0; i < *n; i++)
        if (field[i][0] == '\0')
            return false;
    return true;
}

/* A non-negative decimal integer, canonical (no sign, no leading zero). */
static bool parse_count(const char *s, int64_t max, int64_t *out)
{
    if (s[0] == '\0' || (s[0] == '0' && s[1] != '\0'))
        return false;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        int digit = *s - '0';
        if (v > (max - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    *out = v;
    return true;
}

/* A hash as the writer writes it: 32 lowercase hex digits (sb_hash_parse
 * also takes uppercase, which would not read back as written). */
static bool parse_hash(const char *s, sb_hash *h)
{
    char canonical[33];
    if (!sb_hash_parse(h, s))
        return false;
    sb_hash_hex(h, canonical);
    return strcmp(canonical, s) == 0;
}

/* A metric as the writer writes it: a float in %.9g. Several spellings
 * round to one float; only the writer's reads back as written. */
static bool parse_real(const char *s, double *out)
{
    char *end, canonical[32];
    errno = 0;
    float v = strtof(s, &end);
    if (end == s || *end != '\0' || (errno == ERANGE && isinf(v)))
        return false;
    snprintf(canonical, sizeof canonical, "%.9g", (double)v);
    if (strcmp(canonical, s) != 0)
        return false;
    *out = (double)v;
    return true;
}

/* Largest element count a record may have: 2^40, beyond any tensor a run
 * makes, small enough that its byte count cannot overflow. */
#define MAX_RECORD_ELEMENTS ((int64_t)1 << 40)

static bool parse_shape(char *s, int *ndim, int64_t *dim)
{
    if (strcmp(s, "scalar") == 0) {
        *ndim = 0;
        return true;
    }
    *ndim = 0;
    int64_t count = 1;
    for (;;) {
        char *x = strchr(s, 'x');
        if (x)
            *x = '\0';
        if (*ndim == SB_MAX_DIMS || !parse_count(s, MAX_RECORD_ELEMENTS, &dim[*ndim]))
            return false;
        if (dim[*ndim] > 0 && count > MAX_RECORD_ELEMENTS / dim[*ndim])
            return false;
        count *= dim[*ndim];
        (*ndim)++;
        if (x == NULL)
            return true;
        s = x + 1;
    }
}

static sb_status read_header(reader *rd, sb_trace_header *h)
{
    sb_status st = SB_OK;
    char *field[4];
    int n;
    int64_t v;

    if (next_line(rd, &st) <= 0)
        return st != SB_OK ? st : fail(rd, "the magic line \"%s %d\" (empty file)", MAGIC,
                                       SB_TRACE_FORMAT_VERSION);
    if (!split(rd->line, field, 2, &n) || n != 2 || strcmp(field[0], MAGIC) != 0)
        return fail(rd, "the magic line \"%s %d\" (not a samebits trace)", MAGIC,
                    SB_TRACE_FORMAT_VERSION);
    if (!parse_count(field[1], 1000000, &v) || v != SB_TRACE_FORMAT_VERSION)
        return fail(rd, "format version %d, found \"%s\"", SB_TRACE_FORMAT_VERSION, field[1]);
    h->version = (int)v;

    static const struct {
        const char *key;
        size_t offset, size;
    } tokens[] = {
        {"case", offsetof(sb_trace_header, case_name), sizeof h->case_name},
        {"digest", offsetof(sb_trace_header, case_digest), sizeof h->case_digest},
        {"samebits", offsetof(sb_trace_header, samebits_version), sizeof h->samebits_version},
    };
    for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
        if (next_line(rd, &st) <= 0)
            return st != SB_OK ? st : fail(rd, "\"%s ...\" (file truncated?)", tokens[i].key);
        if (!split(rd->line, field, 2, &n) || n != 2 || strcmp(field[0], tokens[i].key) != 0 ||
            !token_ok(field[1]) || strlen(field[1]) >= tokens[i].size)
            return fail(rd, "\"%s <value>\" with one value shorter than %zu characters",
                        tokens[i].key, tokens[i].size);
        sb_hash digest;
        if (strcmp(tokens[i].key, "digest") == 0 && !parse_hash(field[1], &digest))
            return fail(rd, "\"digest <32 lowercase hex digits>\"");
        memcpy((char *)h + tokens[i].offset, field[1], strlen(field[1]) + 1);
    }

    if (next_line(rd, &st) <= 0)
        return st != SB_OK ? st : fail(rd, "\"reference <family> <threads>\" (file truncated?)");
    if (!split(rd->line, field, 3, &n) || n != 3 || strcmp(field[0], "reference") != 0 ||
        (sb_family_from_name(field[1]) == SB_FAMILY_COUNT && strcmp(field[1], "user") != 0) ||
        !parse_count(field[2], SB_MAX_THREADS, &v) || v < 1)
        return fail(rd, "\"reference <ref|det|loose|user> <threads 1..%d>\"", SB_MAX_THREADS);
    copy_field(h->family, sizeof h->family, field[1]);
    h->threads = (int)v;

    if (next_line(rd, &st) <= 0)
        return st != SB_OK ? st : fail(rd, "\"build <compiler and options>\" (file truncated?)");
    if (strncmp(rd->line, "build ", 6) != 0 || rd->line[6] == '\0' ||
        strlen(rd->line + 6) >= sizeof h->build)
        return fail(rd, "\"build <compiler and options>\" shorter than %zu characters",
                    sizeof h->build);
    copy_field(h->build, sizeof h->build, rd->line + 6);
    return SB_OK;
}

#define RECORD_SYNTAX "\"step name op dtype shape hash inputs\""

static sb_status read_record(reader *rd, sb_trace *t)
{
    char *field[8];
    int n;
    if (!split(rd->line, field, 7, &n) || n != 7)
        return fail(rd, "a record " RECORD_SYNTAX " (7 fields separated by single spaces)");
    int64_t step;
    if (!parse_count(field[0], INT64_MAX, &step))
        return fail(rd, "a step (a non-negative integer), found \"%s\"", field[0]);
    if (!probe_name_ok(field[1]))
        return fail(rd, "a probe name (printable, no comma, not \"" SB_TRACE_UNTRACED "\"), found \"%s\"", field[1]);
    if (!name_ok(field[2]))
        return fail(rd, "an op name (printable, no comma), found \"%s\"", field[2]);
    sb_dtype dtype;
    if (strcmp(field[3], "f32") == 0)
        dtype = SB_DTYPE_F32;
    else if (strcmp(field[3], "i32") == 0)
        dtype = SB_DTYPE_I32;
    else if (strcmp(field[3], "i64") == 0)
        dtype = SB_DTYPE_I64;
    else
        return fail(rd, "a dtype (f32, i32 or i64), found \"%s\"", field[3]);
    int ndim;
    int64_t dim[SB_MAX_DIMS];
    if (!parse_shape(field[4], &ndim, dim))
        return fail(rd, "a shape (1 to %d sizes joined by 'x', at most 2^40 elements, or "
                        "\"scalar\")", SB_MAX_DIMS);
    sb_hash hash;
    if (!parse_hash(field[5], &hash))
        return fail(rd, "a hash (32 lowercase hex digits), found \"%s\"", field[5]);

    /* inputs: "-" or names joined by commas */
    const char *inputs[64];
    int n_inputs = 0;
    if (strcmp(field[6], "-") != 0) {
        char *s = field[6];
        for (;;) {
            char *comma = strchr(s, ',');
            if (comma)
                *comma = '\0';
            if (n_inputs == (int)(sizeof inputs / sizeof inputs[0]) || !name_ok(s))
                return fail(rd, "inputs: \"-\" or up to 64 probe names joined by commas");
            inputs[n_inputs++] = s;
            if (comma == NULL)
                break;
            s = comma + 1;
        }
    }
    if (append_record(t, step, field[1], field[2], dtype, ndim, dim, &hash, inputs, n_inputs) !=
        SB_OK) {
        sb_err_set(rd->err, rd->errlen, "%s:%zu: out of memory", rd->path, rd->line_no);
        return SB_ERR_NOMEM;
    }
    return SB_OK;
}

static sb_status read_metrics(reader *rd, sb_trace *t)
{
    static const char *const keys[] = {"epoch", "steps", "train_loss", "test_loss",
                                       "test_accuracy"};
    char *field[11];
    int n;
    bool ok = split(rd->line, field, 10, &n) && n == 10;
    for (int i = 0; ok && i < 5; i++)
        ok = strcmp(field[2 * i], keys[i]) == 0;
    int64_t epoch = 0;
    sb_epoch_metrics m;
    ok = ok && parse_count(field[1], INT32_MAX, &epoch) && epoch >= 1 &&
         parse_count(field[3], INT64_MAX, &m.steps) && parse_real(field[5], &m.train_loss) &&
         parse_real(field[7], &m.test_loss) && parse_real(field[9], &m.test_accuracy);
    if (!ok)
        return fail(rd, "\"epoch E steps S train_loss X test_loss X test_accuracy X\" (each X a "
                        "float as %%.9g writes it)");
    m.epoch = (int)epoch;
    if (sb_trace_add_metrics(t, &m) != SB_OK) {
        sb_err_set(rd->err, rd->errlen, "%s:%zu: out of memory", rd->path, rd->line_no);
        return SB_ERR_NOMEM;
    }
    return SB_OK;
}

static sb_status read_end(reader *rd, const sb_trace *t)
{
    char *field[4];
    int n;
    int64_t records, metrics;
    if (!split(rd->line, field, 3, &n) || n != 3 || !parse_count(field[1], INT64_MAX, &records) ||
        !parse_count(field[2], INT32_MAX, &metrics))
        return fail(rd, "\"end <records> <metrics>\"");
    if ((uint64_t)records != t->n_records || metrics != t->n_metrics)
        return fail(rd, "\"end %zu %d\" (the counts of records and metrics read), found \"end "
                        "%s %s\"",
                    t->n_records, t->n_metrics, field[1], field[2]);
    sb_status st = SB_OK;
    int more = next_line(rd, &st);
    if (more < 0)
        return st;
    if (more > 0)
        return fail(rd, "nothing after the \"end\" line");
    return SB_OK;
}

static sb_status read_body(reader *rd, sb_trace *t)
{
    sb_status st = read_header(rd, &t->header);
    if (st != SB_OK)
        return st;
    for (;;) {
        int got = next_line(rd, &st);
        if (got < 0)
            return st;
        if (got == 0)
            return fail(rd, "a record, an \"epoch\" line or the \"end\" line (file truncated?)");
        const char *l = rd->line;
        if (strncmp(l, "end ", 4) == 0)
            return read_end(rd, t);
        if (strncmp(l, "epoch ", 6) == 0)
            st = read_metrics(rd, t);
        else if (t->n_metrics > 0)
            return fail(rd, "an \"epoch\" line or the \"end\" line (records come before metrics)");
        else if (l[0] >= '0' && l[0] <= '9')
            st = read_record(rd, t);
        else
            return fail(rd, "a record " RECORD_SYNTAX ", an \"epoch\" line or the \"end\" line");
        if (st != SB_OK)
            return st;
    }
}

/* ---- trace streams ------------------------------------------------------- */

/* "start STEP PROBE OP" into site; a probe recorded later clears in_op. */
static sb_status read_start(reader *rd, sb_crash_site *site)
{
    char *field[5];
    int n;
    int64_t step;
    if (!split(rd->line, field, 4, &n) || n != 4 || !parse_count(field[1], INT64_MAX, &step) ||
        !name_ok(field[2]) || !name_ok(field[3]) || strlen(field[2]) >= sizeof site->probe ||
        strlen(field[3]) >= sizeof site->op)
        return fail(rd, "\"start <step> <probe> <op>\"");
    site->in_op = true;
    site->step = step;
    copy_field(site->probe, sizeof site->probe, field[2]);
    copy_field(site->op, sizeof site->op, field[3]);
    return SB_OK;
}

/* The record just read: it is the last one made, and when it is the probe
 * of the op last started, that op finished. */
static void site_after_record(sb_crash_site *site, const sb_trace *t)
{
    const sb_record *r = &t->records[t->n_records - 1];
    copy_field(site->after, sizeof site->after, r->name);
    site->records = t->n_records;
    if (site->in_op && strcmp(site->probe, r->name) == 0) {
        site->in_op = false;
        site->probe[0] = site->op[0] = '\0';
    }
    if (!site->in_op)
        site->step = r->step;
}

static sb_status read_stream_body(reader *rd, sb_trace *t, sb_crash_site *site)
{
    sb_status st = SB_OK;
    char *field[3];
    int n;
    int64_t v;
    if (next_line(rd, &st) <= 0)
        return st != SB_OK ? st : fail(rd, "the magic line \"%s %d\" (empty file)",
                                       SB_TRACE_STREAM_MAGIC, SB_TRACE_FORMAT_VERSION);
    if (!split(rd->line, field, 2, &n) || n != 2 || strcmp(field[0], SB_TRACE_STREAM_MAGIC) ||
        !parse_count(field[1], 1000000, &v) || v != SB_TRACE_FORMAT_VERSION)
        return fail(rd, "the magic line \"%s %d\"", SB_TRACE_STREAM_MAGIC,
                    SB_TRACE_FORMAT_VERSION);
    for (;;) {
        int got = next_line(rd, &st);
        if (got == 0)
            return SB_OK;
        if (got < 0)
            /* a last line without its newline: the process died while
             * writing it, and what it had finished is all there is */
            return st == SB_ERR_INPUT && feof(rd->f) ? SB_OK : st;
        if (strncmp(rd->line, "start ", 6) == 0) {
            st = read_start(rd, site);
        } else if (rd->line[0] >= '0' && rd->line[0] <= '9') {
            st = read_record(rd, t);
            if (st == SB_OK)
                site_after_record(site, t);
        } else {
            return fail(rd, "a record " RECORD_SYNTAX " or \"start <step> <probe> <op>\"");
        }
        if (st != SB_OK)
            return st;
    }
}

/* A trace (site NULL) or a trace stream (its site into *site) from path. */
static sb_status file_read(sb_trace *t, sb_crash_site *site, const char *path, char *err,
                           size_t errlen)
{
    sb_trace_init(t);
    FILE *f = sb_input_open(path, "r", err, errlen);
    if (f == NULL)
        return SB_ERR_IO;
    reader rd = {.f = f, .path = path, .err = err, .errlen = errlen};
    sb_trace tmp;
    sb_trace_init(&tmp);
    sb_crash_site found = {0};
    sb_status st = site ? read_stream_body(&rd, &tmp, &found) : read_body(&rd, &tmp);
    free(rd.line);
    fclose(f);
    if (st != SB_OK) {
        sb_trace_free(&tmp);
        return st;
    }
    *t = tmp;
    if (site) {
        found.streamed = true;
        *site = found;
    }
    return SB_OK;
}

sb_status sb_trace_read(sb_trace *t, const char *path, char *err, size_t errlen)
{
    return file_read(t, NULL, path, err, errlen);
}

sb_status sb_trace_stream_read(sb_trace *t, sb_crash_site *site, const char *path, char *err,
                               size_t errlen)
{
    memset(site, 0, sizeof *site);
    return file_read(t, site, path, err, errlen);
}
