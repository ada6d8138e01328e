/* Judging a decode trace against the reference (decode.h): the first
 * divergence and the origins from the traces (judge/), each located origin's
 * elements against its op's reordering bound, computed from the reference's
 * copies of its inputs by the op's own bound function. */
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"

/* The bound of record i of ref (a float per element; zeros: exact). */
static void rec_bound(float *bound, const sb_decode_trace *ref, size_t i)
{
    const sb_decode_rec *r = &ref->recs[i];
    switch (r->kind) {
    case SB_DECODE_REC_SOURCE:
    case SB_DECODE_REC_KV:
        memset(bound, 0, r->count * sizeof *bound);
        return;
    case SB_DECODE_REC_ROW:
        sb_op_call_bound(bound, &r->call, 0);
        return;
    case SB_DECODE_REC_ATTN: {
        /* attention_fwd over positions 0..pos of one sequence: the keys and
         * values of the kv record, the query of the qkv record in the last
         * row (the other rows' queries are not read for the last row) */
        const sb_decode_rec *qkv = &ref->recs[r->qkv], *kv = &ref->recs[r->kv];
        const size_t C = r->count, t = (size_t)r->pos + 1;
        float *x = calloc(t * 3 * C, sizeof *x), *y = malloc(t * C * sizeof *y);
        SB_ASSERT(x != NULL && y != NULL);
        for (size_t j = 0; j < t; j++)
            memcpy(x + j * 3 * C + C, kv->data + j * 2 * C, 2 * C * sizeof *x);
        memcpy(x + (t - 1) * 3 * C, qkv->data, C * sizeof *x);
        sb_op_call c = {.op = SB_OP_attention_fwd, .attn = r->call.attn};
        sb_status st = sb_op_call_describe(&c);
        SB_ASSERT(st == SB_OK);
        c.in[0].data = x;
        c.out[0].data = y;
        sb_op_call_bound(y, &c, 0);
        memcpy(bound, y + (t - 1) * C, C * sizeof *bound);
        free(x);
        free(y);
        return;
    }
    }
}

/* Fills d's elements (ref against run at record i) and has them judged. */
static void locate(sb_divergence *d, const sb_decode_trace *ref, const sb_decode_trace *run)
{
    const sb_decode_rec *a = &ref->recs[d->index], *b = &run->recs[d->index];
    if (!a->data || !b->data || a->count != b->count)
        return; /* a source (never differs between paths) */
    float *bound = malloc(a->count * sizeof *bound);
    SB_ASSERT(bound != NULL);
    rec_bound(bound, ref, d->index);
    sb_elem_diff_f32(&d->elem, a->data, b->data, bound, a->count);
    d->have_elements = true;
    free(bound);
}

void sb_decode_judge(sb_decode_judgement *j, const sb_decode_trace *ref,
                     const sb_decode_trace *run)
{
    memset(j, 0, sizeof *j);
    sb_trace_compare(&ref->trace, &run->trace, &j->first);
    j->verdict = SB_VERDICT_IDENTICAL;
    if (!j->first.found)
        return;
    sb_divergence *list = malloc(SB_DECODE_ORIGINS_LOCATED * sizeof *list);
    SB_ASSERT(list != NULL);
    j->origins = sb_trace_origins_list(&ref->trace, &run->trace, 0, list,
                                       SB_DECODE_ORIGINS_LOCATED);
    j->located = j->origins < SB_DECODE_ORIGINS_LOCATED ? j->origins : SB_DECODE_ORIGINS_LOCATED;
    for (int i = 0; i < j->located; i++)
        locate(&list[i], ref, run);
    int w = sb_divergences_worst(list, j->located);
    if (w >= 0) {
        j->worst = list[w];
        j->verdict = sb_divergence_verdict(&j->worst);
    } else {
        /* divergent, no origin among the records: structural */
        j->verdict = SB_VERDICT_BEYOND_BOUND;
    }
    free(list);
}

const char *sb_decode_rec_part(const char *name, int *pos)
{
    char *end;
    *pos = -1;
    if (name[0] != 'p')
        return name;
    long p = strtol(name + 1, &end, 10);
    if (end == name + 1 || *end != '.')
        return name;
    *pos = (int)p;
    return end + 1;
}

static long head_record(const sb_decode_trace *t, int pos)
{
    char name[SB_GPT_NAME_SIZE];
    snprintf(name, sizeof name, "p%d.head", pos);
    return sb_trace_find_latest(&t->trace, name, t->trace.n_records);
}

size_t sb_decode_argmax(const float *x, size_t n)
{
    size_t m = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > x[m])
            m = i;
    return m;
}

double sb_decode_logit_diff(const sb_decode_trace *ref, const sb_decode_trace *run, int pos,
                            bool *argmax_differs)
{
    long a = head_record(ref, pos), b = head_record(run, pos);
    *argmax_differs = false;
    if (a < 0 || b < 0)
        return 0.0;
    const sb_decode_rec *x = &ref->recs[a], *y = &run->recs[b];
    double m = 0.0;
    for (size_t i = 0; i < x->count; i++) {
        double d = (double)x->data[i] - (double)y->data[i];
        if (d < 0)
            d = -d;
        if (d > m)
            m = d;
    }
    *argmax_differs =
        sb_decode_argmax(x->data, x->count) != sb_decode_argmax(y->data, y->count);
    return m;
}
