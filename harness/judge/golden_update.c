/* A golden replaced by a new reference trace, only when asked, and what
 * that changes: the one way `samebits golden` and a user's program
 * (`PROG golden`) write goldens. An unchanged golden is not rewritten, so
 * its file (and its build line) stays as it was committed; a changed one
 * only with SB_GOLDEN_MODE_UPDATE, or SB_GOLDEN_MODE_REORDERING when every
 * change can be a reordering; another case's golden never. */
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "judge/judge.h"
#include "support/support.h"

sb_status sb_case_golden_read(sb_trace *t, const sb_case *c, char *err, size_t errlen)
{
    /* a golden that is there but stale is rewritten only when asked */
    char regenerate[1100];
    snprintf(regenerate, sizeof regenerate, "samebits golden %s%s",
             access(c->golden_path, F_OK) == 0 ? "--update " : "", c->path);
    return sb_golden_read_hinted(t, c->golden_path, c->digest, regenerate, err, errlen);
}

/* Appends to out (a line being built at *at). */
__attribute__((format(printf, 4, 5)))
static void say(char *out, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *at, len - *at, fmt, ap);
    va_end(ap);
    *at += n > 0 ? (size_t)n : 0;
}

/* Every origin of the change, each called a possible reordering (its op has
 * a reduction, or is a user's own, so a new summation order can move it;
 * the golden keeps hashes, not elements, so its bound cannot be checked) or
 * beyond bound (an op with no reduction, or a probe made from no input: no
 * order can move it). True when every change is a
 * possible reordering: no structural difference, no divergence that
 * descends from no origin, every origin listed and none beyond bound. */
static bool origins_describe(char *out, size_t len, size_t *at, const sb_trace *old,
                             const sb_trace *t, const sb_divergence *first)
{
    if (first->structural) {
        say(out, len, at, "; the probe sequence differs (beyond bound)");
        return false;
    }
    sb_origins o;
    sb_trace_origins(old, t, 0, &o);
    bool reordering = o.n > 0 && o.count == o.n && o.list[0].index == first->index;
    say(out, len, at, "; %d origin%s:", o.count, o.count == 1 ? "" : "s");
    for (int i = 0; i < o.n; i++) {
        const sb_divergence *d = &o.list[i];
        /* a probe made from no input is an input of the run itself */
        bool source = t->records[d->index].n_inputs == 0;
        bool exact = source || sb_op_name_exact(d->op);
        reordering = reordering && !exact;
        say(out, len, at, "%s %s at step %lld %s (%s)", i ? "," : "",
            source ? "beyond bound (an input of the run)"
            : exact ? "beyond bound" : "possible reordering", (long long)d->step, d->probe,
            d->op);
    }
    if (o.count > o.n)
        say(out, len, at, ", and %d more not classified", o.count - o.n);
    if (o.list[0].index != first->index || o.n == 0)
        say(out, len, at, "; the first change (step %lld %s) has inputs that changed or "
            "were not traced", (long long)first->step, first->probe);
    return reordering;
}

sb_status sb_golden_update(const sb_trace *t, const char *path, sb_golden_mode mode,
                           sb_golden_outcome *outcome, char *said, size_t saidlen, char *err,
                           size_t errlen)
{
    size_t at = 0;
    said[0] = '\0';
    if (access(path, F_OK) != 0) {
        *outcome = SB_GOLDEN_NEW;
        say(said, saidlen, &at, "new (%zu probes)", t->n_records);
        if (mode == SB_GOLDEN_MODE_CHECK) {
            *outcome = SB_GOLDEN_CHANGED;
            say(said, saidlen, &at, ", not written (--check)");
            return SB_OK;
        }
        return sb_golden_write(t, path, err, errlen);
    }
    sb_trace old;
    sb_trace_init(&old);
    sb_status st = sb_trace_read(&old, path, err, errlen);
    if (st != SB_OK && mode != SB_GOLDEN_MODE_UPDATE) {
        size_t used = strlen(err);
        sb_err_set(err + used, errlen - used, "; the old golden does not read: only --update "
                   "replaces it");
        return st;
    }
    if (st == SB_OK && strcmp(old.header.case_name, t->header.case_name) != 0) {
        sb_err_set(err, errlen, "%s: the golden of case %s, not of %s: never rewritten "
                   "(give %s a golden of its own)", path, old.header.case_name,
                   t->header.case_name, t->header.case_name);
        sb_trace_free(&old);
        return SB_ERR_INPUT;
    }
    bool reordering = false, changed = true;
    if (st != SB_OK) {
        say(said, saidlen, &at, "changed: the old golden did not read (%s)", err);
    } else {
        sb_divergence d;
        sb_trace_compare(&old, t, &d);
        bool same_case = strcmp(old.header.case_digest, t->header.case_digest) == 0;
        if (d.found) {
            say(said, saidlen, &at, "changed: first at step %lld probe %s%s", (long long)d.step,
                d.probe, d.structural ? " (probe sequence differs)" : "");
            reordering = origins_describe(said, saidlen, &at, &old, t, &d);
        } else if (old.n_records != t->n_records) {
            say(said, saidlen, &at, "changed: %zu probes, were %zu", t->n_records,
                old.n_records);
        } else if (!same_case) {
            say(said, saidlen, &at, "changed: the case (digest %s, was %s), not its bits",
                t->header.case_digest, old.header.case_digest);
        } else {
            say(said, saidlen, &at, "unchanged (%zu probes)", t->n_records);
            changed = false;
        }
    }
    sb_trace_free(&old);
    *outcome = changed ? SB_GOLDEN_CHANGED : SB_GOLDEN_UNCHANGED;
    if (!changed)
        return SB_OK;
    switch (mode) {
    case SB_GOLDEN_MODE_CHECK:
        say(said, saidlen, &at, "; not written (--check)");
        return SB_OK;
    case SB_GOLDEN_MODE_NEW:
        say(said, saidlen, &at, "; not written: rewrite it with --update");
        return SB_OK;
    case SB_GOLDEN_MODE_REORDERING:
        if (!reordering) {
            say(said, saidlen, &at, "; not written: --update=reordering takes reorderings "
                "only");
            return SB_OK;
        }
        break;
    case SB_GOLDEN_MODE_UPDATE:
        break;
    }
    st = sb_golden_write(t, path, err, errlen);
    if (st == SB_OK) {
        *outcome = SB_GOLDEN_UPDATED;
        say(said, saidlen, &at, "; rewritten");
    }
    return st;
}

/* input error, then crash, then a golden changed and not written */
static int exit_rank(int rc)
{
    return rc == SB_EXIT_INPUT ? 3 : rc == SB_EXIT_CRASH ? 2 : rc == SB_EXIT_UNEXPECTED;
}

int sb_golden_exit_worst(int a, int b)
{
    return exit_rank(b) > exit_rank(a) ? b : a;
}
