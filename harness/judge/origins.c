/* The origins of a run's divergence: every divergent probe whose input
 * probes are all identical to the golden's, found from the two traces'
 * hashes and input lists alone, and the worst of those located. */
#include <string.h>

#include "judge/judge.h"

int sb_trace_origins_list_from_step(const sb_trace *golden, const sb_trace *run, int64_t from,
                                    int64_t steps, sb_divergence *out, int cap)
{
    int count = 0;
    sb_trace g = steps > 0 ? sb_trace_steps_view(golden, steps) : *golden;
    sb_trace r = steps > 0 ? sb_trace_steps_view(run, steps) : *run;
    size_t common = g.n_records < r.n_records ? g.n_records : r.n_records;
    for (size_t i = from > 0 ? sb_trace_first_of_step(&g, &r, from) : 0; i < common; i++) {
        const sb_record *a = &g.records[i], *b = &r.records[i];
        /* past a structural difference the records no longer line up */
        if (!sb_records_same_place(a, b))
            break;
        if (sb_hash_equal(&a->hash, &b->hash))
            continue;
        sb_divergence d;
        sb_divergence_at(&d, &g, &r, i);
        if (!d.inputs_identical)
            continue;   /* it descends from a divergence upstream */
        if (count < cap)
            out[count] = d;
        count++;
    }
    return count;
}

int sb_trace_origins_list(const sb_trace *golden, const sb_trace *run, int64_t steps,
                          sb_divergence *out, int cap)
{
    return sb_trace_origins_list_from_step(golden, run, 0, steps, out, cap);
}

void sb_trace_origins_from_step(const sb_trace *golden, const sb_trace *run, int64_t from,
                                int64_t steps, sb_origins *o)
{
    memset(o, 0, sizeof *o);
    o->worst = -1;
    o->count = sb_trace_origins_list_from_step(golden, run, from, steps, o->list,
                                               SB_ORIGINS_KEPT);
    o->n = o->count < SB_ORIGINS_KEPT ? o->count : SB_ORIGINS_KEPT;
}

void sb_trace_origins(const sb_trace *golden, const sb_trace *run, int64_t steps,
                      sb_origins *o)
{
    sb_trace_origins_from_step(golden, run, 0, steps, o);
}

/* Whether origin a is worse than origin b. */
static bool worse(const sb_divergence *a, const sb_divergence *b)
{
    int ra = sb_verdict_rank(sb_divergence_verdict(a)),
        rb = sb_verdict_rank(sb_divergence_verdict(b));
    if (ra != rb)
        return ra > rb;
    return a->have_elements && (!b->have_elements || a->elem.bound_ratio > b->elem.bound_ratio);
}

int sb_divergences_worst(const sb_divergence *list, int n)
{
    int w = -1;
    for (int i = 0; i < n; i++)
        if (w < 0 || worse(&list[i], &list[w]))
            w = i;
    return w;
}

void sb_origins_rank(sb_origins *o)
{
    o->worst = sb_divergences_worst(o->list, o->located < o->n ? o->located : o->n);
}

const sb_divergence *sb_origins_worst(const sb_origins *o)
{
    return o->worst >= 0 && o->worst < o->n && o->worst < o->located ? &o->list[o->worst]
                                                                      : NULL;
}
