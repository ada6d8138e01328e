/* Run-to-run checks: the repeats of one configuration compared with each
 * other, and the probe where they part located by re-running that
 * configuration until two re-runs part there too. */
#include <string.h>

#include "judge/judge.h"
#include "support/support.h"

bool sb_repeats_compare(sb_run_result *runs, const sb_trace *const *traces, int n,
                        int64_t max_steps)
{
    int base = -1;      /* the first repeat that left a trace */
    for (int i = 0; i < n && base < 0; i++)
        if (traces[i])
            base = i;
    bool parted = false;
    for (int i = base + 1; base >= 0 && i < n; i++) {
        if (!traces[i])
            continue;
        sb_divergence d;
        if (max_steps > 0)
            sb_trace_compare_steps(traces[base], traces[i], max_steps, &d);
        else
            sb_trace_compare(traces[base], traces[i], &d);
        if (!d.found)
            continue;
        parted = true;
        runs[i].repeats_part = d;
        runs[i].repeats_with = runs[base].repeat;
        /* the base run parts from the others where the earliest of them does */
        if (runs[base].repeats_with == 0 || d.index < runs[base].repeats_part.index) {
            runs[base].repeats_part = d;
            runs[base].repeats_with = runs[i].repeat;
        }
    }
    return parted;
}

enum { REPEATS_RERUNS = 4 };   /* re-runs tried to find two that part at the probe */

sb_status sb_repeats_locate(const sb_case *c, const char *self_exe, int threads,
                            const char *work_dir, sb_divergence *d, char *err, size_t errlen)
{
    if (!d->found || d->structural) {
        sb_err_set(err, errlen, "%s: nothing to locate between repeats (%s)", c->path,
                   d->found ? "the probe sequence differs" : "no divergence");
        return SB_ERR_USAGE;
    }
    sb_rerun re[REPEATS_RERUNS];
    sb_trace t[REPEATS_RERUNS];
    int made = 0;
    sb_status st = SB_OK;
    d->reruns = 0;
    while (st == SB_OK && !d->have_elements && made < REPEATS_RERUNS) {
        char suffix[16];
        snprintf(suffix, sizeof suffix, ".r%d", made + 1);
        st = sb_rerun_paths(&re[made], work_dir, threads, suffix, err, errlen);
        if (st == SB_OK)
            st = sb_rerun_once(&re[made], c, self_exe, &d, 1, &t[made], err, errlen);
        else
            sb_trace_init(&t[made]);
        made++;
        d->reruns = made;
        /* two re-runs that agree up to the probe and part at it show the
         * elements of a run-to-run difference there */
        for (int j = 0; st == SB_OK && j < made - 1 && !d->have_elements; j++) {
            sb_divergence x;
            sb_trace_compare(&t[j], &t[made - 1], &x);
            if (!x.found || x.structural || x.index != d->index)
                continue;
            st = sb_rerun_dumps_diff(&re[j], &re[made - 1], d, &d->elem, err, errlen);
            d->have_elements = st == SB_OK;
        }
    }
    for (int j = 0; j < made; j++)
        sb_trace_free(&t[j]);
    return st;
}
