/* Locating divergences: re-run the reference configuration and the
 * diverging one as children that dump every divergent probe asked for (one
 * re-run for all of them), check that each re-run reproduces the hash it
 * stands for at each, then diff the dumped elements against the op's
 * reordering bound. */
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

typedef char work_path[sizeof ((sb_locate_reference *)0)->work_dir];

/* The reference re-run of ds: each divergence an earlier reference re-run
 * in refs dumped reads that one's dumps; the others are dumped by one re-run
 * made here, in work_dir, and kept in refs (a copy: keeping one may take
 * the slot another divergence was read from). ref_dir[i] is the work_dir of
 * ds[i]'s reference dumps, ref_ok[i] whether it reproduced the golden. */
static sb_status reference_rerun(const sb_case *c, const char *self_exe, const char *work_dir,
                                 sb_locate_reference *refs, int n_refs,
                                 sb_divergence *const *ds, int n, work_path *ref_dir,
                                 bool *ref_ok, char *err, size_t errlen)
{
    sb_divergence **need = malloc((size_t)n * sizeof *need);
    int *need_at = malloc((size_t)n * sizeof *need_at);     /* need[k] is ds[need_at[k]] */
    if (!need || !need_at) {
        free(need);
        free(need_at);
        return SB_ERR_NOMEM;
    }
    int n_need = 0;
    for (int i = 0; i < n; i++) {
        sb_locate_reference *r = NULL;
        for (int k = 0; k < n_refs && !r; k++)
            if (reference_fits(&refs[k], ds[i]))
                r = &refs[k];
        snprintf(ref_dir[i], sizeof ref_dir[i], "%s", r ? r->work_dir : work_dir);
        ref_ok[i] = r && r->reproduced;
        if (!r) {
            need_at[n_need] = i;
            need[n_need++] = ds[i];
        }
    }
    sb_status st = SB_OK;
    if (n_need > 0) {
        /* on the batch axis the reference is the run at the reference batch
         * size (in the configuration's environment); the reference of a rank
         * configuration is one rank, one process; of a resumed one, the run
         * that never stopped; of any other, the golden's configuration, in the
         * sweep's own environment */
        sb_case *ref_case = malloc(sizeof *ref_case);
        st = ref_case ? SB_OK : SB_ERR_NOMEM;
        if (st == SB_OK) {
            *ref_case = *c;
            ref_case->run_batch = c->run_batch > 0 ? c->reference_batch : 0;
            ref_case->run_ranks = 0;
            if (c->run_batch == 0)
                ref_case->n_run_env = 0;
            ref_case->run_resume_at = 0;
        }
        sb_rerun ref;
        if (st == SB_OK)
            st = sb_rerun_paths(&ref, work_dir, c->reference_threads, "", err, errlen);
        /* once: the reference configuration's own repeats are the sweep's
         * to compare, and one that differs from the golden here (a mutant
         * whose fault is there at every count) would differ every time */
        sb_trace t;
        sb_trace_init(&t);
        if (st == SB_OK)
            st = sb_rerun_once(&ref, ref_case, self_exe, need, n_need, &t, err, errlen);
        for (int k = 0; st == SB_OK && k < n_need; k++) {
            int i = need_at[k];
            ref_ok[i] = sb_rerun_has(&t, ds[i], &ds[i]->golden_hash);
            if (n_refs > 0)
                reference_keep(sb_locate_reference_pick(refs, n_refs, ds[i]), ds[i], work_dir,
                               ref_ok[i]);
        }
        sb_trace_free(&t);
        free(ref_case);
    }
    free(need);
    free(need_at);
    return st;
}

/* The directory suffix of try k (0-based) at `threads`: a run at the
 * reference thread count (a repeat that diverged from the golden) re-runs in
 * <threads>.again so the two do not collide; each later try has its own
 * directory (.try<k+1>), so the dumps of one that reproduced a divergence
 * stay. */
static void run_suffix(char *out, size_t len, const sb_case *c, int threads, int k)
{
    const char *again = threads == c->reference_threads ? ".again" : "";
    if (k > 0)
        snprintf(out, len, "%s.try%d", again, k + 1);
    else
        snprintf(out, len, "%s", again);
}

/* The re-runs at `threads`, up to SB_LOCATE_TRIES, each dumping the
 * divergences no earlier one reproduced, until each has been: run_try[i] is
 * the try (0-based) whose re-run reproduced ds[i]'s run hash, -1 for none. */
static sb_status run_reruns(const sb_case *c, const char *self_exe, int threads,
                            const char *work_dir, sb_divergence *const *ds, int n,
                            int *run_try, char *err, size_t errlen)
{
    sb_divergence **left = malloc((size_t)n * sizeof *left);
    if (!left)
        return SB_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        run_try[i] = -1;
    sb_status st = SB_OK;
    int n_left = n;
    for (int k = 0; st == SB_OK && n_left > 0 && k < SB_LOCATE_TRIES; k++) {
        n_left = 0;
        for (int i = 0; i < n; i++)
            if (run_try[i] < 0)
                left[n_left++] = ds[i];
        if (n_left == 0)
            break;
        char suffix[24];
        run_suffix(suffix, sizeof suffix, c, threads, k);
        sb_rerun run;
        sb_trace t;
        sb_trace_init(&t);
        st = sb_rerun_paths(&run, work_dir, threads, suffix, err, errlen);
        if (st == SB_OK)
            st = sb_rerun_once(&run, c, self_exe, left, n_left, &t, err, errlen);
        for (int i = 0; st == SB_OK && i < n; i++) {
            if (run_try[i] >= 0)
                continue;
            ds[i]->reruns = k + 1;
            if (sb_rerun_has(&t, ds[i], &ds[i]->run_hash))
                run_try[i] = k;
        }
        sb_trace_free(&t);
        n_left = 0;
        for (int i = 0; i < n; i++)
            n_left += run_try[i] < 0;
    }
    free(left);
    return st;
}

sb_status sb_locate_all(const sb_case *c, const char *self_exe, int threads,
                        const char *work_dir, sb_locate_reference *refs, int n_refs,
                        sb_divergence *const *ds, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++)
        if (!ds[i]->found || ds[i]->structural) {
            sb_err_set(err, errlen, "%s: nothing to locate (%s)", c->path,
                       ds[i]->found ? "the probe sequence differs" : "no divergence");
            return SB_ERR_USAGE;
        }
    if (strlen(self_exe) >= 1024) {
        sb_err_set(err, errlen, "%s: path of the samebits executable too long", c->path);
        return SB_ERR_USAGE;
    }
    if (n == 0)
        return SB_OK;
    work_path *ref_dir = malloc((size_t)n * sizeof *ref_dir);
    bool *ref_ok = malloc((size_t)n * sizeof *ref_ok);
    int *run_try = malloc((size_t)n * sizeof *run_try);
    sb_status st = ref_dir && ref_ok && run_try ? SB_OK : SB_ERR_NOMEM;
    if (st == SB_OK)
        st = reference_rerun(c, self_exe, work_dir, refs, n_refs, ds, n, ref_dir, ref_ok, err,
                             errlen);
    if (st == SB_OK)
        st = run_reruns(c, self_exe, threads, work_dir, ds, n, run_try, err, errlen);
    for (int i = 0; st == SB_OK && i < n; i++) {
        sb_divergence *d = ds[i];
        d->reference_unreproduced = !ref_ok[i];
        /* a re-run with other bits than the run it stands for explains nothing */
        d->nondeterministic = run_try[i] < 0;
        if (!ref_ok[i] || run_try[i] < 0)
            continue;
        sb_rerun ref, run;
        char suffix[24];
        run_suffix(suffix, sizeof suffix, c, threads, run_try[i]);
        st = sb_rerun_paths(&ref, ref_dir[i], c->reference_threads, "", err, errlen);
        if (st == SB_OK)
            st = sb_rerun_paths(&run, work_dir, threads, suffix, err, errlen);
        if (st == SB_OK)
            st = sb_rerun_dumps_diff(&ref, &run, d, &d->elem, err, errlen);
        d->have_elements = st == SB_OK;
    }
    free(ref_dir);
    free(ref_ok);
    free(run_try);
    return st;
}

sb_status sb_locate(const sb_case *c, const char *self_exe, int threads,
                    const char *work_dir, sb_locate_reference *reference, sb_divergence *d,
                    char *err, size_t errlen)
{
    return sb_locate_all(c, self_exe, threads, work_dir, reference, reference ? 1 : 0, &d, 1,
                         err, errlen);
}
