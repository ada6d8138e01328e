/* The probe graph of a trace: every input a record names is the name of an
 * earlier record (or SB_TRACE_UNTRACED), no two records of one step have the
 * same name, and every record has an op. A misspelt input, a step left out
 * of a probe or an op left unset would otherwise be written into a golden
 * and show up only as an odd verdict later. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "sb_harness.h"
#include "support/support.h"

/* An open-addressing set of (step, name); step INT64_MIN for a name alone. */
typedef struct name_set {
    struct slot {
        int64_t step;
        const char *name;       /* NULL: empty; a record's own name */
    } *slots;
    size_t cap;                 /* a power of two, at least twice the members */
} name_set;

static size_t slot_of(const name_set *s, int64_t step, const char *name)
{
    size_t i = (size_t)(XXH3_64bits(name, strlen(name)) ^ (uint64_t)step * 0x9e3779b97f4a7c15u);
    for (i &= s->cap - 1;; i = (i + 1) & (s->cap - 1)) {
        const struct slot *sl = &s->slots[i];
        if (!sl->name || (sl->step == step && strcmp(sl->name, name) == 0))
            return i;
    }
}

static bool set_has(const name_set *s, int64_t step, const char *name)
{
    return s->slots[slot_of(s, step, name)].name != NULL;
}

static void set_add(name_set *s, int64_t step, const char *name)
{
    s->slots[slot_of(s, step, name)] = (struct slot){step, name};
}

sb_status sb_trace_check_graph(const sb_trace *t, bool external_inputs, FILE *warn, char *err,
                               size_t errlen)
{
    size_t cap = 16;
    while (cap < 4 * t->n_records + 4)
        cap *= 2;
    name_set names = {calloc(cap, sizeof *names.slots), cap};
    name_set in_step = {calloc(cap, sizeof *in_step.slots), cap};
    sb_status st = names.slots && in_step.slots ? SB_OK : SB_ERR_NOMEM;
    for (size_t r = 0; st == SB_OK && r < t->n_records; r++) {
        const sb_record *rec = &t->records[r];
        long long step = (long long)rec->step;
        if (!rec->op || rec->op[0] == '\0') {
            sb_err_set(err, errlen, "step %lld probe %s: no op (the op's name, or \"source\")",
                       step, rec->name);
            st = SB_ERR_INPUT;
            break;
        }
        if (set_has(&in_step, rec->step, rec->name)) {
            sb_err_set(err, errlen, "step %lld probe %s: a second probe of that name in the "
                       "step (is its step right?)", step, rec->name);
            st = SB_ERR_INPUT;
            break;
        }
        for (int i = 0; i < rec->n_inputs && st == SB_OK; i++) {
            const char *in = rec->inputs[i];
            if (strcmp(in, SB_TRACE_UNTRACED) == 0 || set_has(&names, INT64_MIN, in))
                continue;
            char what[512];
            snprintf(what, sizeof what, "step %lld probe %.160s: input %.160s is no earlier "
                     "probe of the run (misspelt, or never probed?)", step, rec->name, in);
            if (!external_inputs) {
                sb_err_set(err, errlen, "%s", what);
                st = SB_ERR_INPUT;
            } else if (warn) {
                fprintf(warn, "warning: %s\n", what);
            }
        }
        set_add(&in_step, rec->step, rec->name);
        set_add(&names, INT64_MIN, rec->name);
    }
    if (st == SB_ERR_NOMEM)
        sb_err_set(err, errlen, "the probe graph: out of memory");
    free(names.slots);
    free(in_step.slots);
    return st;
}
