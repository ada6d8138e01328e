/* The report writers on a crafted sweep result: a kernel case with an
 * awkward name (quotes, backslash, markup, tab, '#', a malformed UTF-8
 * byte) and every kind of run, a training case with metrics, and a training
 * case truncated to its first 2 steps (one run as expected, one whose
 * expected divergence was not reached). JSON and
 * XML are read back with Python's parsers (/usr/bin/python3). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb_harness.h"

Suite *make_report_suite(void);

#define PYTHON "/usr/bin/python3"
#define ODD_NAME "odd \"name\"\\ <&>\t#1 \xff"

static sb_case kernel_case, train_case, short_case;
static sb_run_result kernel_runs[4], train_runs[1], short_runs[2];
static sb_case_result results[3];
static char dir[64];

static void located(sb_divergence *d, const char *probe, const char *op)
{
    d->found = true;
    d->index = 3;
    d->step = 0;
    snprintf(d->probe, sizeof d->probe, "%s", probe);
    snprintf(d->op, sizeof d->op, "%s", op);
    d->inputs_identical = true;
    d->have_elements = true;
    d->elem.bounded = true;
    d->elem.total = 4096;
    d->elem.differing = 12;
    d->elem.first_index = 7;
    d->elem.n_ranges = 2;
    d->elem.ranges[0][0] = 7;
    d->elem.ranges[0][1] = 8;
    d->elem.ranges[1][0] = 100;
    d->elem.ranges[1][1] = 111;
}

static void setup(void)
{
    memset(&kernel_case, 0, sizeof kernel_case);
    snprintf(kernel_case.name, sizeof kernel_case.name, "%s", ODD_NAME);
    snprintf(kernel_case.path, sizeof kernel_case.path, "cases/odd.case");
    kernel_case.kind = SB_CASE_KERNEL;
    kernel_case.family = SB_FAMILY_LOOSE;
    kernel_case.reference_threads = 1;

    memset(kernel_runs, 0, sizeof kernel_runs);
    kernel_runs[0] = (sb_run_result){.threads = 1, .repeat = 1, .seconds = 0.25};
    kernel_runs[1] = (sb_run_result){.threads = 2, .repeat = 1, .verdict = SB_VERDICT_REORDERING,
                                     .expected = SB_VERDICT_IDENTICAL, .seconds = 0.5};
    located(&kernel_runs[1].div, "y", "dense_fwd");
    kernel_runs[1].div.elem.max_abs = 0x1p-20;
    kernel_runs[1].div.elem.max_ulp = 3;
    kernel_runs[1].div.elem.bound_ratio = 0.5;
    kernel_runs[1].div.elem.within_bound = true;
    kernel_runs[2] = (sb_run_result){.threads = 4, .repeat = 2,
                                     .verdict = SB_VERDICT_BEYOND_BOUND,
                                     .expected = SB_VERDICT_BEYOND_BOUND, .seconds = 1.0};
    located(&kernel_runs[2].div, "y", "dense_fwd");
    kernel_runs[2].div.elem.max_abs = HUGE_VAL;
    kernel_runs[2].div.elem.max_rel = nan("");
    kernel_runs[2].div.elem.max_ulp = HUGE_VAL;
    kernel_runs[2].div.elem.bound_ratio = HUGE_VAL;
    kernel_runs[2].div.elem.nonfinite_b = 1;
    kernel_runs[3] = (sb_run_result){.threads = 8, .repeat = 1, .verdict = SB_VERDICT_CRASH,
                                     .expected = SB_VERDICT_IDENTICAL, .seconds = 0.125};
    snprintf(kernel_runs[3].message, sizeof kernel_runs[3].message,
             "killed by signal 11 \"SIGSEGV\"\nsee <stderr>");
    kernel_runs[3].crash = (sb_crash_site){.how = "killed by signal 11 (Segmentation fault)",
                                           .streamed = true, .in_op = true, .step = 2,
                                           .op = "relu_fwd", .probe = "z", .after = "y",
                                           .records = 5,
                                           .stderr_line = "boom.c:3: assertion <failed>"};

    memset(&train_case, 0, sizeof train_case);
    snprintf(train_case.name, sizeof train_case.name, "mnist_det");
    train_case.kind = SB_CASE_TRAIN;
    train_case.family = SB_FAMILY_DET;
    train_case.reference_threads = 1;
    memset(train_runs, 0, sizeof train_runs);
    train_runs[0] = (sb_run_result){.threads = 2, .repeat = 1, .have_metrics = true,
                                    .seconds = 12.5};
    train_runs[0].metrics = (sb_epoch_metrics){.epoch = 12, .steps = 5628, .train_loss = 0.25,
                                               .test_loss = 0.0625, .test_accuracy = 0.984375};

    results[0] = (sb_case_result){.c = &kernel_case, .runs = kernel_runs, .n_runs = 4};
    results[1] = (sb_case_result){.c = &train_case, .runs = train_runs, .n_runs = 1,
                                  .as_expected = true};

    short_case = train_case;
    snprintf(short_case.name, sizeof short_case.name, "mnist_cut");
    short_runs[0] = (sb_run_result){.threads = 1, .repeat = 1, .max_steps = 2, .seconds = 1.5};
    short_runs[1] = (sb_run_result){.threads = 2, .repeat = 1, .max_steps = 2, .seconds = 1.0,
                                    .expected = SB_VERDICT_BEYOND_BOUND};
    results[2] = (sb_case_result){.c = &short_case, .runs = short_runs, .n_runs = 2,
                                  .as_expected = true};

    snprintf(dir, sizeof dir, "/tmp/sb_test_report.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void path_in_dir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void teardown(void)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            path_in_dir(p, sizeof p, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static char *file_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Only the given file is left in the directory: no temporary files. */
static void dir_holds_only(const char *name)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        ck_assert_str_eq(e->d_name, name);
        n++;
    }
    closedir(d);
    ck_assert_int_eq(n, 1);
}

/* Runs a Python check on `path` (Python is there: meson runs on it). */
static bool python_check(const char *script, const char *path)
{
    ck_assert_msg(access(PYTHON, X_OK) == 0, "%s is needed to read the reports back", PYTHON);
    char spath[512], cmd[1200];
    path_in_dir(spath, sizeof spath, "check.py");
    FILE *f = fopen(spath, "w");
    ck_assert_ptr_nonnull(f);
    fputs(script, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, PYTHON " %s %s", spath, path);
    int rc = system(cmd);
    unlink(spath);
    return rc == 0;
}

static const char json_script[] =
    "import json, math, sys\n"
    "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "k, t, _ = d['cases']\n"
    "assert k['name'] == 'odd \"name\"\\\\ <&>\\t#1 \\ufffd', repr(k['name'])\n"
    "assert [r['verdict'] for r in k['runs']] == "
    "['identical', 'reordering', 'beyond-bound', 'crash']\n"
    "assert [r['as_expected'] for r in k['runs']] == [True, False, True, False]\n"
    "r0, r1, r2, r3 = k['runs']\n"
    "assert r0['first_divergence'] is None and r0['metrics'] is None\n"
    "fd = r1['first_divergence']\n"
    "assert (fd['step'], fd['probe'], fd['op']) == (0, 'y', 'dense_fwd')\n"
    "assert fd['inputs_identical'] is True and fd['differing'] == 12 and fd['total'] == 4096\n"
    "assert fd['max_abs'] == 2.0**-20 and fd['max_ulp'] == 3 and fd['bound_ratio'] == 0.5\n"
    "assert fd['first_index'] == 7 and fd['ranges'] == [[7, 8], [100, 111]]\n"
    "fd = r2['first_divergence']\n"
    "assert fd['bound_ratio'] == 'inf' and fd['max_rel'] == 'nan' and fd['max_ulp'] == 'inf'\n"
    "assert r3['message'] == 'killed by signal 11 \"SIGSEGV\"\\nsee <stderr>'\n"
    "assert r3['seconds'] == 0.125\n"
    "assert r3['crash'] == {'how': 'killed by signal 11 (Segmentation fault)', 'streamed': True,\n"
    "    'step': 2, 'op': 'relu_fwd', 'probe': 'z', 'after': 'y', 'records': 5,\n"
    "    'stderr': 'boom.c:3: assertion <failed>'}, r3['crash']\n"
    "assert r0['crash'] is None\n"
    "assert all((r['axis'], r['batch'], r['ranks']) == ('threads', 0, 1) for r in k['runs'])\n"
    "m = t['runs'][0]['metrics']\n"
    "assert m['test_loss'] == 0.0625 and m['test_accuracy'] == 0.984375\n"
    "assert t['as_expected'] is True and k['as_expected'] is False\n"
    "assert all(r['truncated'] is None and r['not_reached'] is False for r in k['runs'] + t['runs'])\n"
    "c = d['cases'][2]\n"
    "assert c['as_expected'] is True\n"
    "assert [r['truncated'] for r in c['runs']] == [{'max_steps': 2}] * 2\n"
    "assert [r['not_reached'] for r in c['runs']] == [False, True]\n"
    "assert [r['as_expected'] for r in c['runs']] == [True, False]\n"
    "assert [r['metrics'] for r in c['runs']] == [None, None]\n";

START_TEST(json_parses_and_escapes)
{
    char path[512];
    path_in_dir(path, sizeof path, "report.json");
    ck_assert_int_eq(sb_report_json(path, results, 3, NULL), SB_OK);
    dir_holds_only("report.json");
    const char *s = file_read(path);
    /* the escapes themselves, whether or not Python is there: the malformed
     * byte is U+FFFD, written as UTF-8 */
    ck_assert_ptr_nonnull(strstr(s, "\"name\": \"odd \\\"name\\\"\\\\ <&>\\t#1 \xef\xbf\xbd\""));
    ck_assert_ptr_null(strstr(s, "\"shard\""));
    ck_assert_ptr_nonnull(strstr(s, "\"bound_ratio\": \"inf\""));
    ck_assert_ptr_nonnull(strstr(s, "\"first_divergence\": null"));
    ck_assert(python_check(json_script, path));
}
END_TEST

START_TEST(json_unwritable)
{
    char path[512];
    path_in_dir(path, sizeof path, "missing/report.json");
    ck_assert_int_eq(sb_report_json(path, results, 3, NULL), SB_ERR_IO);
}
END_TEST

/* Doubles bit for bit, NaN as any NaN. */
static void same_double(double a, double b)
{
    if (isnan(a))
        ck_assert(isnan(b));
    else
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%.17g read back as %.17g", a, b);
}

static void same_divergence(const sb_divergence *d, const sb_divergence *e);

static void same_run(const sb_run_result *a, const sb_run_result *b)
{
    ck_assert_int_eq(a->threads, b->threads);
    ck_assert_int_eq(a->repeat, b->repeat);
    ck_assert_int_eq(a->verdict, b->verdict);
    ck_assert_int_eq(a->expected, b->expected);
    /* written as a list of one when the run has no set */
    ck_assert_uint_eq(a->expected_set ? a->expected_set : SB_VERDICT_BIT(a->expected),
                      b->expected_set);
    ck_assert_int_eq(a->max_steps, b->max_steps);
    same_double(a->seconds, b->seconds);
    ck_assert_str_eq(a->message, b->message);
    ck_assert_int_eq(a->have_metrics, b->have_metrics);
    if (a->have_metrics) {
        ck_assert_int_eq(a->metrics.epoch, b->metrics.epoch);
        ck_assert_int_eq(a->metrics.steps, b->metrics.steps);
        same_double(a->metrics.train_loss, b->metrics.train_loss);
        same_double(a->metrics.test_loss, b->metrics.test_loss);
        same_double(a->metrics.test_accuracy, b->metrics.test_accuracy);
    }
    same_divergence(&a->div, &b->div);
    ck_assert_int_eq(a->axis, b->axis);
    ck_assert_int_eq(a->batch, b->batch);
    ck_assert_int_eq(a->ranks > 0 ? a->ranks : 1, b->ranks);    /* unset: one process */
    ck_assert_int_eq(a->origins.count, b->origins.count);
    ck_assert_int_eq(a->origins.n, b->origins.n);
    ck_assert_int_eq(a->origins.located, b->origins.located);
    const sb_divergence *wa = sb_origins_worst(&a->origins), *wb = sb_origins_worst(&b->origins);
    ck_assert_int_eq(wa != NULL, wb != NULL);
    if (wa)
        ck_assert_uint_eq(wa->index, wb->index);
    ck_assert_int_eq(a->origins_capped, b->origins_capped);
    for (int i = 0; i < a->origins.n; i++)
        same_divergence(&a->origins.list[i], &b->origins.list[i]);
    ck_assert_int_eq(a->repeats_with, b->repeats_with);
    same_divergence(&a->repeats_part, &b->repeats_part);
    const sb_crash_site *x = &a->crash, *y = &b->crash;
    ck_assert_str_eq(x->how, y->how);
    ck_assert_int_eq(x->streamed, y->streamed);
    ck_assert_int_eq(x->in_op, y->in_op);
    if (x->in_op || x->after[0])
        ck_assert_int_eq(x->step, y->step);
    ck_assert_str_eq(x->op, y->op);
    ck_assert_str_eq(x->probe, y->probe);
    ck_assert_str_eq(x->after, y->after);
    ck_assert_uint_eq(x->records, y->records);
    ck_assert_str_eq(x->stderr_line, y->stderr_line);
}

static void same_divergence(const sb_divergence *d, const sb_divergence *e)
{
    ck_assert_int_eq(d->found, e->found);
    if (!d->found)
        return;
    ck_assert_uint_eq(d->index, e->index);
    ck_assert_int_eq(d->step, e->step);
    ck_assert_str_eq(d->probe, e->probe);
    ck_assert_str_eq(d->op, e->op);
    ck_assert_int_eq(d->inputs_identical, e->inputs_identical);
    ck_assert_int_eq(d->structural, e->structural);
    ck_assert_int_eq(d->nondeterministic, e->nondeterministic);
    ck_assert_int_eq(d->reference_unreproduced, e->reference_unreproduced);
    ck_assert_int_eq(d->reruns, e->reruns);
    ck_assert_int_eq(d->have_elements, e->have_elements);
    if (!d->have_elements)
        return;
    ck_assert_uint_eq(d->elem.total, e->elem.total);
    ck_assert_uint_eq(d->elem.differing, e->elem.differing);
    same_double(d->elem.max_abs, e->elem.max_abs);
    same_double(d->elem.max_rel, e->elem.max_rel);
    same_double(d->elem.max_ulp, e->elem.max_ulp);
    same_double(d->elem.bound_ratio, e->elem.bound_ratio);
    ck_assert_int_eq(d->elem.within_bound, e->elem.within_bound);
    ck_assert_int_eq(d->elem.bounded, e->elem.bounded);
    ck_assert_int_eq(sb_divergence_verdict(d), sb_divergence_verdict(e));
    ck_assert_uint_eq(d->elem.first_index, e->elem.first_index);
    ck_assert_uint_eq(d->elem.nonfinite_a, e->elem.nonfinite_a);
    ck_assert_uint_eq(d->elem.nonfinite_b, e->elem.nonfinite_b);
    ck_assert_uint_eq(d->elem.n_ranges, e->elem.n_ranges);
    for (size_t i = 0; i < d->elem.n_ranges; i++) {
        ck_assert_uint_eq(d->elem.ranges[i][0], e->elem.ranges[i][0]);
        ck_assert_uint_eq(d->elem.ranges[i][1], e->elem.ranges[i][1]);
    }
}

/* What the writer writes the reader reads back: every field, inf, nan and
 * null as they were, doubles to the bit, the malformed byte as U+FFFD, the
 * shard as given. */
START_TEST(json_reads_back)
{
    /* doubles no short decimal holds, an integral one, and -0 */
    kernel_runs[1].div.elem.max_rel = 0.1 + 0.2;
    kernel_runs[1].div.elem.bound_ratio = 1.0 / 3.0;
    kernel_runs[0].seconds = -0.0;
    kernel_runs[1].div.have_elements = false;
    train_runs[0].div = kernel_runs[2].div;
    /* three origins, two located, the second the worst; repeats that part */
    sb_origins *g = &kernel_runs[2].origins;
    *g = (sb_origins){.count = 3, .n = 3, .located = 2, .worst = 1};
    g->list[0] = kernel_runs[1].div;
    g->list[1] = kernel_runs[2].div;
    g->list[1].index = 9;
    g->list[1].reruns = 2;
    g->list[2] = kernel_runs[1].div;
    g->list[2].index = 11;
    g->list[2].have_elements = false;
    g->list[2].reference_unreproduced = true;
    kernel_runs[2].origins_capped = true;
    kernel_runs[1].repeats_part = kernel_runs[2].div;
    kernel_runs[1].repeats_part.nondeterministic = true;
    kernel_runs[1].repeats_with = 2;
    char path[512];
    path_in_dir(path, sizeof path, "shard.json");
    sb_report_shard shard = {2, 3};
    ck_assert_int_eq(sb_report_json(path, results, 3, &shard), SB_OK);
    sb_report rep;
    char err[512] = "";
    ck_assert_msg(sb_report_json_read(&rep, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(rep.shard.index, 2);
    ck_assert_int_eq(rep.shard.count, 3);
    ck_assert_int_eq(rep.n, 3);
    ck_assert_str_eq(rep.cases[0].name, "odd \"name\"\\ <&>\t#1 \xef\xbf\xbd");
    for (int i = 0; i < 3; i++) {
        const sb_case *c = results[i].c, *back = rep.results[i].c;
        ck_assert_ptr_eq(back, &rep.cases[i]);
        if (i > 0)
            ck_assert_str_eq(back->name, c->name);
        ck_assert_str_eq(back->path, c->path);
        ck_assert_int_eq(back->kind, c->kind);
        ck_assert_int_eq(back->family, c->family);
        ck_assert_int_eq(back->reference_threads, c->reference_threads);
        ck_assert_int_eq(rep.results[i].as_expected, results[i].as_expected);
        ck_assert_int_eq(rep.results[i].n_runs, results[i].n_runs);
        for (int j = 0; j < results[i].n_runs; j++)
            same_run(&results[i].runs[j], &rep.results[i].runs[j]);
    }
    sb_report_free(&rep);

    /* no shard key: shard 1 of 1 */
    ck_assert_int_eq(sb_report_json(path, results, 1, NULL), SB_OK);
    ck_assert_msg(sb_report_json_read(&rep, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert_int_eq(rep.shard.index, 1);
    ck_assert_int_eq(rep.shard.count, 1);
    ck_assert_int_eq(rep.n, 1);
    sb_report_free(&rep);
}
END_TEST

/* What is not a report is refused, with the key that is wrong. */
START_TEST(json_read_refuses)
{
    static const struct {
        const char *text;
        const char *says;
    } bad[] = {
        {"{\"format_version\": 2, \"cases\": []}", ": format_version: expected 1"},
        {"{\"format_version\": 1, \"cases\": {}}", ": cases: expected an array"},
        {"{\"format_version\": 1, \"cases\": [], \"shard\": {\"index\": 3, \"count\": 2}}",
         ": shard: expected {\"index\": I, \"count\": N} with 1 <= I <= N"},
        {"{\"format_version\": 1, \"cases\": [{\"name\": \"x\"}]}", ": cases[0]: expected name"},
        {"{\"format_version\": 1, \"cases\": [{\"name\": \"x\", \"path\": \"x.case\", "
         "\"kind\": \"kernel\", \"family\": \"det\", \"reference_threads\": 1, "
         "\"as_expected\": true, \"runs\": [{\"threads\": 1}]}]}",
         ": cases[0].runs[0]: expected a run object"},
        {"{\"format_version\": 1, \"cases\": [{\"name\": \"x\", \"path\": \"x.case\", "
         "\"kind\": \"kernel\", \"family\": \"det\", \"reference_threads\": 1, "
         "\"as_expected\": true, \"runs\": [{\"threads\": 1, \"axis\": \"bogus\"}]}]}",
         ": cases[0].runs[0]: expected a run object"},
        {"{\"format_version\": 1, \"cases\": [", ":1:"},
    };
    char path[512], err[512];
    path_in_dir(path, sizeof path, "bad.json");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(bad[i].text, f);
        fclose(f);
        sb_report rep;
        ck_assert_int_eq(sb_report_json_read(&rep, path, err, sizeof err), SB_ERR_INPUT);
        ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strstr(err, bad[i].says),
                      "case %zu: \"%s\"", i, err);
        ck_assert_int_eq(rep.n, 0);
        ck_assert_ptr_null(rep.results);
    }
}
END_TEST

static const char junit_script[] =
    "import sys, xml.etree.ElementTree as ET\n"
    "root = ET.parse(sys.argv[1]).getroot()\n"
    "assert root.tag == 'testsuites' and root.get('tests') == '7' and root.get('failures') == '1'\n"
    "assert root.get('errors') == '1' and root.get('skipped') is None\n"
    "k, t, c = root.findall('testsuite')\n"
    "ids = {p.get('value') for s in (k, t, c) for p in s.find('properties') if p.get('name') == 'sweep_id'}\n"
    "assert len(ids) == 1 and len(ids.pop()) == 16, ids\n"
    "assert k.get('skipped') == '0' and [p.get('name') for p in k.find('properties')] == ['sweep_id']\n"
    "assert c.get('failures') == '0' and c.get('skipped') == '1'\n"
    "assert [(p.get('name'), p.get('value')) for p in c.find('properties')][1:] == [('max_steps', '2')]\n"
    "cc = c.findall('testcase')\n"
    "assert cc[0].find('skipped') is None and cc[0].find('failure') is None\n"
    "assert cc[1].find('skipped').text == 'expected beyond-bound, not reached in the first 2 steps'\n"
    "assert k.get('name') == 'odd \"name\"\\\\ <&>\\t#1 \\ufffd', repr(k.get('name'))\n"
    "assert k.get('failures') == '1' and k.get('errors') == '1' and t.get('failures') == '0'\n"
    "cases = k.findall('testcase')\n"
    "assert [c.get('name') for c in cases] == "
    "['threads=1 repeat=1', 'threads=2 repeat=1', 'threads=4 repeat=2', 'threads=8 repeat=1']\n"
    "assert [c.find('failure') is not None for c in cases] == [False, True, False, False]\n"
    "assert [c.find('error') is not None for c in cases] == [False, False, False, True]\n"
    "f = cases[1].find('failure')\n"
    "assert f.get('message') == 'expected identical, got reordering at step 0 y (dense_fwd)'\n"
    "assert 'first divergence: step 0 y (dense_fwd)' in cases[1].find('system-out').text\n"
    "assert 'beyond' not in cases[1].find('system-out').text\n"
    "assert '(within the reordering bound)' in cases[1].find('system-out').text\n"
    "assert cases[2].find('system-out') is not None\n"
    "e = cases[3].find('error')\n"
    "assert e.get('type') == 'crash'\n"
    "assert 'signal 11 \"SIGSEGV\"\\nsee <stderr>' in e.get('message'), e.get('message')\n"
    "where = 'killed by signal 11 (Segmentation fault) at step 2 in op relu_fwd (z), after probe y'\n"
    "assert cases[3].find('system-err').text == where + '\\nstderr: boom.c:3: assertion <failed>'\n"
    "assert all(c.find('system-err') is None for c in cases[:3])\n";

START_TEST(junit_parses_and_escapes)
{
    char path[512];
    path_in_dir(path, sizeof path, "report.xml");
    ck_assert_int_eq(sb_report_junit(path, results, 3), SB_OK);
    dir_holds_only("report.xml");
    const char *s = file_read(path);
    ck_assert_ptr_nonnull(strstr(s, "<testsuite name=\"odd &quot;name&quot;\\ &lt;&amp;&gt;&#9;#1 \xef\xbf\xbd\""));
    ck_assert(python_check(junit_script, path));
}
END_TEST

/* Reports to a device are written in place: /dev/null stays a device
 * (a rename over it would leave a regular file there); /dev/full says why
 * it failed, with the file. */
START_TEST(reports_to_devices)
{
    ck_assert_int_eq(sb_report_json("/dev/null", results, 3, NULL), SB_OK);
    ck_assert_int_eq(sb_report_junit("/dev/null", results, 3), SB_OK);
    struct stat st;
    ck_assert_int_eq(stat("/dev/null", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    ck_assert_int_eq(sb_report_json("/dev/full", results, 3, NULL), SB_ERR_IO);
    ck_assert_str_eq(sb_report_error(), "/dev/full: cannot write: No space left on device");
    ck_assert_int_eq(stat("/dev/full", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
}
END_TEST

static char *stream_report(void (*writer)(FILE *, const sb_case_result *, int))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    writer(f, results, 3);
    fclose(f);
    return buf;
}

static int count_lines_starting(const char *s, const char *prefix)
{
    int n = 0;
    size_t k = strlen(prefix);
    for (const char *line = s; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        n += strncmp(line, prefix, k) == 0;
    return n;
}

START_TEST(tap_plan_and_lines)
{
    char *s = stream_report(sb_report_tap);
    ck_assert_msg(strncmp(s, "TAP version 13\n1..7\n", 20) == 0, "%s", s);
    ck_assert_int_eq(count_lines_starting(s, "ok "), 5);
    ck_assert_int_eq(count_lines_starting(s, "not ok "), 2);
    ck_assert_ptr_nonnull(strstr(s, "\nok 1 - odd \"name\"\\ <&>\t\\#1 \xff threads=1 repeat=1: identical\n"));
    ck_assert_ptr_nonnull(strstr(s, "\nnot ok 2 - odd \"name\"\\ <&>\t\\#1 \xff threads=2 repeat=1:"
                                    " reordering (expected identical)\n# first divergence: step 0 y (dense_fwd)"));
    ck_assert_ptr_nonnull(strstr(s, "\nnot ok 4 - "));
    /* the crash message's newline does not end its diagnostic line */
    ck_assert_ptr_nonnull(strstr(s, "\n# killed by signal 11 \"SIGSEGV\" see <stderr>\n"
                                    "# killed by signal 11 (Segmentation fault) at step 2 in op "
                                    "relu_fwd (z), after probe y\n"));
    ck_assert_ptr_nonnull(strstr(s, "\nok 5 - mnist_det threads=2 repeat=1: identical\n"));
    ck_assert_ptr_nonnull(strstr(s, "\nok 6 - mnist_cut threads=1 repeat=1: identical (first 2 steps)\n"));
    /* not reached: neither a pass nor a failure, which TAP calls a skip */
    ck_assert_ptr_nonnull(strstr(s, "\nok 7 - mnist_cut threads=2 repeat=1: identical # SKIP expected"
                                    " beyond-bound, not reached in the first 2 steps\n"));
    free(s);
}
END_TEST

START_TEST(text_table_and_summary)
{
    char *s = stream_report(sb_report_text);
    ck_assert_ptr_nonnull(strstr(s, "step 0 y (dense_fwd)"));
    ck_assert_ptr_nonnull(strstr(s, "identical *"));          /* the mismatch mark */
    ck_assert_ptr_nonnull(strstr(s, "12/4096"));
    ck_assert_ptr_nonnull(strstr(s, "test loss"));
    ck_assert_ptr_nonnull(strstr(s, "0.0625"));
    ck_assert_ptr_nonnull(strstr(s, "\n" ODD_NAME ": NOT as expected (2 of 4 runs)\n"));
    ck_assert_ptr_nonnull(strstr(s, "\nmnist_det: as expected\n"));
    ck_assert_ptr_nonnull(strstr(s, "case mnist_cut (train, det, reference 1 thread, truncated: "
                                    "first 2 steps compared, no metrics)\n"));
    ck_assert_ptr_nonnull(strstr(s, "beyond-bound ?"));       /* the not-reached mark */
    ck_assert_ptr_nonnull(strstr(s, "\n? not reached: "));
    ck_assert_ptr_nonnull(strstr(s, "\nmnist_cut: as expected in the first 2 steps; 1 of 2 runs "
                                    "not reached\n"));
    /* a dead run: where in its row, how, where and its stderr below it */
    ck_assert_ptr_nonnull(strstr(s, "  crash         identical *     died at step 2 in relu_fwd  "));
    ck_assert_ptr_nonnull(strstr(s, "\n                killed by signal 11 (Segmentation fault) at "
                                    "step 2 in op relu_fwd (z), after probe y\n"
                                    "                stderr: boom.c:3: assertion <failed>\n"));
    free(s);
}
END_TEST

/* A first divergence longer than its column's usual width, and a run of a
 * millisecond: the columns widen and stay aligned (every line of the table
 * ends at the same place: its last column is right-aligned), and the
 * seconds keep three decimals. */
START_TEST(text_columns_stay_aligned)
{
    sb_run_result runs[2] = {
        {.threads = 1, .repeat = 1, .seconds = 0.0012},
        {.threads = 2, .repeat = 1, .verdict = SB_VERDICT_BEYOND_BOUND,
         .expected = SB_VERDICT_IDENTICAL, .seconds = 12.5},
    };
    located(&runs[1].div, "dense1.fwd.out_with_a_long_probe_name", "dense_fwd");
    runs[1].div.reference_unreproduced = true;
    sb_case_result one = {.c = &kernel_case, .runs = runs, .n_runs = 2};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    sb_report_text(f, &one, 1);
    fclose(f);
    char *header = strstr(buf, "threads repeat");
    ck_assert_ptr_nonnull(header);
    size_t width = strcspn(header, "\n");
    char *row = header + width + 1;
    for (int i = 0; i < 2; i++) {
        size_t w = strcspn(row, "\n");
        ck_assert_msg(w == width, "row %d is %zu wide, the header %zu:\n%s", i, w, width, buf);
        row += w + 1;
    }
    ck_assert_ptr_nonnull(strstr(buf, "reference not reproduced  y  "));
    ck_assert_ptr_nonnull(strstr(buf, "  0.001\n"));
    ck_assert_ptr_nonnull(strstr(buf, "  12.50\n"));
    free(buf);
}
END_TEST

/* A user's kernel accepting identical or reordering: the row names the
 * member it matched, a verdict outside the set shows the set, and both
 * survive the JSON; its family is "user". */
START_TEST(expected_sets_and_user_kernels)
{
    sb_verdict_set set = SB_VERDICT_BIT(SB_VERDICT_IDENTICAL) |
                         SB_VERDICT_BIT(SB_VERDICT_REORDERING);
    kernel_case.user = true;
    kernel_runs[1].expected = SB_VERDICT_REORDERING;
    kernel_runs[1].expected_set = set;
    kernel_runs[2].expected = SB_VERDICT_IDENTICAL;
    kernel_runs[2].expected_set = set;
    ck_assert_int_eq(sb_run_outcome(&kernel_runs[1]), SB_OUTCOME_AS_EXPECTED);
    ck_assert_int_eq(sb_run_outcome(&kernel_runs[2]), SB_OUTCOME_NOT_AS_EXPECTED);
    char *s = stream_report(sb_report_text);
    ck_assert_ptr_nonnull(strstr(s, "(kernel, user, reference 1 thread)"));
    ck_assert_ptr_nonnull(strstr(s, "  reordering    reordering      "));
    ck_assert_ptr_nonnull(strstr(s, "  beyond-bound  identical|reordering *  "));
    ck_assert_ptr_nonnull(strstr(s, "\nexpected identical|reordering at threads 2: "));
    free(s);

    char path[512], err[512] = "";
    path_in_dir(path, sizeof path, "sets.json");
    ck_assert_int_eq(sb_report_json(path, results, 1, NULL), SB_OK);
    sb_report rep;
    ck_assert_msg(sb_report_json_read(&rep, path, err, sizeof err) == SB_OK, "%s", err);
    ck_assert(rep.cases[0].user);
    for (int j = 0; j < results[0].n_runs; j++)
        same_run(&results[0].runs[j], &rep.results[0].runs[j]);
    sb_report_free(&rep);

    char name[96];
    sb_verdict_set_name(set | SB_VERDICT_BIT(SB_VERDICT_NONDETERMINISTIC), name, sizeof name);
    ck_assert_str_eq(name, "identical|reordering|nondeterministic");
    ck_assert_uint_eq(sb_verdict_set_from_name("reordering|identical"), set);
    ck_assert_uint_eq(sb_verdict_set_from_name("identical|"), 0);
    ck_assert_uint_eq(sb_verdict_set_from_name("identical|same"), 0);
    ck_assert_int_eq(sb_verdict_set_first(set), SB_VERDICT_IDENTICAL);
}
END_TEST

/* A difference in a user's op that dumped no bound: every report calls it
 * unbounded, names the op and says what to add, the JSON's bound_ratio is
 * null and reads back as no bound, and the sweep is not as expected. */
START_TEST(unbounded_in_every_report)
{
    sb_run_result runs[2] = {
        {.threads = 1, .repeat = 1, .seconds = 0.25},
        {.threads = 2, .repeat = 1, .verdict = SB_VERDICT_UNBOUNDED,
         .expected = SB_VERDICT_REORDERING, .seconds = 0.5},
    };
    located(&runs[1].div, "ln.grad.weight", "layer_norm_bwd");
    runs[1].div.elem.bounded = false;
    runs[1].div.elem.within_bound = false;
    runs[1].div.elem.bound_ratio = 0.0;
    runs[1].div.elem.max_abs = 0x1p-21;
    runs[1].div.elem.max_ulp = 3;
    runs[1].origins = (sb_origins){.count = 1, .n = 1, .located = 1, .worst = 0};
    runs[1].origins.list[0] = runs[1].div;
    ck_assert_int_eq(sb_divergence_verdict(&runs[1].div), SB_VERDICT_UNBOUNDED);
    ck_assert_ptr_eq(sb_run_unbounded_at(&runs[1]), &runs[1].origins.list[0]);
    ck_assert_ptr_null(sb_run_unbounded_at(&runs[0]));
    sb_case_result one = {.c = &kernel_case, .runs = runs, .n_runs = 2};
    ck_assert_int_eq(sb_sweep_exit(&one, 1, false), SB_EXIT_UNEXPECTED);
    const char *why = "no bound is known for op layer_norm_bwd (step 0 ln.grad.weight): its "
                      "elements differ and a reordering cannot be told from a bug; supply the "
                      "op's bound (ln.grad.weight.bound.npy beside its dump";

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    sb_report_text(f, &one, 1);
    fclose(f);
    ck_assert_msg(strstr(buf, "  unbounded     reordering *") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "  no bound  ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "\nthreads 2 repeat 1: unbounded: ") != NULL && strstr(buf, why),
                  "%s", buf);
    ck_assert_ptr_nonnull(strstr(buf, ": NOT as expected (1 of 2 runs)\n"));
    free(buf);

    f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    sb_report_tap(f, &one, 1);
    fclose(f);
    ck_assert_msg(strstr(buf, "threads=2 repeat=1: unbounded (expected reordering)\n") != NULL,
                  "%s", buf);
    ck_assert_msg(strstr(buf, "max ULP 3, no bound known\n") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "\n# unbounded: no bound is known for op layer_norm_bwd") != NULL,
                  "%s", buf);
    free(buf);

    char path[512], err[512] = "";
    path_in_dir(path, sizeof path, "unbounded.xml");
    ck_assert_int_eq(sb_report_junit(path, &one, 1), SB_OK);
    const char *x = file_read(path);
    ck_assert_msg(strstr(x, "<failure type=\"unbounded\" message=\"expected reordering, got "
                            "unbounded: no bound is known for op layer_norm_bwd") != NULL,
                  "%s", x);
    ck_assert_msg(strstr(x, "max ULP 3, no bound known for op layer_norm_bwd") != NULL, "%s", x);

    path_in_dir(path, sizeof path, "unbounded.json");
    ck_assert_int_eq(sb_report_json(path, &one, 1, NULL), SB_OK);
    ck_assert_msg(strstr(file_read(path), "\"bound_ratio\": null") != NULL, "%s",
                  file_read(path));
    sb_report rep;
    ck_assert_msg(sb_report_json_read(&rep, path, err, sizeof err) == SB_OK, "%s", err);
    for (int j = 0; j < 2; j++)
        same_run(&runs[j], &rep.results[0].runs[j]);
    ck_assert_int_eq(rep.results[0].runs[1].verdict, SB_VERDICT_UNBOUNDED);
    ck_assert_int_eq(sb_divergence_verdict(&rep.results[0].runs[1].div), SB_VERDICT_UNBOUNDED);
    sb_report_free(&rep);
}
END_TEST

static const char axes_script[] =
    "import json, sys\n"
    "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "runs = d['cases'][0]['runs']\n"
    "got = [(r['axis'], r['batch'], r['ranks'], r['threads']) for r in runs]\n"
    "assert got == [('threads', 0, 1, 1), ('batch', 16, 1, 2), ('ranks', 0, 3, 4),"
    " ('threads', 0, 1, 8)], got\n";

/* Runs off the threads axis: every report names each run's axis, and the
 * JSON report reads back with it. */
START_TEST(axes_in_reports)
{
    kernel_runs[1].axis = SB_AXIS_BATCH;
    kernel_runs[1].batch = 16;
    kernel_runs[1].ranks = 1;
    kernel_runs[2].axis = SB_AXIS_RANKS;
    kernel_runs[2].ranks = 3;
    char *s = stream_report(sb_report_text);
    ck_assert_ptr_nonnull(strstr(s, "\naxis      threads repeat  verdict"));
    ck_assert_ptr_nonnull(strstr(s, "\nthreads         1      1  identical"));
    ck_assert_ptr_nonnull(strstr(s, "\nbatch 16        2      1  reordering"));
    ck_assert_ptr_nonnull(strstr(s, "\nranks 3         4      2  beyond-bound"));
    ck_assert_ptr_nonnull(strstr(s, "\nthreads repeat  verdict"));  /* a thread sweep: no axis column */
    free(s);
    s = stream_report(sb_report_tap);
    ck_assert_ptr_nonnull(strstr(s, " batch=16 threads=2 repeat=1: reordering"));
    ck_assert_ptr_nonnull(strstr(s, " ranks=3 threads=4 repeat=2: beyond-bound"));
    free(s);

    char path[512], err[512] = "";
    path_in_dir(path, sizeof path, "axes.xml");
    ck_assert_int_eq(sb_report_junit(path, results, 1), SB_OK);
    s = file_read(path);
    ck_assert_ptr_nonnull(strstr(s, "name=\"batch=16 threads=2 repeat=1\""));
    ck_assert_ptr_nonnull(strstr(s, "name=\"ranks=3 threads=4 repeat=2\""));
    ck_assert_ptr_nonnull(strstr(s, "name=\"threads=8 repeat=1\""));
    unlink(path);

    path_in_dir(path, sizeof path, "axes.json");
    ck_assert_int_eq(sb_report_json(path, results, 1, NULL), SB_OK);
    ck_assert(python_check(axes_script, path));
    sb_report rep;
    ck_assert_msg(sb_report_json_read(&rep, path, err, sizeof err) == SB_OK, "%s", err);
    for (int j = 0; j < results[0].n_runs; j++)
        same_run(&results[0].runs[j], &rep.results[0].runs[j]);
    sb_report_free(&rep);

    ck_assert_str_eq(sb_axis_name(SB_AXIS_BATCH), "batch");
    ck_assert_int_eq(sb_axis_from_name("ranks"), SB_AXIS_RANKS);
    ck_assert_int_eq(sb_axis_from_name("rank"), SB_AXIS_COUNT);
}
END_TEST

Suite *make_report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, json_parses_and_escapes);
    tcase_add_test(tc, json_unwritable);
    tcase_add_test(tc, json_reads_back);
    tcase_add_test(tc, json_read_refuses);
    tcase_add_test(tc, junit_parses_and_escapes);
    tcase_add_test(tc, reports_to_devices);
    tcase_add_test(tc, tap_plan_and_lines);
    tcase_add_test(tc, text_table_and_summary);
    tcase_add_test(tc, text_columns_stay_aligned);
    tcase_add_test(tc, expected_sets_and_user_kernels);
    tcase_add_test(tc, axes_in_reports);
    tcase_add_test(tc, unbounded_in_every_report);
    suite_add_tcase(s, tc);
    return s;
}
