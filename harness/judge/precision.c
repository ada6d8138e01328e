/* The precision test (precision.h): the run's error against double
 * precision, element by element, against the reordering threshold. */
#include <math.h>
#include <stdio.h>

#include "judge/precision.h"

void sb_elem_precision(sb_elem_diff *e, const float *golden_err, const float *run_err,
                       const float *seq_err, const float *floor, size_t n)
{
    e->precision_tested = true;
    e->precision_ratio = 0.0;
    e->precision_index = 0;
    e->precision_run_err = e->precision_golden_err = e->precision_threshold = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double er = (double)run_err[i], eg = (double)golden_err[i],
                     es = (double)seq_err[i], fl = (double)floor[i];
        /* an element whose error is the golden's or the serial kernel's
         * (their bits, as a rule) is no evidence either way, and would only
         * put 1 / F in the statistic */
        if (!isfinite(er) || !isfinite(eg) || !isfinite(es) || !isfinite(fl) ||
            !(er < eg || er > eg) || !(er < es || er > es))
            continue;
        const double threshold = fmax(fl, SB_PRECISION_FACTOR * fmax(eg, es));
        const double ratio = er > 0.0 ? (threshold > 0.0 ? er / threshold : HUGE_VAL) : 0.0;
        if (ratio > e->precision_ratio) {
            e->precision_ratio = ratio;
            e->precision_index = i;
            e->precision_run_err = er;
            e->precision_golden_err = eg;
            e->precision_threshold = threshold;
        }
    }
}

bool sb_elem_precision_lost(const sb_elem_diff *e)
{
    return e->precision_tested && e->precision_ratio > 1.0;
}

void sb_elem_precision_text(char *out, size_t len, const sb_elem_diff *e)
{
    if (!e->precision_tested)
        snprintf(out, len, "%s", "");
    else if (!sb_elem_precision_lost(e))
        snprintf(out, len, ", precision ratio %.3g", e->precision_ratio);
    else
        snprintf(out, len,
                 ", precision loss: element %zu's error against double precision is %.3g, "
                 "the golden's %.3g, %.3g times the largest a float reordering gives "
                 "(%.3g: harness/NUMERICS.md)",
                 e->precision_index, e->precision_run_err, e->precision_golden_err,
                 e->precision_ratio, e->precision_threshold);
}
