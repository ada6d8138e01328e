/* Case files: the [invariance] section (the batch axis), and a command
 * line's batch sizes in its place. */
#include <string.h>

#include "case/case_loader.h"
#include "support/support.h"

/* [invariance]: batch = a batch-size list (the first the reference),
 * samples = 1..SB_MAX_BATCH_SAMPLES (default 2), threads = a thread list
 * (default the reference thread count), expect = a verdict set (default
 * identical) and expect.<B> for one of the sizes. */
sb_status sb_case_load_invariance(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "invariance");
    if (at == 0)
        return SB_OK;
    static const char *const keys[] = {"batch", "samples", "threads", "expect", NULL};
    sb_status keys_st = sb_case_keys_check(ld, "invariance", keys, sb_case_expect_per_count,
                                           "batch samples threads expect expect.<B>");
    if (keys_st == SB_OK)
        keys_st = sb_case_per_count_once(ld, "invariance", "expect");
    if (keys_st != SB_OK)
        return keys_st;
    const case_entry *e = sb_case_find(ld, "invariance", "batch");
    char why[160];
    if (e == NULL)
        return sb_case_fail(ld, at, "key batch (batch sizes, e.g. 1,3,16,128) in [invariance]");
    if (!sb_batch_list_parse(e->value, c->batch_sizes, &c->n_batch, why, sizeof why))
        return sb_case_fail(ld, e->line, "batch as sizes in [1, %d] and ranges a..b, each size once, "
                                 "at most %d (%s)", SB_MAX_BATCH, SB_MAX_BATCH_SIZES, why);
    if (c->kind == SB_CASE_COMMAND)
        return sb_case_fail(ld, at, "no [invariance] in a kind = command case (the producer "
                                    "protocol has no batch axis yet)");
    if (c->kind == SB_CASE_TRAIN && !sb_model_find(c->model)->samples_open)
        return sb_case_fail(ld, at, "[invariance] with a model that has a batch-axis forward pass: "
                            "model %s has none yet", c->model);
    if (c->kind == SB_CASE_KERNEL && !sb_op_per_sample(c->call.op))
        return sb_case_fail(ld, at, "no [invariance] for op %s: its output has no row per sample "
                            "(the batch axis takes conv, dense, pool, classifier, layer-norm "
                            "and attention ops with a per-sample output)",
                    sb_op_name(c->call.op));
    int64_t v = 2;
    sb_status st = SB_OK;
    if ((e = sb_case_find(ld, "invariance", "samples")) != NULL)
        st = sb_case_get_i64(ld, e, 1, SB_MAX_BATCH_SAMPLES, &v);
    c->batch_samples = (int)v;
    c->batch_threads[0] = c->reference_threads;
    c->n_batch_threads = 1;
    if (st == SB_OK && (e = sb_case_find(ld, "invariance", "threads")) != NULL &&
        !sb_thread_list_parse(e->value, c->batch_threads, &c->n_batch_threads, why, sizeof why))
        return sb_case_fail(ld, e->line, "threads as counts in [1, %d] and ranges a..b or a-b, "
                                 "each count once (%s)", SB_MAX_THREADS, why);
    sb_verdict_set all = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL);
    if (st == SB_OK && (e = sb_case_find(ld, "invariance", "expect")) != NULL)
        st = sb_case_get_verdicts(ld, e, &all);
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
            return sb_case_fail(ld, e->line, "expect.<B> with B one of the sizes in batch, found \"%s\"",
                        e->key);
        st = sb_case_get_verdicts(ld, e, &c->batch_expect[k]);
    }
    return st;
}

sb_status sb_case_batch_override(sb_case *c, const int *sizes, int n, char *err, size_t errlen)
{
    if (c->kind == SB_CASE_KERNEL && !sb_op_per_sample(c->call.op)) {
        sb_err_set(err, errlen, "%s: op %s has no per-sample output: no batch axis", c->path,
                   sb_op_name(c->call.op));
        return SB_ERR_USAGE;
    }
    if (c->kind == SB_CASE_COMMAND) {
        sb_err_set(err, errlen, "%s: a kind = command case has no batch axis yet", c->path);
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
