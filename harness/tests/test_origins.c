/* Origins found from two traces built in memory, the worst of several
 * located ones, and the repeats of one configuration compared with each
 * other. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "judge/judge.h"

Suite *make_origins_suite(void);

/* Per step: sources x and w, y = dense(x, w), z = relu(y), and a loss
 * l = xent(y', x) where y' is the source v. `moved` lists "step:name" of the
 * records whose value moves in the run (the golden has none). */
static bool moved_in(const char *const *moved, int64_t step, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%lld:%s", (long long)step, name);
    for (int i = 0; moved && moved[i]; i++)
        if (strcmp(moved[i], key) == 0)
            return true;
    return false;
}

static void probe_add(sb_trace *t, const char *const *moved, int64_t step, const char *name,
                      const char *op, const char *const *inputs, int n_inputs)
{
    float data[4] = {1.0f, 2.0f, 3.0f, (float)step};
    if (moved_in(moved, step, name))
        data[0] += 0.25f;
    sb_tensor x = {.dtype = SB_DTYPE_F32, .ndim = 1, .dim = {4}, .data = data};
    sb_probe_point pt = {.step = step, .name = name, .op = op, .tensor = &x,
                         .inputs = inputs, .n_inputs = n_inputs};
    ck_assert_int_eq(sb_trace_add_probe(t, &pt), SB_OK);
}

enum { PER_STEP = 6 };

static void program_trace(sb_trace *t, const char *const *moved)
{
    static const char *const dense_in[] = {"x", "w"}, *const relu_in[] = {"y"},
                             *const loss_in[] = {"v", "x"};
    sb_trace_init(t);
    for (int64_t s = 0; s < 3; s++) {
        probe_add(t, moved, s, "x", "source", NULL, 0);
        probe_add(t, moved, s, "w", "source", NULL, 0);
        probe_add(t, moved, s, "y", "dense_fwd", dense_in, 2);
        probe_add(t, moved, s, "z", "relu_fwd", relu_in, 1);
        probe_add(t, moved, s, "v", "source", NULL, 0);
        probe_add(t, moved, s, "l", "xent_loss", loss_in, 2);
    }
}

/* y moves at steps 0 and 2 (z follows it: no origin), l at step 1, and w at
 * step 2, which makes y of step 2 descend from w rather than be an origin. */
START_TEST(origins_from_hashes)
{
    static const char *const moved[] = {"0:y", "0:z", "1:l", "2:w", "2:y", "2:z", NULL};
    sb_trace g, r;
    program_trace(&g, NULL);
    program_trace(&r, moved);
    sb_origins o;
    sb_trace_origins(&g, &r, 0, &o);
    ck_assert_int_eq(o.count, 3);
    ck_assert_int_eq(o.n, 3);
    ck_assert_int_eq(o.located, 0);
    ck_assert_int_eq(o.worst, -1);
    ck_assert_uint_eq(o.list[0].index, 2);                  /* step 0 y */
    ck_assert_str_eq(o.list[1].probe, "l");
    ck_assert_int_eq(o.list[1].step, 1);
    ck_assert_str_eq(o.list[2].probe, "w");                 /* a source moved */
    ck_assert_uint_eq(o.list[2].index, 2 * PER_STEP + 1);
    for (int i = 0; i < o.n; i++)
        ck_assert(o.list[i].inputs_identical && !o.list[i].structural);

    /* the first steps alone, as a truncated run */
    sb_trace_origins(&g, &r, 1, &o);
    ck_assert_int_eq(o.count, 1);

    /* identical traces have none */
    sb_trace_origins(&g, &g, 0, &o);
    ck_assert_int_eq(o.count, 0);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

/* Past a structural difference the records do not line up: no origins. */
START_TEST(origins_stop_at_structure)
{
    static const char *const moved[] = {"2:y", NULL};
    sb_trace g, r;
    program_trace(&g, NULL);
    program_trace(&r, moved);
    r.records[PER_STEP].name[0] = 'q';   /* step 1 x, renamed in place (it owns op and inputs) */
    sb_origins o;
    sb_trace_origins(&g, &r, 0, &o);
    ck_assert_int_eq(o.count, 0);
    sb_trace_free(&g);
    sb_trace_free(&r);
}
END_TEST

static sb_divergence located(const char *op, double ratio)
{
    sb_divergence d = {.found = true, .inputs_identical = true, .have_elements = true};
    snprintf(d.op, sizeof d.op, "%s", op);
    d.elem.differing = 1;
    d.elem.bound_ratio = ratio;
    d.elem.within_bound = !(ratio > 1.0);
    d.elem.bounded = true;
    return d;
}

/* The worst located origin: beyond-bound over reordering, nondeterministic
 * over both, the larger ratio among equals; origins past `located` do not
 * count. */
START_TEST(origins_worst)
{
    sb_origins o = {.count = 4, .n = 4, .located = 3};
    o.list[0] = located("xent_loss", 0.23);
    o.list[1] = located("xent_loss", 9.3);
    o.list[2] = located("xent_loss", 0.5);
    o.list[3] = located("relu_fwd", 1.0);   /* not located: no say */
    o.list[3].nondeterministic = true;
    sb_origins_rank(&o);
    ck_assert_int_eq(o.worst, 1);
    ck_assert_int_eq(sb_divergence_verdict(&o.list[o.worst]), SB_VERDICT_BEYOND_BOUND);

    o.list[1] = located("xent_loss", 0.9);  /* every one within bound */
    sb_origins_rank(&o);
    ck_assert_int_eq(o.worst, 1);
    ck_assert_int_eq(sb_divergence_verdict(&o.list[o.worst]), SB_VERDICT_REORDERING);

    /* an origin with no bound known outranks the reorderings, not a bug */
    o.list[0].elem.bounded = false;
    o.list[0].elem.within_bound = false;
    sb_origins_rank(&o);
    ck_assert_int_eq(o.worst, 0);
    ck_assert_int_eq(sb_divergence_verdict(&o.list[o.worst]), SB_VERDICT_UNBOUNDED);
    o.list[1] = located("xent_loss", 9.3);
    sb_origins_rank(&o);
    ck_assert_int_eq(o.worst, 1);
    o.list[0] = located("xent_loss", 0.23);
    o.list[1] = located("xent_loss", 0.9);

    o.list[2].nondeterministic = true;
    sb_origins_rank(&o);
    ck_assert_int_eq(o.worst, 2);

    o.located = 0;
    sb_origins_rank(&o);
    ck_assert_int_eq(o.worst, -1);
}
END_TEST

START_TEST(verdict_ranks)
{
    ck_assert_int_lt(sb_verdict_rank(SB_VERDICT_IDENTICAL), sb_verdict_rank(SB_VERDICT_REORDERING));
    ck_assert_int_lt(sb_verdict_rank(SB_VERDICT_REORDERING),
                     sb_verdict_rank(SB_VERDICT_UNBOUNDED));
    ck_assert_int_lt(sb_verdict_rank(SB_VERDICT_UNBOUNDED),
                     sb_verdict_rank(SB_VERDICT_BEYOND_BOUND));
    ck_assert_int_lt(sb_verdict_rank(SB_VERDICT_BEYOND_BOUND),
                     sb_verdict_rank(SB_VERDICT_NONDETERMINISTIC));
    ck_assert_str_eq(sb_verdict_name(SB_VERDICT_NONDETERMINISTIC), "nondeterministic");
    ck_assert_int_eq(sb_verdict_from_name("nondeterministic"), SB_VERDICT_NONDETERMINISTIC);
}
END_TEST

/* Three repeats; the third parts from the first at step 1 l. A crashed
 * repeat (no trace) is left out. */
START_TEST(repeats_part)
{
    static const char *const moved[] = {"1:l", NULL};
    sb_trace a, b;
    program_trace(&a, NULL);
    program_trace(&b, moved);
    sb_run_result runs[4] = {{.repeat = 1}, {.repeat = 2}, {.repeat = 3}, {.repeat = 4}};
    const sb_trace *traces[4] = {&a, &a, NULL, &b};
    ck_assert(sb_repeats_compare(runs, traces, 4, 0));
    ck_assert_int_eq(runs[1].repeats_with, 0);
    ck_assert_int_eq(runs[2].repeats_with, 0);
    ck_assert_int_eq(runs[3].repeats_with, 1);
    ck_assert_int_eq(runs[0].repeats_with, 4);
    ck_assert_str_eq(runs[3].repeats_part.probe, "l");
    ck_assert_int_eq(runs[3].repeats_part.step, 1);
    ck_assert(runs[3].repeats_part.inputs_identical);

    /* the parting is after the steps compared */
    sb_run_result again[2] = {{.repeat = 1}, {.repeat = 2}};
    const sb_trace *two[2] = {&a, &b};
    ck_assert(!sb_repeats_compare(again, two, 2, 1));
    ck_assert(sb_repeats_compare(again, two, 2, 2));
    sb_trace_free(&a);
    sb_trace_free(&b);
}
END_TEST

Suite *make_origins_suite(void)
{
    Suite *s = suite_create("origins");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, origins_from_hashes);
    tcase_add_test(tc, origins_stop_at_structure);
    tcase_add_test(tc, origins_worst);
    tcase_add_test(tc, verdict_ranks);
    tcase_add_test(tc, repeats_part);
    suite_add_tcase(s, tc);
    return s;
}
