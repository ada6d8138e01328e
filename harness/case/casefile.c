/* Case files (INI, read with inih) -> sb_case. The syntax is in FORMATS.md.
 *
 * inih only splits the file into (section, key, value); this file collects
 * every entry with its line number first and interprets them afterwards, so
 * keys may come in any order, every message can name its line, and a key or
 * section that means nothing is an error rather than silently ignored. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <ini.h>
#include <xxhash.h>
#include <xxh_x86dispatch.h>

#include "samebits.h"
#include "sb_rng.h"
#include "support/support.h"

/* ---- collecting entries ------------------------------------------------------ */

typedef struct entry {
    char section[16];
    char key[32];
    char value[256];
    int line;
} entry;

typedef struct section_mark {
    char name[32];
    int line;
} section_mark;

#define MAX_ENTRIES 128
#define MAX_SECTIONS 16

typedef struct loader {
    FILE *f;
    const char *path;
    int line;                   /* of the line inih is working on */
    int max_line;               /* inih's line buffer, bytes */
    bool line_too_long;
    bool nul_byte;              /* on line `line` */
    entry entries[MAX_ENTRIES];
    int n_entries;
    section_mark sections[MAX_SECTIONS];
    int n_sections;
    bool too_many;
    char *err;
    size_t errlen;
    sb_status status;           /* first error; err holds its message */
} loader;

/* The first error wins: later ones keep its message. */
__attribute__((format(printf, 3, 4)))
static sb_status fail(loader *ld, int line, const char *fmt, ...)
{
    if (ld->status != SB_OK)
        return ld->status;
    va_list ap;
    va_start(ap, fmt);
    ld->status =
        sb_err_vexpected(ld->err, ld->errlen, ld->path, sb_at_line((size_t)line), fmt, ap);
    va_end(ap);
    return ld->status;
}

/* inih's line source: counts lines and notes section headers (which inih
 * does not report when the section is empty). */
static char *read_line(char *str, int num, void *stream)
{
    loader *ld = stream;
    /* getc rather than fgets, which cannot tell a NUL byte from the line's end */
    int ch = EOF;
    int len = 0;
    while (len < num - 1 && (ch = getc(ld->f)) != EOF) {
        if (ch == '\0') {
            ld->nul_byte = true;
            ld->line++;
            return NULL;
        }
        str[len++] = (char)ch;
        if (ch == '\n')
            break;
    }
    if (len == 0)
        return NULL;
    str[len] = '\0';
    ld->line++;
    ld->max_line = num;
    if (str[len - 1] != '\n' && ch != EOF && (ch = getc(ld->f)) != EOF) {
        ld->line_too_long = true;
        return NULL;
    }
    const char *s = str;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (ld->n_sections == MAX_SECTIONS) {
            ld->too_many = true;
        } else if (close != NULL) {
            section_mark *m = &ld->sections[ld->n_sections++];
            snprintf(m->name, sizeof m->name, "%.*s", (int)(close - s - 1), s + 1);
            m->line = ld->line;
        }
    }
    return str;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    loader *ld = user;
    if (ld->n_entries == MAX_ENTRIES) {
        ld->too_many = true;
        return 1;
    }
    entry *e = &ld->entries[ld->n_entries++];
    /* Overlong names and values are truncated here and then fail to match
     * any key or to parse as a value, with a message naming the line. */
    snprintf(e->section, sizeof e->section, "%s", section);
    snprintf(e->key, sizeof e->key, "%s", name);
    snprintf(e->value, sizeof e->value, "%s", value);
    e->line = ld->line;
    return 1;
}

/* ---- looking entries up and parsing values ----------------------------------- */

static const entry *find(const loader *ld, const char *section, const char *key)
{
    for (int i = 0; i < ld->n_entries; i++)
        if (strcmp(ld->entries[i].section, section) == 0 && strcmp(ld->entries[i].key, key) == 0)
            return &ld->entries[i];
    return NULL;
}

static int section_line(const loader *ld, const char *section)
{
    for (int i = 0; i < ld->n_sections; i++)
        if (strcmp(ld->sections[i].name, section) == 0)
            return ld->sections[i].line;
    return 0;
}

static sb_status get_i64(loader *ld, const entry *e, int64_t lo, int64_t hi, int64_t *out)
{
    if (!sb_int_parse(e->value, lo, hi, out, NULL, 0))
        return fail(ld, e->line, "%s as an integer in [%lld, %lld], found \"%s\"", e->key,
                    (long long)lo, (long long)hi, e->value);
    return SB_OK;
}

static sb_status get_u64(loader *ld, const entry *e, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(e->value, &end, 10);
    /* strtoull accepts a sign and wraps "-1" around; a seed is digits only. */
    if (e->value[0] < '0' || e->value[0] > '9' || *end != '\0' || errno != 0)
        return fail(ld, e->line, "%s as an integer in [0, 2^64), found \"%s\"", e->key, e->value);
    *out = v;
    return SB_OK;
}

static sb_status get_real(loader *ld, const entry *e, double lo, double hi, bool hi_open,
                          float *out)
{
    char *end;
    errno = 0;
    double v = strtod(e->value, &end);
    bool ok = end != e->value && *end == '\0' && errno == 0 && isfinite(v) && v >= lo &&
              (hi_open ? v < hi : v <= hi) && fabs(v) <= (double)FLT_MAX;
    if (!ok)
        return fail(ld, e->line, "%s as a finite number in [%g, %g%c, found \"%s\"", e->key, lo,
                    hi, hi_open ? ')' : ']', e->value);
    *out = (float)v;
    return SB_OK;
}

static sb_status get_bool(loader *ld, const entry *e, bool *out)
{
    if (strcmp(e->value, "true") == 0)
        *out = true;
    else if (strcmp(e->value, "false") == 0)
        *out = false;
    else
        return fail(ld, e->line, "%s as true or false, found \"%s\"", e->key, e->value);
    return SB_OK;
}

/* "a..b": half-open, 0 <= a < b. */
static sb_status get_range(loader *ld, const entry *e, int64_t *begin, int64_t *end)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", e->value);
    char *dots = strstr(buf, "..");
    if (dots != NULL) {
        *dots = '\0';
        if (sb_int_parse(buf, 0, INT64_MAX, begin, NULL, 0) &&
            sb_int_parse(dots + 2, 0, INT64_MAX, end, NULL, 0)) {
            if (*begin < *end)
                return SB_OK;
            return fail(ld, e->line, "%s as begin..end with begin < end, found \"%s\"", e->key,
                        e->value);
        }
    }
    return fail(ld, e->line, "%s as a sample range begin..end (integers >= 0), found \"%s\"",
                e->key, e->value);
}

/* ---- parameters ------------------------------------------------------------ */

typedef enum ptype { P_INT, P_I64, P_SIZE, P_REAL, P_BOOL } ptype;

typedef struct param {
    const char *key;
    ptype type;
    size_t offset;      /* into the struct the table is for */
    double lo, hi;
    bool hi_open;
    bool required;
} param;

#define CALL(field) offsetof(sb_op_call, field)
#define IMAX ((double)INT_MAX)
/* 2^40 elements: beyond any memory here; sb_op_call_describe draws the real line. */
#define NMAX 1099511627776.0

static const param conv_params[] = {
    {"n", P_INT, CALL(conv.n), 1, IMAX, false, true},
    {"c", P_INT, CALL(conv.c), 1, IMAX, false, true},
    {"h", P_INT, CALL(conv.h), 1, IMAX, false, true},
    {"w", P_INT, CALL(conv.w), 1, IMAX, false, true},
    {"k", P_INT, CALL(conv.k), 1, IMAX, false, true},
    {"r", P_INT, CALL(conv.r), 1, IMAX, false, true},
    {"s", P_INT, CALL(conv.s), 1, IMAX, false, true},
    {"stride", P_INT, CALL(conv.stride), 1, IMAX, false, false},
    {"pad", P_INT, CALL(conv.pad), 0, IMAX, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param dense_params[] = {
    {"n", P_INT, CALL(dense.n), 1, IMAX, false, true},
    {"in", P_INT, CALL(dense.in), 1, IMAX, false, true},
    {"out", P_INT, CALL(dense.out), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param pool_params[] = {
    {"n", P_INT, CALL(pool.n), 1, IMAX, false, true},
    {"c", P_INT, CALL(pool.c), 1, IMAX, false, true},
    {"h", P_INT, CALL(pool.h), 1, IMAX, false, true},
    {"w", P_INT, CALL(pool.w), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param class_params[] = {
    {"n", P_INT, CALL(cls.n), 1, IMAX, false, true},
    {"k", P_INT, CALL(cls.k), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param embed_params[] = {
    {"n", P_INT, CALL(embed.n), 1, IMAX, false, true},
    {"t", P_INT, CALL(embed.t), 1, IMAX, false, true},
    {"vocab", P_INT, CALL(embed.vocab), 1, IMAX, false, true},
    {"c", P_INT, CALL(embed.c), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* eps: 1e-5 unless given (load_kernel_section), > 0 (sb_op_call_describe) */
static const param norm_params[] = {
    {"n", P_INT, CALL(norm.n), 1, IMAX, false, true},
    {"c", P_INT, CALL(norm.c), 1, IMAX, false, true},
    {"eps", P_REAL, CALL(norm.eps), 0, 1, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* base: 10000 unless given (load_kernel_section), > 1 (sb_op_call_describe) */
static const param rope_params[] = {
    {"n", P_INT, CALL(rope.n), 1, IMAX, false, true},
    {"t", P_INT, CALL(rope.t), 1, IMAX, false, true},
    {"h", P_INT, CALL(rope.h), 1, IMAX, false, true},
    {"d", P_INT, CALL(rope.d), 1, IMAX, false, true},
    {"base", P_REAL, CALL(rope.base), 1, 1e9, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param count_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param dropout_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {"rate", P_REAL, CALL(dropout.rate), 0, 1, true, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param adam_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {"t", P_I64, CALL(t), 1, 9.2e18, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param attn_params[] = {
    {"b", P_INT, CALL(attn.b), 1, IMAX, false, true},
    {"t", P_INT, CALL(attn.t), 1, IMAX, false, true},
    {"h", P_INT, CALL(attn.h), 1, IMAX, false, true},
    {"d", P_INT, CALL(attn.d), 1, IMAX, false, true},
    {NULL, P_INT, 0, 0, 0, false, false},
};
/* grad_scale is the model's clipping factor in a training run, so a kernel
 * key only (not an optimiser key of [train]) */
static const param adamw_params[] = {
    {"n", P_SIZE, CALL(n), 1, NMAX, false, true},
    {"t", P_I64, CALL(t), 1, 9.2e18, false, false},
    {"grad_scale", P_REAL, CALL(optim.grad_scale), 0, 1, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};

/* Optimiser hyper-parameters, offsets into sb_optim_params; `uses` says which
 * optimisers read each one (a bit per sb_optimizer). */
#define OPT(field) offsetof(sb_optim_params, field)
#define USES(o) (1u << (o))
#define USES_KERAS (USES(SB_OPTIM_SGD) | USES(SB_OPTIM_RMSPROP) | USES(SB_OPTIM_ADAM) | \
                    USES(SB_OPTIM_ADADELTA))
static const struct {
    param p;
    unsigned uses;
} optim_params[] = {
    {{"lr", P_REAL, OPT(lr), 0, HUGE_VAL, false, false}, USES_KERAS | USES(SB_OPTIM_ADAMW)},
    {{"momentum", P_REAL, OPT(momentum), 0, HUGE_VAL, false, false}, USES(SB_OPTIM_SGD)},
    {{"nesterov", P_BOOL, OPT(nesterov), 0, 0, false, false}, USES(SB_OPTIM_SGD)},
    {{"rho", P_REAL, OPT(rho), 0, HUGE_VAL, false, false},
     USES(SB_OPTIM_RMSPROP) | USES(SB_OPTIM_ADADELTA)},
    {{"beta1", P_REAL, OPT(beta1), 0, 1, true, false},
     USES(SB_OPTIM_ADAM) | USES(SB_OPTIM_ADAMW)},
    {{"beta2", P_REAL, OPT(beta2), 0, 1, true, false},
     USES(SB_OPTIM_ADAM) | USES(SB_OPTIM_ADAMW)},
    {{"epsilon", P_REAL, OPT(epsilon), 0, HUGE_VAL, false, false},
     USES(SB_OPTIM_RMSPROP) | USES(SB_OPTIM_ADAM) | USES(SB_OPTIM_ADADELTA) |
     USES(SB_OPTIM_ADAMW)},
    {{"decay", P_REAL, OPT(decay), 0, HUGE_VAL, false, false}, USES_KERAS},
    {{"weight_decay", P_REAL, OPT(weight_decay), 0, HUGE_VAL, false, false},
     USES(SB_OPTIM_ADAMW)},
};
#define N_OPTIM_PARAMS (sizeof optim_params / sizeof optim_params[0])

static const param *find_param(const param *list, const char *key)
{
    for (; list && list->key; list++)
        if (strcmp(list->key, key) == 0)
            return list;
    return NULL;
}

static const param *find_optim_param(sb_optimizer kind, const char *key)
{
    for (size_t i = 0; i < N_OPTIM_PARAMS; i++)
        if ((optim_params[i].uses & USES(kind)) && strcmp(optim_params[i].p.key, key) == 0)
            return &optim_params[i].p;
    return NULL;
}

static sb_status set_param(loader *ld, void *base, const param *p, const entry *e)
{
    char *at = (char *)base + p->offset;
    int64_t v = 0;
    sb_status st = SB_OK;
    switch (p->type) {
    case P_INT:
    case P_I64:
    case P_SIZE:
        st = get_i64(ld, e, (int64_t)p->lo, (int64_t)p->hi, &v);
        if (st != SB_OK)
            return st;
        if (p->type == P_INT) {
            int x = (int)v;
            memcpy(at, &x, sizeof x);
        } else if (p->type == P_I64) {
            memcpy(at, &v, sizeof v);
        } else {
            size_t x = (size_t)v;
            memcpy(at, &x, sizeof x);
        }
        return SB_OK;
    case P_REAL: {
        float x;
        st = get_real(ld, e, p->lo, p->hi, p->hi_open, &x);
        if (st == SB_OK)
            memcpy(at, &x, sizeof x);
        return st;
    }
    case P_BOOL: {
        bool x = false;
        st = get_bool(ld, e, &x);
        if (st == SB_OK)
            memcpy(at, &x, sizeof x);
        return st;
    }
    }
    return st;
}

/* ---- the sections ---------------------------------------------------------- */

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof ((sb_case *)0)->name)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

static const char *const case_keys[] = {"name", "kind", "family", "seed", "mutant", NULL};
/* the [train] keys every model reads; the rest are the model's own */
static const char *const train_keys[] = {"model", "dataset", "train", "test", "optimizer",
                                         NULL};
static const char *const sweep_keys[] = {"threads", "repeats", "timeout", "reference_threads",
                                         "expect", "golden", NULL};

static const char *const expect_per_count[] = {"expect", NULL};

static bool in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

/* True when key is one of the per-count keys "<prefix>.<N>" of prefixes
 * ("expect", ...); N is read where the section reads it. */
static bool per_count_key(const char *const *prefixes, const char *key)
{
    for (; *prefixes; prefixes++) {
        size_t n = strlen(*prefixes);
        if (strncmp(key, *prefixes, n) == 0 && key[n] == '.')
            return true;
    }
    return false;
}

/* Fails at the first key of [section] that is neither in keys nor a
 * per-count key of prefixes; `names` lists them all for the message. */
static sb_status section_keys_check(loader *ld, const char *section, const char *const *keys,
                                    const char *const *prefixes, const char *names)
{
    for (int i = 0; i < ld->n_entries; i++) {
        const entry *e = &ld->entries[i];
        if (strcmp(e->section, section) == 0 && !in_list(keys, e->key) &&
            !per_count_key(prefixes, e->key))
            return fail(ld, e->line, "a key of [%s] (%s), found \"%s\"", section, names,
                        e->key);
    }
    return SB_OK;
}

static sb_status load_case_section(loader *ld, sb_case *c)
{
    int at = section_line(ld, "case");
    if (at == 0)
        return fail(ld, 1, "a [case] section (with kind, family and seed)");
    for (int i = 0; i < ld->n_entries; i++) {
        const entry *e = &ld->entries[i];
        if (strcmp(e->section, "case") == 0 && !in_list(case_keys, e->key))
            return fail(ld, e->line,
                        "a key of [case] (name, kind, family, seed), found \"%s\" (and in a "
                        "mutant case: mutant)", e->key);
    }
    const entry *e = find(ld, "case", "name");
    if (e != NULL) {
        if (!name_ok(e->value))
            return fail(ld, e->line, "name as 1 to 127 of [A-Za-z0-9._-], found \"%s\"", e->value);
        /* name_ok bounds the length; the precision says so to the compiler */
        snprintf(c->name, sizeof c->name, "%.*s", (int)sizeof c->name - 1, e->value);
    } else {
        const char *slash = strrchr(ld->path, '/');
        const char *base = slash ? slash + 1 : ld->path;
        size_t len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".case") == 0)
            len -= 5;
        snprintf(c->name, sizeof c->name, "%.*s", (int)len, base);
        if (!name_ok(c->name) || len >= sizeof c->name)
            return fail(ld, at, "a name key: the file name \"%s\" is not a valid case name", base);
    }

    if ((e = find(ld, "case", "kind")) == NULL)
        return fail(ld, at, "key kind (kernel or train) in [case]");
    if (strcmp(e->value, "kernel") == 0)
        c->kind = SB_CASE_KERNEL;
    else if (strcmp(e->value, "train") == 0)
        c->kind = SB_CASE_TRAIN;
    else
        return fail(ld, e->line, "kind as kernel or train, found \"%s\"", e->value);

    if ((e = find(ld, "case", "family")) == NULL)
        return fail(ld, at, "key family (ref, det or loose) in [case]");
    c->family = sb_family_from_name(e->value);
    if (c->family == SB_FAMILY_COUNT)
        return fail(ld, e->line, "family as ref, det or loose, found \"%s\"", e->value);

    if ((e = find(ld, "case", "mutant")) != NULL) {
        const int m = sb_mutant_find(e->value);
        if ((m < 0 || sb_mutant_kind_of(m) != SB_MUTANT_DETERMINISM) &&
            sb_rank_mutant_find(e->value) < 0)
            return fail(ld, e->line, "mutant as a DETERMINISM or rank mutant of "
                                     "kernels/mutants/mutants.def, found \"%s\"", e->value);
        if (c->family != SB_FAMILY_DET)
            return fail(ld, e->line, "family = det in a mutant case (a mutant is a det kernel)");
        snprintf(c->mutant, sizeof c->mutant, "%.*s", (int)sizeof c->mutant - 1, e->value);
    }

    if ((e = find(ld, "case", "seed")) == NULL)
        return fail(ld, at, "key seed (an integer in [0, 2^64)) in [case]");
    return get_u64(ld, e, &c->seed);
}

/* The [kernel] keys of an op's params group (kernels.def), in the order the
 * digest lists them. */
static const param *op_params(sb_op op)
{
    switch (sb_op_params_of(op)) {
    case SB_PARAMS_conv: return conv_params;
    case SB_PARAMS_dense: return dense_params;
    case SB_PARAMS_pool: return pool_params;
    case SB_PARAMS_cls: return class_params;
    case SB_PARAMS_dropout: return dropout_params;
    case SB_PARAMS_adam: return adam_params;
    case SB_PARAMS_embed: return embed_params;
    case SB_PARAMS_norm: return norm_params;
    case SB_PARAMS_attn: return attn_params;
    case SB_PARAMS_rope: return rope_params;
    case SB_PARAMS_adamw: return adamw_params;
    case SB_PARAMS_count:
    case SB_PARAMS_sgd:
    case SB_PARAMS_rmsprop:
    case SB_PARAMS_adadelta:
        return count_params;
    case SB_PARAMS_COUNT:
        break;
    }
    SB_ASSERT(!"SB_PARAMS_COUNT is not a params group");
    return NULL;
}

/* The optimiser an update op implements, or SB_OPTIM_COUNT. */
static sb_optimizer op_optimizer(sb_op op)
{
    return sb_params_optimizer(sb_op_params_of(op));
}

/* "n c h w" plus the optimiser's keys, for messages. */
static void describe_keys(char *out, size_t size, const param *list, sb_optimizer kind)
{
    size_t used = 0;
    out[0] = '\0';
    for (; list && list->key && used < size; list++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", used ? " " : "", list->key);
    for (size_t i = 0; kind != SB_OPTIM_COUNT && i < N_OPTIM_PARAMS && used < size; i++)
        if (optim_params[i].uses & USES(kind))
            used += (size_t)snprintf(out + used, size - used, " %s", optim_params[i].p.key);
}

static sb_status load_kernel_section(loader *ld, sb_case *c)
{
    int at = section_line(ld, "kernel");
    if (at == 0)
        return fail(ld, section_line(ld, "case"), "a [kernel] section for kind = kernel");
    const entry *e = find(ld, "kernel", "op");
    if (e == NULL)
        return fail(ld, at, "key op (an op of kernels.def) in [kernel]");
    sb_op_call *call = &c->call;
    memset(call, 0, sizeof *call);
    call->op = sb_op_from_name(e->value);
    if (call->op == SB_OP_COUNT)
        return fail(ld, e->line, "op as an op of kernels/kernels.def, found \"%s\"", e->value);
    const char *op = e->value;
    const param *list = op_params(call->op);
    sb_optimizer kind = op_optimizer(call->op);
    char keys[160];
    describe_keys(keys, sizeof keys, list, kind);

    call->conv.stride = 1;
    call->t = 1;
    call->dropout.seed = c->seed;
    call->dropout.stream = SB_STREAM_DROPOUT;
    call->norm.eps = 1e-5f;
    call->rope.base = 10000.0f;
    if (kind != SB_OPTIM_COUNT)
        sb_optim_defaults(&call->optim, kind);

    for (int i = 0; i < ld->n_entries; i++) {
        e = &ld->entries[i];
        if (strcmp(e->section, "kernel") != 0 || strcmp(e->key, "op") == 0)
            continue;
        const param *p = find_param(list, e->key);
        void *base = call;
        if (p == NULL && kind != SB_OPTIM_COUNT) {
            p = find_optim_param(kind, e->key);
            base = &call->optim;
        }
        if (p == NULL)
            return fail(ld, e->line, "a parameter of %s (%s), found \"%s\"", op, keys, e->key);
        sb_status st = set_param(ld, base, p, e);
        if (st != SB_OK)
            return st;
    }
    for (const param *p = list; p->key; p++)
        if (p->required && find(ld, "kernel", p->key) == NULL)
            return fail(ld, at, "key %s in [kernel] (%s takes %s)", p->key, op, keys);

    if (sb_op_call_describe(call) != SB_OK)
        return fail(ld, at, "a shape %s can run: these [kernel] parameters are absurd "
                            "(a size not positive, a window larger than the padded input, or "
                            "more than 2^28 elements in a tensor or a scratch buffer)", op);
    return SB_OK;
}

/* The [train] keys of each model besides model, dataset, train, test and
 * optimizer, offsets into sb_train_config, in the order the digest lists them
 * (the CNN's order is the digest's since its first version). */
#define TRAIN(field) offsetof(sb_train_config, field)
static const param cnn_train_params[] = {
    {"batch", P_INT, TRAIN(batch), 1, IMAX, false, false},
    {"epochs", P_INT, TRAIN(epochs), 1, IMAX, false, false},
    {"dropout1", P_REAL, TRAIN(dropout1), 0, 1, true, false},
    {"dropout2", P_REAL, TRAIN(dropout2), 0, 1, true, false},
    {"max_steps", P_I64, TRAIN(max_steps), 0, 9.2e18, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};
static const param gpt_train_params[] = {
    {"batch", P_INT, TRAIN(batch), 1, 4096, false, false},
    {"steps", P_I64, TRAIN(gpt.steps), 1, 1e9, false, false},
    {"layers", P_INT, TRAIN(gpt.layers), 1, SB_GPT_MAX_LAYERS, false, false},
    {"heads", P_INT, TRAIN(gpt.heads), 1, 64, false, false},
    {"width", P_INT, TRAIN(gpt.width), 1, 4096, false, false},
    {"context", P_INT, TRAIN(gpt.context), 1, 4096, false, false},
    {"eval_every", P_INT, TRAIN(gpt.eval_every), 1, 1e9, false, false},
    {"eval_windows", P_INT, TRAIN(gpt.eval_windows), 1, 1e6, false, false},
    {"clip", P_REAL, TRAIN(gpt.clip), 0, HUGE_VAL, false, false},
    {"max_steps", P_I64, TRAIN(max_steps), 0, 9.2e18, false, false},
    {NULL, P_INT, 0, 0, 0, false, false},
};

static const param *train_params_of(const sb_model_kind *m)
{
    return strcmp(m->name, "char_gpt") == 0 ? gpt_train_params : cnn_train_params;
}

static sb_status load_train_section(loader *ld, sb_case *c)
{
    int at = section_line(ld, "train");
    if (at == 0)
        return fail(ld, section_line(ld, "case"), "a [train] section for kind = train");

    /* the model first: it decides the defaults and the other keys */
    const entry *e = find(ld, "train", "model");
    if (e == NULL)
        return fail(ld, at, "key model (%s) in [train]", sb_model_names());
    const sb_model_kind *model = sb_model_find(e->value);
    if (model == NULL)
        return fail(ld, e->line, "model as %s, found \"%s\"", sb_model_names(), e->value);
    snprintf(c->model, sizeof c->model, "%s", model->name);
    const param *train_params = train_params_of(model);

    model->defaults(&c->train);
    c->train.seed = c->seed;
    e = find(ld, "train", "optimizer");
    sb_optimizer kind = c->train.optim.kind;
    if (e != NULL) {
        kind = SB_OPTIM_COUNT;
        for (int k = 0; k < SB_OPTIM_COUNT; k++)
            if (strcmp(sb_optimizer_name((sb_optimizer)k), e->value) == 0)
                kind = (sb_optimizer)k;
        if (kind == SB_OPTIM_COUNT)
            return fail(ld, e->line,
                        "optimizer as adadelta, sgd, rmsprop, adam or adamw, found \"%s\"",
                        e->value);
        sb_optim_defaults(&c->train.optim, kind);
    }

    for (int i = 0; i < ld->n_entries; i++) {
        e = &ld->entries[i];
        if (strcmp(e->section, "train") != 0 || (in_list(train_keys, e->key) &&
                                                     find_param(train_params, e->key) == NULL))
            continue; /* model, dataset, train, test, optimizer: read below or above */
        const param *p = find_param(train_params, e->key);
        void *base = &c->train;
        if (p == NULL) {
            p = find_optim_param(kind, e->key);
            base = &c->train.optim;
        }
        if (p == NULL) {
            char keys[160], own[160];
            describe_keys(keys, sizeof keys, NULL, kind);
            describe_keys(own, sizeof own, train_params, SB_OPTIM_COUNT);
            return fail(ld, e->line,
                        "a key of [train] for model %s (model dataset train test optimizer "
                        "%s, and for %s:%s), found \"%s\"",
                        model->name, own, sb_optimizer_name(kind), keys, e->key);
        }
        sb_status st = set_param(ld, base, p, e);
        if (st != SB_OK)
            return st;
    }

    /* the CNN keeps the state of the Keras optimisers only; the GPT's update
     * is AdamW's (its clipping scale and decoupled weight decay) */
    const bool gpt = train_params == gpt_train_params;
    if (!gpt && kind == SB_OPTIM_ADAMW)
        return fail(ld, find(ld, "train", "optimizer")->line,
                    "optimizer as adadelta, sgd, rmsprop or adam for model keras_mnist_cnn "
                    "(a Keras optimiser), found \"adamw\"");
    if (gpt && kind != SB_OPTIM_ADAMW)
        return fail(ld, find(ld, "train", "optimizer")->line,
                    "optimizer as adamw for model char_gpt, found \"%s\"",
                    sb_optimizer_name(kind));
    if ((e = find(ld, "train", "dataset")) == NULL)
        return fail(ld, at, "key dataset (%s) in [train]", model->datasets);
    if (!model->dataset_ok(e->value))
        return fail(ld, e->line, "dataset as %s (for model %s), found \"%s\"", model->datasets,
                    model->name, e->value);
    snprintf(c->dataset, sizeof c->dataset, "%.*s", (int)sizeof c->dataset - 1, e->value);
    if ((e = find(ld, "train", "train")) == NULL)
        return fail(ld, at, "key train (a sample range begin..end) in [train]");
    sb_status st = get_range(ld, e, &c->train_begin, &c->train_end);
    if (st != SB_OK)
        return st;
    if ((e = find(ld, "train", "test")) == NULL)
        return fail(ld, at, "key test (a sample range begin..end) in [train]");
    return get_range(ld, e, &c->test_begin, &c->test_end);
}

/* "1..8", "1,2,4,6,8" or a mix such as "1..4, 6, 8": the one thread-list
 * grammar (support.h). */
static sb_status get_threads(loader *ld, const entry *e, sb_case *c)
{
    char why[160];
    if (!sb_thread_list_parse(e->value, c->threads, &c->n_threads, why, sizeof why))
        return fail(ld, e->line, "threads as counts in [1, %d] and ranges a..b or a-b, "
                                 "each count once (%s)", SB_MAX_THREADS, why);
    return SB_OK;
}

/* One verdict or a set of them joined by '|': "identical|reordering". */
static sb_status get_verdicts(loader *ld, const entry *e, sb_verdict_set *s)
{
    *s = sb_verdict_set_from_name(e->value);
    if (*s == 0)
        return fail(ld, e->line, "%s as identical, reordering, beyond-bound, crash, timeout "
                                 "or nondeterministic, or several joined by '|', found \"%s\"",
                    e->key, e->value);
    return SB_OK;
}

/* The repository the case lives in: the parent of the case file's directory. */
static int repo_of(char *out, size_t size, const char *path)
{
    char dir[512];
    const char *slash = strrchr(path, '/');
    int n = slash == NULL ? snprintf(dir, sizeof dir, ".")
                          : snprintf(dir, sizeof dir, "%.*s",
                                     (int)(slash == path ? 1 : slash - path), path);
    if (n < 0 || (size_t)n >= sizeof dir)
        return -1;
    const char *dslash = strrchr(dir, '/');
    const char *last = dslash ? dslash + 1 : dir;
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
        return snprintf(out, size, "%s/..", dir);
    if (dslash == NULL)
        return snprintf(out, size, ".");
    if (dslash == dir)
        return snprintf(out, size, "/");
    return snprintf(out, size, "%.*s", (int)(dslash - dir), dir);
}

static sb_status load_sweep_section(loader *ld, sb_case *c)
{
    int at = section_line(ld, "sweep");
    if (at == 0)
        return fail(ld, 1, "a [sweep] section (with threads)");
    static const char *const per_count[] = {"expect", "repeats", NULL};
    sb_status keys_st = section_keys_check(ld, "sweep", sweep_keys, per_count,
                           "threads repeats repeats.<T> timeout reference_threads expect "
                           "expect.<T> golden");
    if (keys_st != SB_OK)
        return keys_st;
    const entry *e = find(ld, "sweep", "threads");
    if (e == NULL)
        return fail(ld, at, "key threads (e.g. 1..8 or 1,2,4,6,8) in [sweep]");
    sb_status st = get_threads(ld, e, c);
    int64_t v = 0;

    c->repeats = 1;
    if (st == SB_OK && (e = find(ld, "sweep", "repeats")) != NULL &&
        (st = get_i64(ld, e, 1, 1000, &v)) == SB_OK)
        c->repeats = (int)v;
    c->reference_threads = 1;
    if (st == SB_OK && (e = find(ld, "sweep", "reference_threads")) != NULL &&
        (st = get_i64(ld, e, 1, SB_MAX_THREADS, &v)) == SB_OK)
        c->reference_threads = (int)v;
    c->timeout_seconds = 600;
    if (st == SB_OK && (e = find(ld, "sweep", "timeout")) != NULL) {
        float seconds;
        st = get_real(ld, e, 0.001, 86400.0 * 7, false, &seconds);
        c->timeout_seconds = (double)seconds;
    }
    if (st != SB_OK)
        return st;

    sb_verdict_set all = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL);
    if ((e = find(ld, "sweep", "expect")) != NULL && (st = get_verdicts(ld, e, &all)) != SB_OK)
        return st;
    for (int t = 0; t <= SB_MAX_THREADS; t++)
        c->expect_set[t] = all;
    for (int i = 0; i < ld->n_entries; i++) {
        e = &ld->entries[i];
        if (strcmp(e->section, "sweep") != 0)
            continue;
        bool expect = strncmp(e->key, "expect.", 7) == 0;
        if (!expect && strncmp(e->key, "repeats.", 8) != 0)
            continue;
        int64_t t;
        bool listed = false;
        if (sb_int_parse(e->key + (expect ? 7 : 8), 1, SB_MAX_THREADS, &t, NULL, 0))
            for (int k = 0; k < c->n_threads; k++)
                listed = listed || c->threads[k] == t;
        if (!listed)
            return fail(ld, e->line, "%s.<T> with T one of the thread counts in threads, "
                                     "found \"%s\"", expect ? "expect" : "repeats", e->key);
        if (expect)
            st = get_verdicts(ld, e, &c->expect_set[t]);
        else if ((st = get_i64(ld, e, 1, 1000, &v)) == SB_OK)
            c->repeats_at[t] = (int)v;
        if (st != SB_OK)
            return st;
    }

    for (int t = 0; t <= SB_MAX_THREADS; t++)
        c->expect[t] = sb_verdict_set_first(c->expect_set[t]);

    char repo[1024];
    int rlen = repo_of(repo, sizeof repo, ld->path);
    if (rlen < 0 || (size_t)rlen >= sizeof repo)
        return fail(ld, at, "a case file path shorter than %zu characters", sizeof repo);
    bool here = strcmp(repo, ".") == 0;
    int len;
    if ((e = find(ld, "sweep", "golden")) != NULL) {
        if (e->value[0] == '\0')
            return fail(ld, e->line, "golden as a path");
        if (e->value[0] == '/' || here)
            len = snprintf(c->golden_path, sizeof c->golden_path, "%s", e->value);
        else
            len = snprintf(c->golden_path, sizeof c->golden_path, "%s/%s", repo, e->value);
    } else if (here) {
        len = snprintf(c->golden_path, sizeof c->golden_path, "golden/%s.golden", c->name);
    } else {
        len = snprintf(c->golden_path, sizeof c->golden_path, "%s/golden/%s.golden", repo, c->name);
    }
    if (len < 0 || (size_t)len >= sizeof c->golden_path)
        return fail(ld, e ? e->line : at, "a golden path shorter than %zu characters",
                    sizeof c->golden_path);
    return SB_OK;
}

/* [invariance]: batch = a batch-size list (the first the reference),
 * samples = 1..SB_MAX_BATCH_SAMPLES (default 2), threads = a thread list
 * (default the reference thread count), expect = a verdict set (default
 * identical) and expect.<B> for one of the sizes. */
static sb_status load_invariance_section(loader *ld, sb_case *c)
{
    int at = section_line(ld, "invariance");
    if (at == 0)
        return SB_OK;
    static const char *const keys[] = {"batch", "samples", "threads", "expect", NULL};
    sb_status keys_st = section_keys_check(ld, "invariance", keys, expect_per_count,
                           "batch samples threads expect expect.<B>");
    if (keys_st != SB_OK)
        return keys_st;
    const entry *e = find(ld, "invariance", "batch");
    char why[160];
    if (e == NULL)
        return fail(ld, at, "key batch (batch sizes, e.g. 1,3,16,128) in [invariance]");
    if (!sb_batch_list_parse(e->value, c->batch_sizes, &c->n_batch, why, sizeof why))
        return fail(ld, e->line, "batch as sizes in [1, %d] and ranges a..b, each size once, "
                                 "at most %d (%s)", SB_MAX_BATCH, SB_MAX_BATCH_SIZES, why);
    if (c->kind == SB_CASE_TRAIN && !sb_model_find(c->model)->samples_open)
        return fail(ld, at, "[invariance] with a model that has a batch-axis forward pass: "
                            "model %s has none yet", c->model);
    if (c->kind == SB_CASE_KERNEL && !sb_op_per_sample(c->call.op))
        return fail(ld, at, "no [invariance] for op %s: its output has no row per sample "
                            "(the batch axis takes conv, dense, pool, classifier, layer-norm "
                            "and attention ops with a per-sample output)",
                    sb_op_name(c->call.op));
    int64_t v = 2;
    sb_status st = SB_OK;
    if ((e = find(ld, "invariance", "samples")) != NULL)
        st = get_i64(ld, e, 1, SB_MAX_BATCH_SAMPLES, &v);
    c->batch_samples = (int)v;
    c->batch_threads[0] = c->reference_threads;
    c->n_batch_threads = 1;
    if (st == SB_OK && (e = find(ld, "invariance", "threads")) != NULL &&
        !sb_thread_list_parse(e->value, c->batch_threads, &c->n_batch_threads, why, sizeof why))
        return fail(ld, e->line, "threads as counts in [1, %d] and ranges a..b or a-b, "
                                 "each count once (%s)", SB_MAX_THREADS, why);
    sb_verdict_set all = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL);
    if (st == SB_OK && (e = find(ld, "invariance", "expect")) != NULL)
        st = get_verdicts(ld, e, &all);
    c->batch_expect_default = all;
    for (int k = 0; k < SB_MAX_BATCH_SIZES; k++)
        c->batch_expect[k] = all;
    for (int i = 0; st == SB_OK && i < ld->n_entries; i++) {
        e = &ld->entries[i];
        if (strcmp(e->section, "invariance") != 0 || strncmp(e->key, "expect.", 7) != 0)
            continue;
        int64_t b;
        int k = -1;
        if (sb_int_parse(e->key + 7, 1, SB_MAX_BATCH, &b, NULL, 0))
            for (int j = 0; j < c->n_batch; j++)
                k = c->batch_sizes[j] == b ? j : k;
        if (k < 0)
            return fail(ld, e->line, "expect.<B> with B one of the sizes in batch, found \"%s\"",
                        e->key);
        st = get_verdicts(ld, e, &c->batch_expect[k]);
    }
    return st;
}

/* [parallel] of a training case: ranks (a list like threads, each at most
 * SB_MAX_RANKS), reduce = det | loose, chunk (det: samples per chunk,
 * default 16), expect (the verdicts accepted at every rank count above 1;
 * default identical). reduce and chunk are in the digest, ranks not. */
static sb_status load_parallel_section(loader *ld, sb_case *c)
{
    int at = section_line(ld, "parallel");
    if (at == 0 && c->mutant[0] && sb_rank_mutant_find(c->mutant) >= 0)
        return fail(ld, find(ld, "case", "mutant")->line,
                    "a [parallel] section (reduce = det) in a case of rank mutant %s", c->mutant);
    if (at == 0)
        return SB_OK;
    if (c->kind != SB_CASE_TRAIN)
        return fail(ld, at, "[parallel] only in a kind = train case");
    if (c->n_batch > 0)
        return fail(ld, at, "[parallel] or [invariance], not both: a case sweeps one axis "
                            "besides its thread counts");
    if (!sb_model_find(c->model)->data_parallel)
        return fail(ld, at, "[parallel] with a model that has a data-parallel step: model %s "
                            "has none", c->model);
    static const char *const keys[] = {"ranks", "reduce", "chunk", "expect", NULL};
    sb_status keys_st = section_keys_check(ld, "parallel", keys, expect_per_count,
                           "ranks reduce chunk expect expect.<R>");
    if (keys_st != SB_OK)
        return keys_st;
    const entry *e = find(ld, "parallel", "ranks");
    char why[160];
    int ranks[SB_MAX_THREADS], n = 0;
    if (e == NULL)
        return fail(ld, at, "key ranks (e.g. 1,2,3,4) in [parallel]");
    if (!sb_thread_list_parse(e->value, ranks, &n, why, sizeof why) || n > SB_MAX_RANKS)
        return fail(ld, e->line, "ranks as counts in [1, %d] and ranges a..b, each once (%s)",
                    SB_MAX_RANKS, n > SB_MAX_RANKS ? "too many" : why);
    for (int i = 0; i < n; i++) {
        if (ranks[i] > SB_MAX_RANKS)
            return fail(ld, e->line, "rank counts in [1, %d], found %d", SB_MAX_RANKS, ranks[i]);
        c->ranks[i] = ranks[i];
    }
    c->n_ranks = n;
    if ((e = find(ld, "parallel", "reduce")) == NULL)
        return fail(ld, at, "key reduce (det or loose) in [parallel]");
    if (strcmp(e->value, "det") == 0)
        c->train.reduce = SB_REDUCE_DET;
    else if (strcmp(e->value, "loose") == 0)
        c->train.reduce = SB_REDUCE_LOOSE;
    else
        return fail(ld, e->line, "reduce as det or loose, found \"%s\"", e->value);
    c->train.chunk = 16;
    int64_t v;
    sb_status st = SB_OK;
    if ((e = find(ld, "parallel", "chunk")) != NULL && (st = get_i64(ld, e, 1, 1 << 20, &v)) == SB_OK)
        c->train.chunk = (int)v;
    sb_verdict_set all = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL);
    if (st == SB_OK && (e = find(ld, "parallel", "expect")) != NULL)
        st = get_verdicts(ld, e, &all);
    for (int r = 0; r <= SB_MAX_RANKS; r++)
        c->expect_ranks[r] = all;
    for (int i = 0; st == SB_OK && i < ld->n_entries; i++) {
        e = &ld->entries[i];
        if (strcmp(e->section, "parallel") != 0 || strncmp(e->key, "expect.", 7) != 0)
            continue;
        bool listed = false;
        if (sb_int_parse(e->key + 7, 2, SB_MAX_RANKS, &v, NULL, 0))
            for (int k = 0; k < c->n_ranks; k++)
                listed = listed || c->ranks[k] == v;
        if (!listed)
            return fail(ld, e->line, "expect.<R> with R > 1 one of the rank counts in ranks, "
                                     "found \"%s\"", e->key);
        st = get_verdicts(ld, e, &c->expect_ranks[v]);
    }
    /* a rank mutant (kernels/mutants/mutants.def) is a fault of the det step */
    int m = c->mutant[0] ? sb_rank_mutant_find(c->mutant) : -1;
    if (st == SB_OK && m >= 0) {
        if (c->train.reduce != SB_REDUCE_DET)
            return fail(ld, find(ld, "parallel", "reduce")->line,
                        "reduce = det in a case of rank mutant %s", c->mutant);
        c->train.rank_fault = sb_rank_mutant_fault_kind(m);
    }
    return st;
}

/* [expect] of a mutant case: what `samebits mutants` must find. detected =
 * yes or no (default yes), op = the op the first divergence must be in
 * (default the mutant's op). */
static sb_status load_expect_section(loader *ld, sb_case *c)
{
    int at = section_line(ld, "expect");
    c->expect_detected = c->mutant[0] != '\0';
    /* a rank mutant's divergence is at a combined gradient, which no op of
     * the kernel list makes: SB_OP_COUNT, its op SB_ALLREDUCE_OP */
    int kernel_mutant = c->mutant[0] ? sb_mutant_find(c->mutant) : -1;
    c->expect_op = kernel_mutant >= 0 ? sb_mutant_op(kernel_mutant) : SB_OP_COUNT;
    if (at == 0)
        return SB_OK;
    if (c->mutant[0] == '\0')
        return fail(ld, at, "[expect] only in a mutant case (a [case] mutant = NAME key)");
    static const char *const expect_keys[] = {"detected", "op", NULL};
    for (int i = 0; i < ld->n_entries; i++) {
        const entry *e = &ld->entries[i];
        if (strcmp(e->section, "expect") == 0 && !in_list(expect_keys, e->key))
            return fail(ld, e->line, "a key of [expect] (detected, op), found \"%s\"", e->key);
    }
    const entry *e = find(ld, "expect", "detected");
    if (e != NULL) {
        if (strcmp(e->value, "yes") != 0 && strcmp(e->value, "no") != 0)
            return fail(ld, e->line, "detected as yes or no, found \"%s\"", e->value);
        c->expect_detected = strcmp(e->value, "yes") == 0;
    }
    if ((e = find(ld, "expect", "op")) != NULL) {
        c->expect_op = sb_op_from_name(e->value);
        if (c->expect_op == SB_OP_COUNT)
            return fail(ld, e->line, "op as an op of kernels/kernels.def, found \"%s\"", e->value);
    }
    return SB_OK;
}

/* ---- the digest ------------------------------------------------------------ */

typedef struct text {
    char buf[2048];
    size_t len;
} text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
    SB_ASSERT(n >= 0 && (size_t)n < sizeof t->buf - t->len);
    t->len += (size_t)n;
}

static void add_param(text *t, const void *base, const param *p)
{
    const char *at = (const char *)base + p->offset;
    switch (p->type) {
    case P_INT: {
        int x;
        memcpy(&x, at, sizeof x);
        add(t, "%s=%d\n", p->key, x);
        return;
    }
    case P_I64: {
        int64_t x;
        memcpy(&x, at, sizeof x);
        add(t, "%s=%lld\n", p->key, (long long)x);
        return;
    }
    case P_SIZE: {
        size_t x;
        memcpy(&x, at, sizeof x);
        add(t, "%s=%zu\n", p->key, x);
        return;
    }
    case P_REAL: {
        float x;
        memcpy(&x, at, sizeof x);
        add(t, "%s=%a\n", p->key, (double)x); /* hexadecimal: exact */
        return;
    }
    case P_BOOL: {
        bool x;
        memcpy(&x, at, sizeof x);
        add(t, "%s=%d\n", p->key, x ? 1 : 0);
        return;
    }
    }
}

static void add_optim(text *t, const sb_optim_params *o)
{
    add(t, "optimizer=%s\n", sb_optimizer_name(o->kind));
    for (size_t i = 0; i < N_OPTIM_PARAMS; i++)
        if (optim_params[i].uses & USES(o->kind))
            add_param(t, o, &optim_params[i].p);
}

/* Everything that decides the trace's records, in effective values (defaults
 * filled in), one "key=value" line each; not the name, not [sweep]. */
static void case_digest(sb_case *c)
{
    text t = {.len = 0};
    add(&t, "samebits-case-digest 1\n");
    add(&t, "kind=%s\nfamily=%s\nseed=%llu\n", c->kind == SB_CASE_KERNEL ? "kernel" : "train",
        sb_family_name(c->family), (unsigned long long)c->seed);
    if (c->kind == SB_CASE_KERNEL) {
        add(&t, "op=%s\n", sb_op_name(c->call.op));
        for (const param *p = op_params(c->call.op); p->key; p++)
            add_param(&t, &c->call, p);
        if (op_optimizer(c->call.op) != SB_OPTIM_COUNT)
            add_optim(&t, &c->call.optim);
    } else {
        const sb_train_config *cfg = &c->train;
        add(&t, "model=%s\ndataset=%s\ntrain=%lld..%lld\ntest=%lld..%lld\n", c->model, c->dataset,
            (long long)c->train_begin, (long long)c->train_end, (long long)c->test_begin,
            (long long)c->test_end);
        for (const param *p = train_params_of(sb_model_find(c->model)); p->key; p++)
            add_param(&t, cfg, p);
        add_optim(&t, &cfg->optim);
        /* a data-parallel trace has other probes: only such cases name it,
         * so every other digest stays as it was */
        if (cfg->reduce != SB_REDUCE_NONE)
            add(&t, "reduce=%s\nchunk=%d\n", cfg->reduce == SB_REDUCE_DET ? "det" : "loose",
                cfg->reduce == SB_REDUCE_DET ? cfg->chunk : 0);
    }
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, XXH3_128bits_dispatch(t.buf, t.len));
    sb_hash h;
    memcpy(h.bytes, canon.digest, sizeof h.bytes);
    sb_hash_hex(&h, c->digest);
}

/* ---- loading --------------------------------------------------------------- */

static sb_status check_sections(loader *ld)
{
    /* [numerics] belongs to `samebits numerics` (numerics/numerics_case.c), which
     * checks its keys; it changes nothing in a run's trace. */
    static const char *const known[] = {"case", "kernel", "train", "sweep", "numerics",
                                        "expect", "invariance", "parallel", NULL};
    for (int i = 0; i < ld->n_sections; i++) {
        const section_mark *m = &ld->sections[i];
        if (!in_list(known, m->name))
            return fail(ld, m->line,
                        "a section [case], [kernel], [train], [sweep], [numerics], "
                        "[expect], [invariance] or [parallel], found [%s]",
                        m->name);
        for (int j = 0; j < i; j++)
            if (strcmp(ld->sections[j].name, m->name) == 0)
                return fail(ld, m->line, "each section once ([%s] is also on line %d)", m->name,
                            ld->sections[j].line);
    }
    for (int i = 0; i < ld->n_entries; i++) {
        const entry *e = &ld->entries[i];
        if (e->section[0] == '\0')
            return fail(ld, e->line, "a [section] line before the first key");
        for (int j = 0; j < i; j++)
            if (strcmp(ld->entries[j].section, e->section) == 0 &&
                strcmp(ld->entries[j].key, e->key) == 0)
                return fail(ld, e->line, "each key once (%s is also on line %d; an indented line "
                                         "continues the value above it)",
                            e->key, ld->entries[j].line);
    }
    return SB_OK;
}

static sb_status load(loader *ld, sb_case *c)
{
    int bad_line = ini_parse_stream(read_line, ld, on_entry, ld);
    if (ld->nul_byte)
        return fail(ld, ld->line, "text (a NUL byte on this line)");
    if (ld->line_too_long)
        return fail(ld, ld->line, "a line shorter than %d bytes", ld->max_line - 1);
    if (ferror(ld->f)) {
        sb_err_set(ld->err, ld->errlen, "%s:%d: read failed: %s", ld->path, ld->line + 1,
                   strerror(errno));
        return SB_ERR_IO;
    }
    if (bad_line > 0)
        return fail(ld, bad_line, "\"key = value\", a [section] line, or a comment (; or #)");
    if (bad_line < 0)
        return fail(ld, 1, "a readable case file (inih could not parse it)");
    if (ld->too_many)
        return fail(ld, ld->line, "at most %d keys and %d sections", MAX_ENTRIES, MAX_SECTIONS);

    sb_status st = check_sections(ld);
    if (st == SB_OK)
        st = load_case_section(ld, c);
    if (st == SB_OK && c->kind == SB_CASE_KERNEL && section_line(ld, "train") != 0)
        st = fail(ld, section_line(ld, "train"), "no [train] section in a kind = kernel case");
    if (st == SB_OK && c->kind == SB_CASE_TRAIN && section_line(ld, "kernel") != 0)
        st = fail(ld, section_line(ld, "kernel"), "no [kernel] section in a kind = train case");
    if (st == SB_OK)
        st = c->kind == SB_CASE_KERNEL ? load_kernel_section(ld, c) : load_train_section(ld, c);
    if (st == SB_OK)
        st = load_sweep_section(ld, c);
    if (st == SB_OK)
        st = load_expect_section(ld, c);
    if (st == SB_OK)
        st = load_invariance_section(ld, c);
    if (st == SB_OK)
        st = load_parallel_section(ld, c);
    if (st == SB_OK)
        case_digest(c);
    return st;
}

sb_status sb_case_load(sb_case *c, const char *path, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    if (strlen(path) >= sizeof c->path) {
        sb_err_set(err, errlen, "%s: path too long", path);
        return SB_ERR_USAGE;
    }
    FILE *f = sb_input_open(path, "r", err, errlen);
    if (f == NULL)
        return SB_ERR_IO;
    loader *ld = calloc(1, sizeof *ld);
    if (ld == NULL) {
        fclose(f);
        return SB_ERR_NOMEM;
    }
    ld->f = f;
    ld->path = path;
    ld->err = err;
    ld->errlen = errlen;
    sb_case tmp;
    memset(&tmp, 0, sizeof tmp);
    snprintf(tmp.path, sizeof tmp.path, "%s", path);
    sb_status st = load(ld, &tmp);
    fclose(f);
    free(ld);
    if (st == SB_OK)
        *c = tmp;
    return st;
}

sb_status sb_case_batch_override(sb_case *c, const int *sizes, int n, char *err, size_t errlen)
{
    if (c->kind == SB_CASE_KERNEL && !sb_op_per_sample(c->call.op)) {
        sb_err_set(err, errlen, "%s: op %s has no per-sample output: no batch axis", c->path,
                   sb_op_name(c->call.op));
        return SB_ERR_USAGE;
    }
    if (c->kind == SB_CASE_TRAIN && !sb_model_find(c->model)->samples_open) {
        sb_err_set(err, errlen, "%s: model %s has no batch-axis forward pass yet", c->path,
                   c->model);
        return SB_ERR_USAGE;
    }
    if (c->n_ranks > 0) {
        sb_err_set(err, errlen, "%s: a [parallel] case has no batch axis (one axis a case)",
                   c->path);
        return SB_ERR_USAGE;
    }
    SB_ASSERT(n >= 1 && n <= SB_MAX_BATCH_SIZES);
    if (c->n_batch == 0) {
        c->batch_samples = 2;
        c->batch_threads[0] = c->reference_threads;
        c->n_batch_threads = 1;
        c->batch_expect_default = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL);
    }
    sb_verdict_set expect[SB_MAX_BATCH_SIZES];
    for (int k = 0; k < n; k++) {
        expect[k] = c->batch_expect_default;
        for (int j = 0; j < c->n_batch; j++)
            if (c->batch_sizes[j] == sizes[k])
                expect[k] = c->batch_expect[j];
    }
    for (int k = 0; k < n; k++) {
        c->batch_sizes[k] = sizes[k];
        c->batch_expect[k] = expect[k];
    }
    c->n_batch = n;
    return SB_OK;
}

int64_t sb_case_train_steps(const sb_case *c)
{
    if (c->kind != SB_CASE_TRAIN)
        return 0;
    return sb_model_find(c->model)->steps(&c->train, c->train_end - c->train_begin);
}
