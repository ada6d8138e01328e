/* The checkpoint file: a text header (what it is of, the counters, the
 * tensors' names and sizes, the payload's length and hash), then the
 * tensors as little-endian float32 (harness/FORMATS.md, "Checkpoints"). */
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "run/checkpoint.h"
#include "support/support.h"

#define MAGIC "samebits-checkpoint"
#define VERSION 1
/* the header: the lines before the payload, at most this long */
#define HEADER_MAX (4096 + SB_TRAIN_MAX_TENSORS * 128)

/* ---- writing ------------------------------------------------------------------ */

static void put_f32le(unsigned char *out, float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    for (int i = 0; i < 4; i++)
        out[i] = (unsigned char)(u >> (8 * i));
}

static float get_f32le(const unsigned char *in)
{
    uint32_t u = 0;
    for (int i = 0; i < 4; i++)
        u |= (uint32_t)in[i] << (8 * i);
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The header of s for case c, up to the payload line; its length, 0 when
 * it does not fit. */
static size_t header_print(char *h, size_t size, const sb_case *c, const sb_train_state *s)
{
    const sb_train_counters *k = &s->ctr;
    size_t n = (size_t)snprintf(h, size,
                                "%s %d\ncase %s %s\nmodel %s\nfamily %s\nstep %" PRId64 "\n"
                                "counters %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
                                " %" PRId64 " %" PRId64 " %" PRId64 " %a\n",
                                MAGIC, VERSION, c->name, c->digest, c->model,
                                sb_case_family_label(c), k->step, k->optim_t, k->rng_step,
                                k->epoch, k->epoch_first, k->order_key, k->position, k->losses,
                                k->loss_sum);
    for (int i = 0; i < s->n_tensors && n < size; i++)
        n += (size_t)snprintf(h + n, size - n, "tensor %s %zu\n", s->tensor[i].name,
                              s->tensor[i].count);
    return n < size ? n : 0;
}

static size_t payload_bytes(const sb_train_state *s)
{
    size_t n = 0;
    for (int i = 0; i < s->n_tensors; i++)
        n += s->tensor[i].count * 4;
    return n;
}

static void hash_hex(XXH3_state_t *x, char out[33])
{
    XXH128_hash_t h = XXH3_128bits_digest(x);
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, h);
    sb_hash hash;
    memcpy(hash.bytes, canon.digest, sizeof hash.bytes);
    sb_hash_hex(&hash, out);
}

static sb_status save(void *ctx, const sb_train_state *s, char *err, size_t errlen)
{
    const sb_checkpoint_file *f = ctx;
    char *header = malloc(HEADER_MAX);
    size_t bytes = payload_bytes(s);
    unsigned char *payload = malloc(bytes ? bytes : 1);
    size_t hn = header ? header_print(header, HEADER_MAX, f->c, s) : 0;
    if (!header || !payload || hn == 0) {
        free(header);
        free(payload);
        sb_err_set(err, errlen, "%s: cannot make the checkpoint (out of memory)", f->path);
        return SB_ERR_NOMEM;
    }
    unsigned char *at = payload;
    for (int i = 0; i < s->n_tensors; i++)
        for (size_t j = 0; j < s->tensor[i].count; j++, at += 4)
            put_f32le(at, s->tensor[i].data[j]);
    XXH3_state_t x;
    XXH3_128bits_reset(&x);
    XXH3_128bits_update(&x, header, hn);
    XXH3_128bits_update(&x, payload, bytes);
    char hex[33];
    hash_hex(&x, hex);

    sb_out_file o;
    sb_status st = sb_out_open(&o, f->path, err, errlen);
    if (st == SB_OK) {
        fwrite(header, 1, hn, o.f);
        fprintf(o.f, "payload %zu %s\n", bytes, hex);
        fwrite(payload, 1, bytes, o.f);
        st = sb_out_commit(&o, err, errlen);
    }
    free(header);
    free(payload);
    return st;
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct parsed {
    char *buf;              /* the whole file */
    size_t size;
    char name[128], digest[40], model[64], family[16];
    int64_t step;
    sb_train_counters ctr;
    char tensor[SB_TRAIN_MAX_TENSORS][64];
    size_t count[SB_TRAIN_MAX_TENSORS];
    int n_tensors;
    const unsigned char *payload;
} parsed;

static sb_status bad(char *err, size_t errlen, const char *path, const char *what)
{
    sb_err_set(err, errlen, "%s: %s", path, what);
    return SB_ERR_INPUT;
}

/* The next line of p's buffer from *at, NUL-terminated in place; NULL at
 * the end or when the line has no newline within the header's room. */
static char *line_next(parsed *p, size_t *at)
{
    if (*at >= p->size)
        return NULL;
    char *s = p->buf + *at;
    char *nl = memchr(s, '\n', p->size - *at);
    if (!nl || (size_t)(nl - p->buf) > HEADER_MAX)
        return NULL;
    *nl = '\0';
    *at = (size_t)(nl - p->buf) + 1;
    return s;
}

static sb_status file_read(parsed *p, const char *path, char *err, size_t errlen)
{
    FILE *in = sb_input_open(path, "rb", err, errlen);
    if (!in)
        return SB_ERR_INPUT;
    size_t cap = 1 << 16;
    p->buf = malloc(cap);
    p->size = 0;
    size_t got;
    while (p->buf && (got = fread(p->buf + p->size, 1, cap - p->size, in)) > 0) {
        p->size += got;
        if (p->size == cap) {
            char *more = realloc(p->buf, cap *= 2);
            if (!more)
                free(p->buf);
            p->buf = more;
        }
    }
    bool failed = ferror(in);
    fclose(in);
    if (!p->buf)
        return bad(err, errlen, path, "cannot read the checkpoint: out of memory");
    if (failed)
        return bad(err, errlen, path, "cannot read the checkpoint: read error");
    return SB_OK;
}

/* Reads and checks path against case c: its lines, version, case, length
 * and hash. */
static sb_status parse(parsed *p, const char *path, const sb_case *c, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    sb_status st = file_read(p, path, err, errlen);
    if (st != SB_OK)
        return st;
    size_t at = 0;
    char *l = line_next(p, &at);
    int version = 0;
    char magic[32];
    if (!l || sscanf(l, "%31s %d", magic, &version) != 2 || strcmp(magic, MAGIC) != 0)
        return bad(err, errlen, path, "not a samebits checkpoint (its first line is not "
                   "\"" MAGIC " <version>\")");
    if (version != VERSION) {
        sb_err_set(err, errlen, "%s: checkpoint format version %d; this samebits reads "
                   "version %d (write the checkpoint again with this samebits)", path, version,
                   VERSION);
        return SB_ERR_INPUT;
    }
    sb_train_counters *k = &p->ctr;
    char *lines[6];
    for (int i = 0; i < 6; i++)
        if (!(lines[i] = line_next(p, &at)))
            return bad(err, errlen, path, "truncated checkpoint: its header ends early");
    if (sscanf(lines[0], "case %127s %39s", p->name, p->digest) != 2 ||
        sscanf(lines[1], "model %63s", p->model) != 1 ||
        sscanf(lines[2], "family %15s", p->family) != 1 ||
        sscanf(lines[3], "step %" SCNd64, &p->step) != 1 ||
        sscanf(lines[4], "counters %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
               " %" SCNd64 " %" SCNd64 " %la", &k->optim_t, &k->rng_step, &k->epoch,
               &k->epoch_first, &k->order_key, &k->position, &k->losses, &k->loss_sum) != 8)
        return bad(err, errlen, path, "corrupt checkpoint: a header line does not read");
    if (c && strcmp(p->digest, c->digest) != 0) {
        sb_err_set(err, errlen, "%s: a checkpoint of case %s (digest %s), not of %s (digest "
                   "%s)", path, p->name, p->digest, c->path, c->digest);
        return SB_ERR_INPUT;
    }
    k->step = p->step;
    size_t bytes = 0, want = 0;
    char hex[40] = "";
    for (l = lines[5]; l && strncmp(l, "tensor ", 7) == 0; l = line_next(p, &at)) {
        int i = p->n_tensors;
        if (i == SB_TRAIN_MAX_TENSORS ||
            sscanf(l, "tensor %63s %zu", p->tensor[i], &p->count[i]) != 2)
            return bad(err, errlen, path, "corrupt checkpoint: a tensor line does not read");
        want += p->count[i] * 4;
        p->n_tensors++;
    }
    if (!l || sscanf(l, "payload %zu %39s", &bytes, hex) != 2)
        return bad(err, errlen, path, "truncated checkpoint: its header ends early");
    if (bytes != want)
        return bad(err, errlen, path, "corrupt checkpoint: the payload's length is not its "
                   "tensors'");
    size_t header_len = (size_t)(l - p->buf);
    if (p->size - at < bytes) {
        sb_err_set(err, errlen, "%s: truncated checkpoint: %zu of its %zu payload bytes", path,
                   p->size - at, bytes);
        return SB_ERR_INPUT;
    }
    if (p->size - at > bytes)
        return bad(err, errlen, path, "corrupt checkpoint: bytes after its payload");
    p->payload = (const unsigned char *)p->buf + at;
    /* the header was cut into lines in place: hash it as it was written */
    for (size_t i = 0; i < header_len; i++)
        if (p->buf[i] == '\0')
            p->buf[i] = '\n';
    XXH3_state_t x;
    XXH3_128bits_reset(&x);
    XXH3_128bits_update(&x, p->buf, header_len);
    XXH3_128bits_update(&x, p->payload, bytes);
    char got[33];
    hash_hex(&x, got);
    if (strcmp(got, hex) != 0)
        return bad(err, errlen, path, "corrupt checkpoint: its contents do not match its hash");
    if (p->step < 1)
        return bad(err, errlen, path, "corrupt checkpoint: step below 1");
    return SB_OK;
}

static sb_status load(void *ctx, sb_train_state *s, char *err, size_t errlen)
{
    const sb_checkpoint_file *f = ctx;
    parsed p;
    sb_status st = parse(&p, f->path, f->c, err, errlen);
    if (st == SB_OK && p.n_tensors != s->n_tensors) {
        sb_err_set(err, errlen, "%s: a checkpoint of %d tensors; model %s has %d", f->path,
                   p.n_tensors, f->c->model, s->n_tensors);
        st = SB_ERR_INPUT;
    }
    for (int i = 0; st == SB_OK && i < s->n_tensors; i++)
        if (strcmp(p.tensor[i], s->tensor[i].name) != 0 || p.count[i] != s->tensor[i].count) {
            sb_err_set(err, errlen, "%s: tensor %d is %s of %zu floats; model %s has %s of %zu",
                       f->path, i, p.tensor[i], p.count[i], f->c->model, s->tensor[i].name,
                       s->tensor[i].count);
            st = SB_ERR_INPUT;
        }
    if (st == SB_OK) {
        const unsigned char *at = p.payload;
        for (int i = 0; i < s->n_tensors; i++)
            for (size_t j = 0; j < s->tensor[i].count; j++, at += 4)
                s->tensor[i].data[j] = get_f32le(at);
        s->ctr = p.ctr;
    }
    free(p.buf);
    return st;
}

sb_train_checkpoint sb_checkpoint_bind(sb_checkpoint_file *f, int64_t stop_at)
{
    if (stop_at > 0)
        return (sb_train_checkpoint){.stop_at = stop_at, .save = save, .ctx = f};
    return (sb_train_checkpoint){.load = load, .ctx = f};
}

sb_status sb_checkpoint_step(const char *path, int64_t *step, char *err, size_t errlen)
{
    parsed p;
    sb_status st = parse(&p, path, NULL, err, errlen);
    if (st == SB_OK)
        *step = p.step;
    free(p.buf);
    return st;
}
