/* The numerics mode (`samebits numerics`): at every probe of a kernel op,
 * the op is recomputed in double from its own float inputs (kernels/sb_refd.h) and
 * the float result is judged against the op's forward error bound; the first
 * non-finite value of the run is reported with the op and inputs that made
 * it. The output formats are in NUMERICS.md. */
#ifndef SB_NUMERICS_H
#define SB_NUMERICS_H

#include "sb_harness.h"

/* ---- judging probes ---------------------------------------------------------- */

/* What one probe looked like against its double value. */
typedef struct sb_numerics_probe {
    int64_t step;
    char name[96];
    char op[32];
    size_t count;               /* elements */
    double max_abs, max_rel, max_ulp;   /* of the float result against the double value
                                         * (an int32 index: max_ulp its largest distance) */
    double ratio;               /* max over elements of |error| / bound; inf for an error where the bound is 0 */
    size_t worst;               /* the element with the largest ratio */
    double got;                 /* at worst: the float result (or index), */
    double expect;              /* the double value, */
    double bound;               /* and its bound */
    char inputs[320];           /* the inputs of element worst, when ratio > 1 */
} sb_numerics_probe;

typedef struct sb_numerics_nonfinite {
    bool found;
    int64_t step;
    char name[96];
    char op[32];
    size_t index;               /* first non-finite element */
    float value;
    bool have_expect;           /* the op was evaluated in double: */
    double expect;              /* its value there */
    char inputs[320];
} sb_numerics_nonfinite;

typedef struct sb_numerics_result {
    sb_family family;           /* the bounds are those of this family's algorithms */
    sb_numerics_probe *probes;  /* checked probes, in program order */
    size_t n_probes, cap_probes;
    size_t n_unchecked;         /* probes of ops not evaluated (optimisers, masks, others' ops) */
    size_t n_beyond;            /* checked probes with ratio > 1 */
    long first_beyond;          /* index in probes of the first, or -1 */
    sb_numerics_nonfinite nonfinite;
    sb_status status;           /* first failure of the hook (out of memory) */
} sb_numerics_result;

void sb_numerics_result_init(sb_numerics_result *r, sb_family f);
void sb_numerics_result_free(sb_numerics_result *r);

/* The probe hook (ctx: sb_numerics_result). A probe is evaluated when its
 * bound is sb_op_call_bound, whose context is then the op call (that is how
 * the model and the kernel-case driver probe), and refd evaluates its op. */
sb_probe_fn sb_numerics_probe_fn;

/* Judges float results against double values and bounds, as the hook does:
 * for an op outside the kernel list (a test's own kernel). inputs_fn (may be
 * NULL) describes the inputs of an element for the report. */
typedef void sb_numerics_inputs_fn(char *buf, size_t len, const void *ctx, size_t index);
sb_status sb_numerics_check(sb_numerics_result *r, const sb_probe_point *p, const double *value,
                            const double *bound, sb_numerics_inputs_fn *inputs_fn,
                            const void *inputs_ctx);

/* ---- the [numerics] section of a case file --------------------------------------- */

typedef enum sb_numerics_finding {
    SB_FINDING_CLEAN,           /* every checked probe within bound, nothing non-finite */
    SB_FINDING_BEYOND_BOUND,    /* a probe's error above its bound, everything finite */
    SB_FINDING_NONFINITE,       /* a NaN or infinity appeared */
    SB_FINDING_COUNT
} sb_numerics_finding;

const char *sb_numerics_finding_name(sb_numerics_finding f);  /* "clean", "beyond-bound", "non-finite" */

typedef struct sb_numerics_case {
    char mutant[64];            /* "" for none */
    bool have_range[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    float lo[SB_OP_MAX_IN + SB_OP_MAX_OUT], hi[SB_OP_MAX_IN + SB_OP_MAX_OUT];
    sb_numerics_finding expect; /* default clean */
    char expect_probe[96];      /* "" for any */
} sb_numerics_case;

/* Reads the optional [numerics] section (syntax in NUMERICS.md); a file
 * without one gets the defaults. err: "path:line: expected ...". */
sb_status sb_numerics_case_load(sb_numerics_case *nc, const sb_case *c, char *err, size_t errlen);

/* ---- running a case ---------------------------------------------------------- */

typedef struct sb_numerics_golden {
    bool compared;              /* false: no golden, or the run is not the case's own */
    char why[128];              /* why not compared */
    sb_divergence div;          /* when compared */
} sb_numerics_golden;

/* Runs the case once in this process at `threads` with the family f (the
 * case's unless overridden), the case's mutant and input ranges, and fills r
 * and g. Kernel cases draw inputs as `samebits run` does (NUMERICS.md). */
sb_status sb_numerics_run_case(const sb_case *c, const sb_numerics_case *nc, sb_family f,
                               int threads, const char *data_dir, sb_numerics_result *r,
                               sb_numerics_golden *g, char *err, size_t errlen);

sb_numerics_finding sb_numerics_finding_of(const sb_numerics_result *r);
/* The probe name of the first finding (nonfinite first, else first beyond bound), or "". */
const char *sb_numerics_finding_probe(const sb_numerics_result *r);

/* ---- reports ------------------------------------------------------------------ */

typedef struct sb_numerics_case_report {
    const sb_case *c;
    const sb_numerics_case *nc;
    const sb_numerics_result *r;
    const sb_numerics_golden *g;
    int threads;
    bool as_expected;
} sb_numerics_case_report;

void sb_numerics_report_text(FILE *f, const sb_numerics_case_report *cr, bool all_probes);
sb_status sb_numerics_report_json(const char *path, const sb_numerics_case_report *cr, int n);

#endif
