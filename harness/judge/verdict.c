/* Verdict names and sets, the verdict of a located divergence, and how a
 * run stands against its expectation. */
#include <stdio.h>
#include <string.h>

#include "judge/judge.h"
#include "judge/precision.h"

static const char *const verdict_names[SB_VERDICT_COUNT] = {
    [SB_VERDICT_IDENTICAL] = "identical",
    [SB_VERDICT_REORDERING] = "reordering",
    [SB_VERDICT_UNBOUNDED] = "unbounded",
    [SB_VERDICT_BEYOND_BOUND] = "beyond-bound",
    [SB_VERDICT_CRASH] = "crash",
    [SB_VERDICT_TIMEOUT] = "timeout",
    [SB_VERDICT_NONDETERMINISTIC] = "nondeterministic",
};

const char *sb_verdict_name(sb_verdict v)
{
    return (unsigned)v < SB_VERDICT_COUNT ? verdict_names[v] : "?";
}

sb_verdict sb_verdict_from_name(const char *name)
{
    return (sb_verdict)sb_name_index(verdict_names, SB_VERDICT_COUNT, name);
}

void sb_verdict_set_name(sb_verdict_set s, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int v = 0; v < SB_VERDICT_COUNT; v++)
        if ((s & SB_VERDICT_BIT(v)) && at < len) {
            int n = snprintf(out + at, len - at, "%s%s", at ? "|" : "", verdict_names[v]);
            at += n > 0 ? (size_t)n : 0;
        }
}

sb_verdict_set sb_verdict_set_from_name(const char *name)
{
    sb_verdict_set s = 0;
    for (const char *p = name;; p++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        char member[32];
        if (n == 0 || n >= sizeof member)
            return 0;
        memcpy(member, p, n);
        member[n] = '\0';
        sb_verdict v = sb_verdict_from_name(member);
        if (v == SB_VERDICT_COUNT)
            return 0;
        s |= SB_VERDICT_BIT(v);
        if (!bar)
            return s;
        p = bar;
    }
}

sb_verdict sb_verdict_set_first(sb_verdict_set s)
{
    SB_ASSERT(s != 0);
    int v = 0;
    while (!(s & SB_VERDICT_BIT(v)))
        v++;
    return (sb_verdict)v;
}

int sb_verdict_rank(sb_verdict v)
{
    switch (v) {
    case SB_VERDICT_IDENTICAL: return 0;
    case SB_VERDICT_REORDERING: return 1;
    case SB_VERDICT_UNBOUNDED: return 2;
    case SB_VERDICT_BEYOND_BOUND: return 3;
    case SB_VERDICT_NONDETERMINISTIC: return 4;
    case SB_VERDICT_CRASH:
    case SB_VERDICT_TIMEOUT:
    case SB_VERDICT_COUNT:
        break;
    }
    return 5;
}

sb_verdict sb_divergence_verdict(const sb_divergence *d)
{
    if (!d->found)
        return SB_VERDICT_IDENTICAL;
    if (d->nondeterministic)
        return SB_VERDICT_NONDETERMINISTIC;
    const sb_elem_diff *e = &d->elem;
    bool may_reorder = !d->structural && d->inputs_identical && d->have_elements
                       /* an op of the kernel list without a reduction computes
                        * every element the same way in any order; ops the list
                        * does not know (a user's own) are judged by the bound
                        * they dumped, and are unbounded when they dumped none */
                       && !sb_op_name_exact(d->op);
    /* with no bound even a NaN or Inf the other side lacks may be an
     * overflow of another summation order */
    if (may_reorder && !e->bounded)
        return SB_VERDICT_UNBOUNDED;
    /* an origin of an op that may reorder whose re-runs failed (a process
     * that did not start on a loaded machine): nothing measured it against
     * its bound, so a reordering cannot be told from a bug. (One whose
     * reference re-run did not give the golden's bits stays beyond-bound:
     * the golden's own configuration parts from it, as a mutant whose fault
     * is there at every thread count does.) */
    if (!d->structural && d->inputs_identical && !d->have_elements &&
        !d->reference_unreproduced && !sb_op_name_exact(d->op))
        return SB_VERDICT_UNBOUNDED;
    bool reordering = may_reorder && e->within_bound
                      /* a NaN or Inf the other side does not have */
                      && e->nonfinite_a == e->nonfinite_b
                      /* within the bound, but an error no float order of
                       * the op's sums makes (harness/NUMERICS.md) */
                      && !sb_elem_precision_lost(e);
    return reordering ? SB_VERDICT_REORDERING : SB_VERDICT_BEYOND_BOUND;
}

const sb_divergence *sb_run_unbounded_at(const sb_run_result *r)
{
    if (r->verdict != SB_VERDICT_UNBOUNDED)
        return NULL;
    const sb_divergence *w = sb_origins_worst(&r->origins);
    if (w && sb_divergence_verdict(w) == SB_VERDICT_UNBOUNDED)
        return w;
    return r->div.found && sb_divergence_verdict(&r->div) == SB_VERDICT_UNBOUNDED ? &r->div
                                                                                 : NULL;
}

void sb_unbounded_text(char *out, size_t len, const sb_divergence *d)
{
    if (!d->have_elements) {
        snprintf(out, len,
                 "the divergence in op %s (step %lld %s) was not measured against its bound: "
                 "the locator's re-runs failed (the run's message says why), so a reordering "
                 "cannot be told from a bug; sweep again, or `samebits locate` it",
                 d->op, (long long)d->step, d->probe);
        return;
    }
    snprintf(out, len,
             "no bound is known for op %s (step %lld %s): its elements differ and a "
             "reordering cannot be told from a bug; supply the op's bound (%s.bound.npy "
             "beside its dump, a bound function in C; zeros mark an exact op: "
             "harness/FORMATS.md) to judge it",
             d->op, (long long)d->step, d->probe, d->probe);
}

sb_outcome sb_run_outcome(const sb_run_result *r)
{
    if (r->verdict == r->expected || (r->expected_set & SB_VERDICT_BIT(r->verdict)))
        return SB_OUTCOME_AS_EXPECTED;
    if (r->max_steps > 0 && r->verdict == SB_VERDICT_IDENTICAL)
        return SB_OUTCOME_NOT_REACHED;
    return SB_OUTCOME_NOT_AS_EXPECTED;
}

void sb_run_expected_name(const sb_run_result *r, char *out, size_t len)
{
    if (r->expected_set == 0 || sb_run_outcome(r) == SB_OUTCOME_AS_EXPECTED)
        snprintf(out, len, "%s", sb_verdict_name(r->expected));
    else
        sb_verdict_set_name(r->expected_set, out, len);
}
