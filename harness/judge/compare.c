/* The first divergent probe of two traces, in program order. */
#include <string.h>

#include "judge/judge.h"
#include "sb_harness.h"

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

static bool same_shape(const sb_record *a, const sb_record *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return false;
    return true;
}

/* Whether the two records tap the same tensor of the same program point.
 * A dtype change counts too: the elements could not be compared. */
bool sb_records_same_place(const sb_record *a, const sb_record *b)
{
    return a->step == b->step && strcmp(str_or_empty(a->name), str_or_empty(b->name)) == 0
        && a->dtype == b->dtype && same_shape(a, b);
}

/* Whether record g or r lists an input no traced op made. */
static bool inputs_untraced(const sb_record *g, const sb_record *r)
{
    const sb_record *both[] = {g, r};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < both[t]->n_inputs; k++)
            if (strcmp(both[t]->inputs[k], SB_TRACE_UNTRACED) == 0)
                return true;
    return false;
}

/* Each input of record `index` (as the run names them) has, as its latest
 * earlier record, the same hash in both traces. The common prefix before
 * `index` may be shorter than `index` in one trace when a record is
 * missing, so each trace is searched only below its own length. An
 * untraced input has no record: nothing says it is the same. */
static bool inputs_identical(const sb_trace *golden, const sb_trace *run,
                             const sb_record *g, const sb_record *r, size_t index)
{
    if (g->n_inputs != r->n_inputs || inputs_untraced(g, r))
        return false;
    for (int k = 0; k < r->n_inputs; k++) {
        const char *name = r->inputs[k];
        if (strcmp(name, g->inputs[k]) != 0)
            return false;
        size_t gb = index < golden->n_records ? index : golden->n_records;
        size_t rb = index < run->n_records ? index : run->n_records;
        long gi = sb_trace_find_latest(golden, name, gb);
        long ri = sb_trace_find_latest(run, name, rb);
        if (gi < 0 || ri < 0)
            return false;
        if (!sb_hash_equal(&golden->records[gi].hash, &run->records[ri].hash))
            return false;
    }
    return true;
}

static void divergence_set(sb_divergence *d, const sb_record *rec, size_t index)
{
    d->found = true;
    d->index = index;
    d->step = rec->step;
    snprintf(d->probe, sizeof d->probe, "%s", str_or_empty(rec->name));
    snprintf(d->op, sizeof d->op, "%s", str_or_empty(rec->op));
}

void sb_divergence_at(sb_divergence *d, const sb_trace *golden, const sb_trace *run,
                      size_t index)
{
    const sb_record *g = &golden->records[index], *r = &run->records[index];
    memset(d, 0, sizeof *d);
    divergence_set(d, r, index);
    d->inputs_identical = inputs_identical(golden, run, g, r, index);
    d->inputs_untraced = inputs_untraced(g, r);
    d->golden_hash = g->hash;
    d->run_hash = r->hash;
}

/* The first divergence at record `first` or later; the records before it
 * are not compared, but an input of a later record is found among them. */
static void compare_from(const sb_trace *golden, const sb_trace *run, size_t first,
                         sb_divergence *d)
{
    memset(d, 0, sizeof *d);
    size_t common = golden->n_records < run->n_records ? golden->n_records : run->n_records;
    for (size_t i = first; i < common; i++) {
        const sb_record *g = &golden->records[i], *r = &run->records[i];
        bool place = sb_records_same_place(g, r);
        if (place && sb_hash_equal(&g->hash, &r->hash))
            continue;
        /* named after the run's record: that is the tensor the user has */
        sb_divergence_at(d, golden, run, i);
        d->structural = !place;
        return;
    }
    if (golden->n_records == run->n_records)
        return;
    /* one trace stops early: the first record only the longer one has */
    const sb_trace *longer = golden->n_records > run->n_records ? golden : run;
    const sb_record *rec = &longer->records[common];
    divergence_set(d, rec, common);
    d->structural = true;
    d->inputs_identical = inputs_identical(golden, run, rec, rec, common);
    d->inputs_untraced = inputs_untraced(rec, rec);
}

void sb_trace_compare(const sb_trace *golden, const sb_trace *run, sb_divergence *d)
{
    compare_from(golden, run, 0, d);
}

size_t sb_trace_records_before_step(const sb_trace *t, int64_t steps)
{
    size_t n = 0;
    while (n < t->n_records && t->records[n].step < steps)
        n++;
    return n;
}

size_t sb_trace_first_of_step(const sb_trace *golden, const sb_trace *run, int64_t from)
{
    size_t gb = sb_trace_records_before_step(golden, from);
    size_t rb = sb_trace_records_before_step(run, from);
    /* with as many records before step `from` in both, the first of `from`;
     * else the first record of `from` in one faces one of an earlier step
     * in the other, a structural difference */
    return gb < rb ? gb : rb;
}

void sb_trace_compare_from_step(const sb_trace *golden, const sb_trace *run, int64_t from,
                                int64_t steps, sb_divergence *d)
{
    sb_trace g = steps > 0 ? sb_trace_steps_view(golden, steps) : *golden;
    sb_trace r = steps > 0 ? sb_trace_steps_view(run, steps) : *run;
    compare_from(&g, &r, sb_trace_first_of_step(&g, &r, from), d);
}

sb_trace sb_trace_steps_view(const sb_trace *t, int64_t steps)
{
    /* a shallow view of the prefix: same records, fewer of them */
    sb_trace v = *t;
    v.n_records = sb_trace_records_before_step(t, steps);
    return v;
}

void sb_trace_compare_steps(const sb_trace *golden, const sb_trace *run, int64_t steps,
                            sb_divergence *d)
{
    sb_trace g = sb_trace_steps_view(golden, steps), r = sb_trace_steps_view(run, steps);
    sb_trace_compare(&g, &r, d);
}
