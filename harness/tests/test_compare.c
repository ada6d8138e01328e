/* sb_trace_compare on traces built in memory, and the verdict of each kind
 * of divergence. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "judge/judge.h"
#include "sb_harness.h"

Suite *make_compare_suite(void);

/* A tiny program: two sources, a dense op reading both, a relu reading the
 * dense output, over `steps` steps. `bump` changes the value of the record
 * named `bump_name` at step `bump_step` (NULL: none). */
typedef struct program {
    const char *bump_name;
    int64_t bump_step;
    const char *rename_from, *rename_to;   /* a different probe sequence */
    int64_t steps;
    int64_t width;                          /* of every tensor */
} program;

static void probe_add(sb_trace *t, const program *p, int64_t step, const char *name,
                      const char *op, const char *const *inputs, int n_inputs, float value)
{
    float data[8];
    ck_assert_int_le(p->width, 8);
    if (p->bump_name && strcmp(name, p->bump_name) == 0 && step == p->bump_step)
        value += 0.5f;
    for (int64_t i = 0; i < p->width; i++)
        data[i] = value + (float)i;
    if (p->rename_from && strcmp(name, p->rename_from) == 0)
        name = p->rename_to;
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {p->width}, .data = data};
    sb_probe_point pt = {.step = step, .name = name, .op = op, .tensor = &x,
                         .inputs = inputs, .n_inputs = n_inputs};
    ck_assert_int_eq(sb_trace_add_probe(t, &pt), SB_OK);
}

static void program_trace(sb_trace *t, const program *p)
{
    static const char *const dense_in[] = {"x", "w"};
    static const char *const relu_in[] = {"y"};
    sb_trace_init(t);
    for (int64_t s = 0; s < p->steps; s++) {
        probe_add(t, p, s, "x", "source", NULL, 0, (float)s);
        probe_add(t, p, s, "w", "source", NULL, 0, 10.0f);
        probe_add(t, p, s, "y", "dense_fwd", dense_in, 2, 20.0f + (float)s);
        probe_add(t, p, s, "z", "relu_fwd", relu_in, 1, 30.0f + (float)s);
    }
}

static const program plain = {.steps = 3, .width = 4};

START_TEST(compare_identical)
{
    sb_trace g, r;
    program_trace(&g, &plain);
    program_trace(&r, &plain);
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);
    ck_assert(!d.found);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_IDENTICAL);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

START_TEST(compare_hash_change_inputs_identical)
{
    program p = plain;
    p.bump_name = "y";
    p.bump_step = 1;
    sb_trace g, r;
    program_trace(&g, &plain);
    program_trace(&r, &p);
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);
    ck_assert(d.found);
    ck_assert_uint_eq(d.index, 6);      /* step 1, third record */
    ck_assert_int_eq(d.step, 1);
    ck_assert_str_eq(d.probe, "y");
    ck_assert_str_eq(d.op, "dense_fwd");
    ck_assert(d.inputs_identical);
    ck_assert(!d.structural);
    ck_assert(!d.have_elements);
    /* not located yet: no evidence of a reordering, nor of a bug in an op
     * with a reduction */
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_UNBOUNDED);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

/* A change upstream (a source at step 2) is reported where it enters, not
 * at the ops downstream whose inputs it changed. */
START_TEST(compare_upstream_change)
{
    program p = plain;
    p.bump_name = "w";
    p.bump_step = 2;
    sb_trace g, r;
    program_trace(&g, &plain);
    program_trace(&r, &p);
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);
    ck_assert(d.found);
    ck_assert_uint_eq(d.index, 9);
    ck_assert_str_eq(d.probe, "w");
    ck_assert_str_eq(d.op, "source");
    ck_assert(d.inputs_identical);      /* a source reads nothing */
    ck_assert(!d.structural);

    /* the dense op after it did read a changed input: comparing from the
     * run's own view, the latest "w" before y differs between the traces */
    long gw = sb_trace_find_latest(&g, "w", 10), rw = sb_trace_find_latest(&r, "w", 10);
    ck_assert_int_eq(gw, 9);
    ck_assert(!sb_hash_equal(&g.records[gw].hash, &r.records[rw].hash));
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

/* The divergence of two one-step traces: the same source x, then y made
 * by `op` from `inputs`, with a different value in each trace. */
static sb_divergence y_divergence(const char *op, const char *const *inputs, int n_inputs)
{
    program p = {.steps = 1, .width = 2};
    sb_trace g, r;
    sb_trace_init(&g);
    sb_trace_init(&r);
    probe_add(&g, &p, 0, "x", "source", NULL, 0, 1.0f);
    probe_add(&r, &p, 0, "x", "source", NULL, 0, 1.0f);
    probe_add(&g, &p, 0, "y", op, inputs, n_inputs, 2.0f);
    probe_add(&r, &p, 0, "y", op, inputs, n_inputs, 3.0f);
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);
    ck_assert(d.found);
    ck_assert_uint_eq(d.index, 1);
    ck_assert(!d.structural);
    sb_trace_free(&g);
    sb_trace_free(&r);
    return d;
}

/* An input named by the op but never probed cannot be vouched for. */
START_TEST(compare_input_missing)
{
    static const char *const in[] = {"x", "hidden_state"};
    sb_divergence d = y_divergence("dense_fwd", in, 2);
    ck_assert(!d.inputs_identical);
    ck_assert(!d.inputs_untraced);
}
END_TEST

/* An input no traced op made (a constant): the op's traced inputs are the
 * same in both runs, but nothing vouches for the untraced one, so the
 * difference is not claimed to arise in the op. */
START_TEST(compare_input_untraced)
{
    static const char *const in[] = {"x", SB_TRACE_UNTRACED};
    sb_divergence d = y_divergence("matmul", in, 2);
    ck_assert(d.inputs_untraced);
    ck_assert(!d.inputs_identical);
    /* even with every element inside a generous bound: no reordering */
    d.have_elements = true;
    d.elem.within_bound = true;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    /* with only traced inputs the same program is a reordering candidate */
    static const char *const traced[] = {"x"};
    d = y_divergence("matmul", traced, 1);
    ck_assert(!d.inputs_untraced);
    ck_assert(d.inputs_identical);

    /* the mark is never a record's own name */
    sb_trace t;
    sb_trace_init(&t);
    float v = 0.0f;
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {1}, .data = &v};
    sb_probe_point pt = {.step = 0, .name = SB_TRACE_UNTRACED, .op = "source", .tensor = &x};
    ck_assert_int_eq(sb_trace_add_probe(&t, &pt), SB_ERR_USAGE);
    sb_trace_free(&t);
}
END_TEST

START_TEST(compare_structural_name)
{
    program p = plain;
    p.rename_from = "z";
    p.rename_to = "z2";
    sb_trace g, r;
    program_trace(&g, &plain);
    program_trace(&r, &p);
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);
    ck_assert(d.found);
    ck_assert_uint_eq(d.index, 3);
    ck_assert_str_eq(d.probe, "z2");
    ck_assert(d.structural);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

START_TEST(compare_structural_shape_and_step)
{
    sb_trace g, r;
    program_trace(&g, &plain);
    program_trace(&r, &plain);
    r.records[5].dim[0] = 5;    /* same bytes hashed, different shape */
    r.records[5].hash = g.records[5].hash;
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 5);

    r.records[5].dim[0] = g.records[5].dim[0];
    r.records[7].step = 2;
    sb_trace_compare(&g, &r, &d);
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 7);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

START_TEST(compare_missing_records)
{
    program shorter = plain;
    shorter.steps = 2;
    sb_trace g, r;
    program_trace(&g, &plain);
    program_trace(&r, &shorter);
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);   /* the run stops early */
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 8);
    ck_assert_int_eq(d.step, 2);
    ck_assert_str_eq(d.probe, "x");
    sb_trace_compare(&r, &g, &d);   /* the run goes on past the golden */
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 8);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    sb_trace empty;
    sb_trace_init(&empty);
    sb_trace_compare(&empty, &empty, &d);
    ck_assert(!d.found);
    sb_trace_compare(&empty, &g, &d);
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 0);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

/* ---- comparing the first steps (sweep --max-steps) ------------------------ */

/* A run of `plain` stopped after `steps` steps: its records of those steps,
 * then an evaluation at step `steps` that the whole run never makes there. */
static void truncated_trace(sb_trace *t, const program *p, int64_t steps)
{
    program cut = *p;
    cut.steps = steps;
    program_trace(t, &cut);
    probe_add(t, &cut, steps, "eval.loss", "xent_loss", NULL, 0, 99.0f);
}

START_TEST(compare_steps_prefix_identical)
{
    sb_trace g, r;
    program_trace(&g, &plain);
    truncated_trace(&r, &plain, 2);
    sb_divergence d;
    sb_trace_compare(&g, &r, &d);           /* whole: the evaluation is out of place */
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 8);
    sb_trace_compare_steps(&g, &r, 2, &d);  /* the first 2 steps: the same */
    ck_assert(!d.found);
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_IDENTICAL);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

/* A golden of fewer steps than the limit is compared whole: a run that goes
 * on past it, or stops before its end, is structural. */
START_TEST(compare_steps_golden_shorter)
{
    sb_trace g, same, longer, shorter;
    program_trace(&g, &plain);              /* 3 steps */
    program_trace(&same, &plain);
    program five = plain;
    five.steps = 5;
    program_trace(&longer, &five);
    truncated_trace(&shorter, &plain, 2);
    sb_divergence d;
    sb_trace_compare_steps(&g, &same, 5, &d);
    ck_assert(!d.found);
    sb_trace_compare_steps(&g, &longer, 5, &d);
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 12);
    ck_assert_int_eq(d.step, 3);
    sb_trace_compare_steps(&g, &shorter, 5, &d);
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 8);          /* step 2 x against the run's evaluation */
    sb_trace_free(&g);
    sb_trace_free(&same);
    sb_trace_free(&longer);
    sb_trace_free(&shorter);
}
END_TEST

/* A divergence inside the steps compared is the whole run's first
 * divergence, with the same index, probe and inputs. */
START_TEST(compare_steps_diverges_inside)
{
    program p = plain;
    p.bump_name = "y";
    p.bump_step = 1;
    sb_trace g, whole, r;
    program_trace(&g, &plain);
    program_trace(&whole, &p);
    truncated_trace(&r, &p, 2);
    sb_divergence d, dw;
    sb_trace_compare_steps(&g, &r, 2, &d);
    sb_trace_compare(&g, &whole, &dw);
    ck_assert(d.found && !d.structural && d.inputs_identical);
    ck_assert_uint_eq(d.index, dw.index);
    ck_assert_uint_eq(d.index, 6);
    ck_assert_int_eq(d.step, 1);
    ck_assert_str_eq(d.probe, "y");
    sb_trace_free(&g);
    sb_trace_free(&whole);
    sb_trace_free(&r);
}
END_TEST

/* A divergence at a later step than the limit is not seen: what a truncated
 * run that expected a divergence reports as not reached. */
START_TEST(compare_steps_diverges_after)
{
    program p = plain;
    p.bump_name = "y";
    p.bump_step = 2;
    sb_trace g, r;
    program_trace(&g, &plain);
    truncated_trace(&r, &p, 3);             /* diverges at step 2 ... */
    sb_divergence d;
    sb_trace_compare_steps(&g, &r, 2, &d);  /* ... after the first 2 steps */
    ck_assert(!d.found);
    sb_trace_compare_steps(&g, &r, 3, &d);
    ck_assert(d.found);
    ck_assert_uint_eq(d.index, 10);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

/* A run resumed at step 1 is compared from step 1 on: a difference before
 * it (here the process that wrote the checkpoint diverged) is not its, one
 * after it is found at the whole trace's index, its inputs looked up in
 * the records before step 1 too. */
START_TEST(compare_from_step_skips_the_steps_before)
{
    program early = plain, late = plain, source = plain;
    early.bump_name = "y", early.bump_step = 0;
    late.bump_name = "y", late.bump_step = 2;
    sb_trace g, r_early, r_late;
    program_trace(&g, &plain);
    program_trace(&r_early, &early);
    program_trace(&r_late, &late);
    sb_divergence d;
    sb_trace_compare_from_step(&g, &r_early, 1, 0, &d);
    ck_assert(!d.found);
    sb_trace_compare(&g, &r_early, &d);
    ck_assert(d.found && d.step == 0);
    sb_trace_compare_from_step(&g, &r_late, 1, 0, &d);
    ck_assert(d.found && !d.structural && d.inputs_identical);
    ck_assert_uint_eq(d.index, 10);
    ck_assert_int_eq(d.step, 2);
    ck_assert_str_eq(d.probe, "y");
    sb_trace_compare_from_step(&g, &r_late, 1, 2, &d);  /* and before step 2: none */
    ck_assert(!d.found);
    /* the origins alike: the one at step 0 is left out */
    sb_trace r_source;
    source.bump_name = "x", source.bump_step = 0;
    program_trace(&r_source, &source);
    sb_origins o;
    sb_trace_origins_from_step(&g, &r_source, 0, 0, &o);
    ck_assert_int_eq(o.count, 1);
    sb_trace_origins_from_step(&g, &r_source, 1, 0, &o);
    ck_assert_int_eq(o.count, 0);
    sb_trace_origins_from_step(&g, &r_late, 1, 0, &o);
    ck_assert_int_eq(o.count, 1);
    ck_assert_int_eq(o.list[0].step, 2);
    sb_trace_free(&g);
    sb_trace_free(&r_early);
    sb_trace_free(&r_late);
    sb_trace_free(&r_source);
}
END_TEST

/* A resumed run with fewer records before its resume step than the golden
 * (a probe of step 0 missing) parts at the shorter prefix's end. */
START_TEST(compare_from_step_prefix_differs)
{
    sb_trace g, r;
    program_trace(&g, &plain);
    program_trace(&r, &plain);
    /* drop the run's record 3 (step 0 z) */
    sb_record dropped = r.records[3];
    memmove(&r.records[3], &r.records[4], (r.n_records - 4) * sizeof *r.records);
    r.records[r.n_records - 1] = dropped;   /* still freed with the trace */
    r.n_records--;
    sb_divergence d;
    sb_trace_compare_from_step(&g, &r, 1, 0, &d);
    ck_assert(d.found && d.structural);
    ck_assert_uint_eq(d.index, 3);
    r.n_records++;
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

START_TEST(run_outcomes)
{
    sb_run_result r = {.verdict = SB_VERDICT_IDENTICAL, .expected = SB_VERDICT_IDENTICAL};
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_AS_EXPECTED);
    r.expected = SB_VERDICT_BEYOND_BOUND;
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_NOT_AS_EXPECTED);
    r.max_steps = 2;            /* truncated: the divergence may come later */
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_NOT_REACHED);
    r.expected = SB_VERDICT_REORDERING;
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_NOT_REACHED);
    /* a divergence in the steps run is judged as in a whole run */
    r.verdict = SB_VERDICT_BEYOND_BOUND;
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_NOT_AS_EXPECTED);
    r.expected = SB_VERDICT_BEYOND_BOUND;
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_AS_EXPECTED);
    r.verdict = SB_VERDICT_CRASH;
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_NOT_AS_EXPECTED);
    r.verdict = SB_VERDICT_IDENTICAL;
    r.expected = SB_VERDICT_IDENTICAL;
    ck_assert_int_eq(sb_run_outcome(&r), SB_OUTCOME_AS_EXPECTED);
}
END_TEST

/* ---- verdicts ------------------------------------------------------------ */

/* A located divergence of a dense op: inputs identical, 3 of 16 elements
 * within half their bound. */
static sb_divergence located(void)
{
    sb_divergence d;
    memset(&d, 0, sizeof d);
    d.found = true;
    d.index = 2;
    snprintf(d.probe, sizeof d.probe, "y");
    snprintf(d.op, sizeof d.op, "dense_fwd");
    d.inputs_identical = true;
    d.have_elements = true;
    d.elem.total = 16;
    d.elem.differing = 3;
    d.elem.bound_ratio = 0.5;
    d.elem.within_bound = true;
    d.elem.bounded = true;
    return d;
}

START_TEST(verdict_names)
{
    for (int v = 0; v < SB_VERDICT_COUNT; v++)
        ck_assert_int_eq(sb_verdict_from_name(sb_verdict_name((sb_verdict)v)), v);
    ck_assert_str_eq(sb_verdict_name(SB_VERDICT_BEYOND_BOUND), "beyond-bound");
    ck_assert_int_eq(sb_verdict_from_name("beyond_bound"), SB_VERDICT_COUNT);
    ck_assert_int_eq(sb_verdict_from_name(""), SB_VERDICT_COUNT);
}
END_TEST

START_TEST(verdict_paths)
{
    sb_divergence d = located();
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_REORDERING);

    d = located();
    d.found = false;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_IDENTICAL);

    d = located();
    d.inputs_identical = false;     /* the difference came from upstream */
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    d = located();
    d.structural = true;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    d = located();
    d.have_elements = false;        /* never located: not measured against a bound */
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_UNBOUNDED);

    d = located();
    d.elem.bound_ratio = 1.5;
    d.elem.within_bound = false;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    d = located();
    d.nondeterministic = true;      /* no re-run reproduced the run's hash */
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_NONDETERMINISTIC);

    d = located();
    d.elem.nonfinite_b = 1;         /* a NaN or Inf appeared */
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    /* an op without a reduction cannot reorder, whatever its dump says */
    d = located();
    snprintf(d.op, sizeof d.op, "relu_fwd");
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    /* a user's own op is judged by the bound it dumped */
    d = located();
    snprintf(d.op, sizeof d.op, "my_reduce");
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_REORDERING);
    d.elem.bound_ratio = 1.5;
    d.elem.within_bound = false;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);
}
END_TEST

/* A difference with no bound known (no bound dumped) is neither a
 * reordering nor a bug: unbounded, unless the op is known exact. */
START_TEST(verdict_unbounded)
{
    sb_divergence d = located();
    snprintf(d.op, sizeof d.op, "my_reduce");
    d.elem.bounded = false;
    d.elem.bound_ratio = 0.0;
    d.elem.within_bound = false;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_UNBOUNDED);
    ck_assert_str_eq(sb_verdict_name(SB_VERDICT_UNBOUNDED), "unbounded");

    /* a NaN on one side may be another order's overflow: still unbounded */
    d.elem.nonfinite_b = 1;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_UNBOUNDED);

    /* an op of the kernel list without a reduction is exact: a bug */
    snprintf(d.op, sizeof d.op, "relu_fwd");
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    /* a kernel-list op with a reduction and no bound dumped: unbounded */
    d = located();
    d.elem.bounded = false;
    d.elem.within_bound = false;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_UNBOUNDED);

    /* a declared exact op dumps zeros: bounded, ratio inf, beyond-bound */
    d.elem.bounded = true;
    d.elem.bound_ratio = HUGE_VAL;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    /* inputs that differ are not vouched for, bound or not */
    d = located();
    d.elem.bounded = false;
    d.elem.within_bound = false;
    d.inputs_identical = false;
    ck_assert_int_eq(sb_divergence_verdict(&d), SB_VERDICT_BEYOND_BOUND);

    /* ranked above reordering, below beyond-bound */
    ck_assert_int_lt(sb_verdict_rank(SB_VERDICT_REORDERING),
                     sb_verdict_rank(SB_VERDICT_UNBOUNDED));
    ck_assert_int_lt(sb_verdict_rank(SB_VERDICT_UNBOUNDED),
                     sb_verdict_rank(SB_VERDICT_BEYOND_BOUND));
}
END_TEST

Suite *make_compare_suite(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, compare_identical);
    tcase_add_test(tc, verdict_unbounded);
    tcase_add_test(tc, compare_hash_change_inputs_identical);
    tcase_add_test(tc, compare_upstream_change);
    tcase_add_test(tc, compare_input_missing);
    tcase_add_test(tc, compare_input_untraced);
    tcase_add_test(tc, compare_structural_name);
    tcase_add_test(tc, compare_structural_shape_and_step);
    tcase_add_test(tc, compare_missing_records);
    tcase_add_test(tc, compare_steps_prefix_identical);
    tcase_add_test(tc, compare_steps_golden_shorter);
    tcase_add_test(tc, compare_steps_diverges_inside);
    tcase_add_test(tc, compare_steps_diverges_after);
    tcase_add_test(tc, compare_from_step_skips_the_steps_before);
    tcase_add_test(tc, compare_from_step_prefix_differs);
    tcase_add_test(tc, run_outcomes);
    tcase_add_test(tc, verdict_names);
    tcase_add_test(tc, verdict_paths);
    suite_add_tcase(s, tc);
    return s;
}
