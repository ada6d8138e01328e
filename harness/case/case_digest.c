/* Case files: the digest of what decides a case's trace (FORMATS.md, "The
 * case digest"). */
#include <stdarg.h>
#include <string.h>

#include <xxhash.h>
#include <xxh_x86dispatch.h>

#include "case/case_loader.h"
#include "support/support.h"

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

static size_t param_size(ptype type)
{
    switch (type) {
    case P_INT: return sizeof(int);
    case P_I64: return sizeof(int64_t);
    case P_SIZE: return sizeof(size_t);
    case P_REAL: return sizeof(float);
    case P_BOOL: return sizeof(bool);
    }
    return 0;
}

static bool param_set(const char *at, ptype type)
{
    for (size_t i = 0; i < param_size(type); i++)
        if (at[i] != 0)
            return true;
    return false;
}

/* Keys added after cases without them had goldens: in the digest only when
 * set (not all zero bytes), so that those cases' digests stay as they were
 * (d: clsd's positions; every other group's d is at least 1, always named). */
static const char *const digest_if_set[] = {"kv_heads", "noncausal", "d", NULL};

static void add_param(text *t, const void *base, const case_param *p)
{
    const char *at = (const char *)base + p->offset;
    if (sb_case_in_list(digest_if_set, p->key) && !param_set(at, p->type))
        return;
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
    for (size_t i = 0; i < sb_case_n_optim_params; i++)
        if (sb_case_optim_params[i].uses & SB_CASE_USES(o->kind))
            add_param(t, o, &sb_case_optim_params[i].p);
}

/* Everything that decides the trace's records, in effective values (defaults
 * filled in), one "key=value" line each; not the name, not [sweep]. */
void sb_case_digest_set(sb_case *c)
{
    text t = {.len = 0};
    add(&t, "samebits-case-digest 1\n");
    add(&t, "kind=%s\nfamily=%s\nseed=%llu\n", sb_case_kind_name(c->kind),
        sb_family_name(c->family), (unsigned long long)c->seed);
    if (c->kind == SB_CASE_COMMAND) {
        add(&t, "run=%s\ndump=%s\nstream=%s\nversion=%s\n", c->command_run, c->command_dump,
            c->command_stream, c->command_version);
        /* the resume hook, named only when the case has one, so that every
         * other digest stays as it was */
        if (c->command_stop[0])
            add(&t, "stop=%s\nrestore=%s\n", c->command_stop, c->command_restore);
    } else if (c->kind == SB_CASE_KERNEL) {
        add(&t, "op=%s\n", sb_op_name(c->call.op));
        for (const case_param *p = sb_case_op_params(c->call.op); p->key; p++)
            add_param(&t, &c->call, p);
        if (sb_case_op_optimizer(c->call.op) != SB_OPTIM_COUNT)
            add_optim(&t, &c->call.optim);
    } else {
        const sb_train_config *cfg = &c->train;
        add(&t, "model=%s\ndataset=%s\ntrain=%lld..%lld\ntest=%lld..%lld\n", c->model, c->dataset,
            (long long)c->train_begin, (long long)c->train_end, (long long)c->test_begin,
            (long long)c->test_end);
        for (const case_param *p = sb_case_train_params(sb_model_find(c->model)); p->key; p++)
            add_param(&t, cfg, p);
        add_optim(&t, &cfg->optim);
        /* char_gpt's block, named only when it is not GPT-2's, so that every
         * other digest stays as it was */
        const sb_gpt_block_config *b = &cfg->gpt.block;
        if (!sb_gpt_block_is_gpt2(b))
            add(&t, "norm=%s\nposition=%s\nmlp=%s\nkv_heads=%d\nbias=%d\n",
                sb_gpt_norm_name(b->norm), sb_gpt_position_name(b->position),
                sb_gpt_mlp_name(b->mlp), b->kv_heads, b->no_bias ? 0 : 1);
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
