/* Case files: the [parallel] section of a training case (the ranks axis). */
#include <string.h>

#include "case/case_loader.h"
#include "support/support.h"

/* [parallel] of a training case: ranks (a list like threads, each at most
 * SB_MAX_RANKS), reduce = det | loose, chunk (det: samples per chunk,
 * default 16), expect (the verdicts accepted at every rank count above 1;
 * default identical). reduce and chunk are in the digest, ranks not. */
sb_status sb_case_load_parallel(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "parallel");
    if (at == 0 && c->mutant[0] && sb_rank_mutant_find(c->mutant) >= 0)
        return sb_case_fail(ld, sb_case_find(ld, "case", "mutant")->line,
                    "a [parallel] section (reduce = det) in a case of rank mutant %s", c->mutant);
    if (at == 0)
        return SB_OK;
    if (c->kind != SB_CASE_TRAIN)
        return sb_case_fail(ld, at, "[parallel] only in a kind = train case");
    if (c->n_batch > 0)
        return sb_case_fail(ld, at, "[parallel] or [invariance], not both: a case sweeps one axis "
                            "besides its thread counts");
    if (!sb_model_find(c->model)->data_parallel)
        return sb_case_fail(ld, at, "[parallel] with a model that has a data-parallel step: model %s "
                            "has none", c->model);
    static const char *const keys[] = {"ranks", "reduce", "chunk", "expect", NULL};
    sb_status keys_st = sb_case_keys_check(ld, "parallel", keys, sb_case_expect_per_count,
                                           "ranks reduce chunk expect expect.<R>");
    if (keys_st == SB_OK)
        keys_st = sb_case_per_count_once(ld, "parallel", "expect");
    if (keys_st != SB_OK)
        return keys_st;
    const case_entry *e = sb_case_find(ld, "parallel", "ranks");
    char why[160];
    int ranks[SB_MAX_THREADS], n = 0;
    if (e == NULL)
        return sb_case_fail(ld, at, "key ranks (e.g. 1,2,3,4) in [parallel]");
    if (!sb_thread_list_parse(e->value, ranks, &n, why, sizeof why) || n > SB_MAX_RANKS)
        return sb_case_fail(ld, e->line, "ranks as counts in [1, %d] and ranges a..b, each once (%s)",
                    SB_MAX_RANKS, n > SB_MAX_RANKS ? "too many" : why);
    for (int i = 0; i < n; i++) {
        if (ranks[i] > SB_MAX_RANKS)
            return sb_case_fail(ld, e->line, "rank counts in [1, %d], found %d", SB_MAX_RANKS, ranks[i]);
        c->ranks[i] = ranks[i];
    }
    c->n_ranks = n;
    if ((e = sb_case_find(ld, "parallel", "reduce")) == NULL)
        return sb_case_fail(ld, at, "key reduce (det or loose) in [parallel]");
    if (strcmp(e->value, "det") == 0)
        c->train.reduce = SB_REDUCE_DET;
    else if (strcmp(e->value, "loose") == 0)
        c->train.reduce = SB_REDUCE_LOOSE;
    else
        return sb_case_fail(ld, e->line, "reduce as det or loose, found \"%s\"", e->value);
    c->train.chunk = 16;
    int64_t v;
    sb_status st = SB_OK;
    if ((e = sb_case_find(ld, "parallel", "chunk")) != NULL && (st = sb_case_get_i64(ld, e, 1, 1 << 20, &v)) == SB_OK)
        c->train.chunk = (int)v;
    sb_verdict_set all = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL);
    if (st == SB_OK && (e = sb_case_find(ld, "parallel", "expect")) != NULL)
        st = sb_case_get_verdicts(ld, e, &all);
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
            return sb_case_fail(ld, e->line, "expect.<R> with R > 1 one of the rank counts in ranks, "
                                     "found \"%s\"", e->key);
        st = sb_case_get_verdicts(ld, e, &c->expect_ranks[v]);
    }
    /* a rank mutant (kernels/mutants/mutants.def) is a fault of the det step */
    int m = c->mutant[0] ? sb_rank_mutant_find(c->mutant) : -1;
    if (st == SB_OK && m >= 0) {
        if (c->train.reduce != SB_REDUCE_DET)
            return sb_case_fail(ld, sb_case_find(ld, "parallel", "reduce")->line,
                        "reduce = det in a case of rank mutant %s", c->mutant);
        c->train.rank_fault = sb_rank_mutant_fault_kind(m);
    }
    return st;
}
