/* Element-wise differences between two dumps of one tensor: counts, the
 * largest absolute, relative and ULP differences, where they are, and how
 * they compare with the op's reordering bound. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "judge/precision.h"
#include "sb_harness.h"

static uint32_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* The float line as integers: +x -> magnitude bits, -x -> minus them, so
 * that +0 and -0 both land on 0 and adjacent floats are adjacent integers
 * (the infinities sit one past +-FLT_MAX). */
static int64_t float_line(float x)
{
    uint32_t u = float_bits(x);
    int64_t mag = (int64_t)(u & 0x7fffffffu);
    return (u & 0x80000000u) ? -mag : mag;
}

int64_t sb_ulp_distance(float a, float b)
{
    uint32_t ua = float_bits(a), ub = float_bits(b);
    if (ua == ub)
        return 0;
    if (isnan(a) || isnan(b))
        return INT64_MAX;
    int64_t d = float_line(a) - float_line(b);
    return d < 0 ? -d : d;
}

/* Bounded: integers are exact, and a float diff says whether it had one. */
static void diff_init(sb_elem_diff *d, size_t n)
{
    memset(d, 0, sizeof *d);
    d->total = n;
    d->within_bound = true;
    d->bounded = true;
}

/* Counts differing index i: it extends the current run when it follows the
 * previous differing index (*run_end), otherwise it starts a new range. */
static void diff_note_index(sb_elem_diff *d, size_t i, size_t *run_end)
{
    if (d->differing == 0)
        d->first_index = i;
    if (d->differing == 0 || *run_end != i) {
        if (d->n_ranges < 8)
            d->ranges[d->n_ranges][0] = i;
        d->n_ranges++;
    }
    d->differing++;
    *run_end = i + 1;
    if (d->n_ranges <= 8)
        d->ranges[d->n_ranges - 1][1] = i + 1;
}

/* Without a bound only identical bits are within it. */
static void diff_finish(sb_elem_diff *d)
{
    d->within_bound = d->bounded ? !(d->bound_ratio > 1.0) : d->differing == 0;
}

void sb_elem_diff_f32(sb_elem_diff *d, const float *a, const float *b,
                      const float *bound, size_t n)
{
    diff_init(d, n);
    d->bounded = bound != NULL;
    size_t run_end = 0;
    for (size_t i = 0; i < n; i++) {
        /* NaN and Inf first: they would poison every difference below */
        bool fa = isfinite(a[i]), fb = isfinite(b[i]);
        d->nonfinite_a += !fa;
        d->nonfinite_b += !fb;
        if (float_bits(a[i]) == float_bits(b[i]))
            continue;
        diff_note_index(d, i, &run_end);
        int64_t ulp = sb_ulp_distance(a[i], b[i]);
        double ulpd = ulp == INT64_MAX ? HUGE_VAL : (double)ulp;
        if (ulpd > d->max_ulp)
            d->max_ulp = ulpd;
        if (!fa || !fb) {
            d->max_abs = HUGE_VAL;
            d->max_rel = HUGE_VAL;
            d->bound_ratio = bound ? HUGE_VAL : 0.0;
            continue;
        }
        double x = (double)a[i], y = (double)b[i];
        double abs_diff = fabs(x - y);
        double scale = fmax(fabs(x), fabs(y));
        /* +0 vs -0 differ in bits but not in value: 0/0 counts as 0 */
        double rel = abs_diff > 0.0 ? abs_diff / scale : 0.0;
        if (abs_diff > d->max_abs)
            d->max_abs = abs_diff;
        if (rel > d->max_rel)
            d->max_rel = rel;
        if (!bound)
            continue;
        double bnd = (double)bound[i];
        /* a zero (or NaN) bound admits no change of bits at all */
        double ratio = bnd > 0.0 ? abs_diff / bnd : HUGE_VAL;
        if (ratio > d->bound_ratio)
            d->bound_ratio = ratio;
    }
    diff_finish(d);
}

/* Element i of two integer tensors, x != y. */
static void note_int(sb_elem_diff *d, size_t i, size_t *run_end, int64_t a, int64_t b)
{
    diff_note_index(d, i, run_end);
    double x = (double)a, y = (double)b;
    double abs_diff = fabs(x - y);
    double rel = abs_diff / fmax(fabs(x), fabs(y));
    if (abs_diff > d->max_abs)
        d->max_abs = abs_diff;
    if (rel > d->max_rel)
        d->max_rel = rel;
    /* integer steps are the integer's "ULPs" */
    if (abs_diff > d->max_ulp)
        d->max_ulp = abs_diff;
    d->bound_ratio = HUGE_VAL;
}

void sb_elem_diff_i32(sb_elem_diff *d, const int32_t *a, const int32_t *b, size_t n)
{
    diff_init(d, n);
    size_t run_end = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            note_int(d, i, &run_end, a[i], b[i]);
    diff_finish(d);
}

void sb_elem_diff_ints(sb_elem_diff *d, const sb_tensor *a, const sb_tensor *b)
{
    size_t n = sb_tensor_count(a);
    if (a->dtype != SB_DTYPE_I64) {
        sb_elem_diff_i32(d, a->data, b->data, n);
        return;
    }
    const int64_t *x = a->data, *y = b->data;
    diff_init(d, n);
    size_t run_end = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            note_int(d, i, &run_end, x[i], y[i]);
    diff_finish(d);
}

void sb_elem_bound_text(char *out, size_t len, const sb_elem_diff *e)
{
    char precision[320];
    sb_elem_precision_text(precision, sizeof precision, e);
    if (e->bounded)
        snprintf(out, len, "bound ratio %.3g%s", e->bound_ratio, precision);
    else
        snprintf(out, len, "no bound known");
}
