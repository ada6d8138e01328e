/* Locating a divergence: re-run the reference configuration and the
 * diverging one as children that dump the divergent probe, check that each
 * re-run reproduces the hash it stands for, then diff the dumped elements
 * against the op's reordering bound. */
#include <stdlib.h>
#include <string.h>

#include "judge/judge.h"
#include "support/support.h"

static bool reference_fits(const sb_locate_reference *r, const sb_divergence *d)
{
    return r && r->made && r->index == d->index && r->step == d->step &&
           strcmp(r->probe, d->probe) == 0 && sb_hash_equal(&r->golden_hash, &d->golden_hash);
}

static void reference_keep(sb_locate_reference *r, const sb_divergence *d,
                           const char *work_dir, bool reproduced)
{
    if (!r || strlen(work_dir) >= sizeof r->work_dir)
        return;
    *r = (sb_locate_reference){.made = true, .index = d->index, .step = d->step,
                               .golden_hash = d->golden_hash, .reproduced = reproduced};
    snprintf(r->probe, sizeof r->probe, "%s", d->probe);
    snprintf(r->work_dir, sizeof r->work_dir, "%s", work_dir);
}

sb_locate_reference *sb_locate_reference_pick(sb_locate_reference *slots, int n,
                                              const sb_divergence *d)
{
    for (int i = 0; i < n; i++)
        if (reference_fits(&slots[i], d))
            return &slots[i];
    for (int i = 0; i < n; i++)
        if (!slots[i].made)
            return &slots[i];
    return &slots[n - 1];
}

sb_status sb_locate(const sb_case *c, const char *self_exe, int threads,
                    const char *work_dir, sb_locate_reference *reference, sb_divergence *d,
                    char *err, size_t errlen)
{
    if (!d->found || d->structural) {
        sb_err_set(err, errlen, "%s: nothing to locate (%s)", c->path,
                   d->found ? "the probe sequence differs" : "no divergence");
        return SB_ERR_USAGE;
    }
    if (strlen(self_exe) >= 1024) {
        sb_err_set(err, errlen, "%s: path of the samebits executable too long", c->path);
        return SB_ERR_USAGE;
    }
    sb_rerun ref, run;
    bool reuse = reference_fits(reference, d);
    /* on the batch axis the reference is the run at the reference batch
     * size; the reference of a rank configuration is one rank, one process */
    sb_case *ref_case = malloc(sizeof *ref_case);
    if (!ref_case)
        return SB_ERR_NOMEM;
    *ref_case = *c;
    ref_case->run_batch = c->run_batch > 0 ? c->reference_batch : 0;
    ref_case->run_ranks = 0;
    /* a run at the reference thread count (a repeat that diverged from the
     * golden) re-runs in <threads>.again so the two do not collide */
    sb_status st = sb_rerun_paths(&ref, reuse ? reference->work_dir : work_dir,
                                  c->reference_threads, "", d->probe, err, errlen);
    if (st == SB_OK)
        st = sb_rerun_paths(&run, work_dir, threads,
                            threads == c->reference_threads ? ".again" : "", d->probe, err,
                            errlen);
    bool ref_ok = reuse && reference->reproduced;
    if (st == SB_OK && !reuse) {
        /* once: the reference configuration's own repeats are the sweep's
         * to compare, and one that differs from the golden here (a mutant
         * whose fault is there at every count) would differ every time */
        sb_trace t;
        const sb_record *rec = NULL;
        st = sb_rerun_once(&ref, ref_case, self_exe, d, &t, &rec, err, errlen);
        ref_ok = st == SB_OK && sb_hash_equal(&rec->hash, &d->golden_hash);
        sb_trace_free(&t);
        if (st == SB_OK)
            reference_keep(reference, d, work_dir, ref_ok);
    }
    d->reference_unreproduced = st == SB_OK && !ref_ok;
    bool run_ok = false;
    if (st == SB_OK)
        st = sb_rerun_reproduce(&run, c, self_exe, d, &d->run_hash, &d->reruns, &run_ok, err,
                                errlen);
    /* a re-run with other bits than the run it stands for explains nothing */
    d->nondeterministic = st == SB_OK && !run_ok;
    if (st == SB_OK && ref_ok && run_ok) {
        st = sb_rerun_dumps_diff(&ref, &run, &d->elem, err, errlen);
        d->have_elements = st == SB_OK;
    }
    free(ref_case);
    return st;
}
