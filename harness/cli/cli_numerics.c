/* samebits numerics: each case once, in this process, with every kernel
 * op's output recomputed in double and judged against the op's error bound. */
#include <string.h>

#include "cli.h"
#include "numerics/numerics.h"

static const char numerics_usage[] =
    "usage: samebits numerics CASE... [--family F] [--threads N] [--json FILE]\n"
    "                         [--all-probes] [--data-dir DIR]\n"
    "\n"
    "Runs each case once in this process (family F, default the case's; N\n"
    "threads, default the case's reference) and at every probe of a kernel op\n"
    "recomputes the op in double from its own float inputs: max abs, relative\n"
    "and ULP error, and the ratio to the op's forward error bound (above 1: a\n"
    "numerics failure). Reports the first NaN or infinity with the op and the\n"
    "inputs that made it. A case's [numerics] section may swap in a numerics\n"
    "mutant, set input ranges and state the expected finding (clean by\n"
    "default). The text table shows the worst probe of each step and every\n"
    "probe beyond bound (--all-probes: every probe). See harness/NUMERICS.md.\n"
    "exit status: 0 every finding as expected, 1 a finding not expected,\n"
    "             2 usage or input error\n";

typedef struct numerics_args {
    const char **cases;
    int n_cases;
    const char *family, *threads, *json, *data_dir;
    bool all_probes;
} numerics_args;

static bool numerics_parse(numerics_args *a, int argc, char **argv, int *rc)
{
    const sb_option options[] = {
        {"--family", &a->family, NULL}, {"--threads", &a->threads, NULL},
        {"--json", &a->json, NULL},     {"--data-dir", &a->data_dir, NULL},
        {"--all-probes", NULL, &a->all_probes}, {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "numerics", .usage = numerics_usage, .options = options,
                  .positional = a->cases, .min_positional = 1, .max_positional = argc};
    bool go = cli_line_parse(&l, argc, argv, rc);
    a->n_cases = l.n_positional;
    if (go && !cli_outputs_writable("numerics", &a->json, 1)) {
        *rc = SB_EXIT_INPUT;
        return false;
    }
    return go;
}

typedef struct case_slot {
    sb_case c;
    sb_numerics_case nc;
    sb_numerics_result r;
    sb_numerics_golden g;
} case_slot;

static bool as_expected(const sb_numerics_result *r, const sb_numerics_case *nc)
{
    if (sb_numerics_finding_of(r) != nc->expect)
        return false;
    return !nc->expect_probe[0] || strcmp(nc->expect_probe, sb_numerics_finding_probe(r)) == 0;
}

/* Runs and reports every case; the exit status. */
static int numerics_cases(const numerics_args *a, case_slot *slots,
                          sb_numerics_case_report *reports)
{
    int rc = SB_EXIT_OK;
    sb_family family = SB_FAMILY_COUNT;
    int64_t threads = 0;
    if (a->family && (family = sb_family_from_name(a->family)) == SB_FAMILY_COUNT) {
        fprintf(stderr, "--family: expected ref, det or loose, got '%s'\n", a->family);
        return SB_EXIT_INPUT;
    }
    if (a->threads &&
        !cli_parse_int("numerics", a->threads, 1, SB_MAX_THREADS, &threads, "--threads"))
        return SB_EXIT_INPUT;
    const char *data_dir = cli_data_dir(a->data_dir);

    int done = 0;
    for (int i = 0; rc == SB_EXIT_OK && i < a->n_cases; i++) {
        case_slot *s = &slots[i];
        char err[512];
        if (!cli_case_load(&s->c, a->cases[i])) {
            rc = SB_EXIT_INPUT;
            break;
        }
        if (sb_numerics_case_load(&s->nc, &s->c, err, sizeof err) != SB_OK) {
            fprintf(stderr, "%s\n", err);
            rc = SB_EXIT_INPUT;
            break;
        }
        const sb_family f = family != SB_FAMILY_COUNT ? family : s->c.family;
        const int t = threads > 0 ? (int)threads : s->c.reference_threads;
        sb_status st = sb_numerics_run_case(&s->c, &s->nc, f, t, data_dir, &s->r, &s->g, err,
                                            sizeof err);
        if (st != SB_OK) {
            fprintf(stderr, "%s\n", err);
            sb_numerics_result_free(&s->r);
            rc = SB_EXIT_INPUT;
            break;
        }
        reports[i] = (sb_numerics_case_report){&s->c, &s->nc, &s->r, &s->g, t,
                                               as_expected(&s->r, &s->nc)};
        sb_numerics_report_text(stdout, &reports[i], a->all_probes);
        fflush(stdout);
        done = i + 1;
    }
    if (rc == SB_EXIT_OK) {
        for (int i = 0; i < done; i++)
            if (!reports[i].as_expected)
                rc = SB_EXIT_UNEXPECTED;
        if (a->json && sb_numerics_report_json(a->json, reports, done) != SB_OK) {
            fprintf(stderr, "samebits numerics: the JSON report: %s\n", sb_report_error());
            rc = SB_EXIT_INPUT;
        }
    }
    for (int i = 0; i < done; i++)
        sb_numerics_result_free(&slots[i].r);
    return rc;
}

int cli_numerics(int argc, char **argv)
{
    numerics_args a = {0};
    a.cases = calloc((size_t)argc, sizeof *a.cases);
    case_slot *slots = calloc((size_t)argc, sizeof *slots);
    sb_numerics_case_report *reports = calloc((size_t)argc, sizeof *reports);
    int rc = SB_EXIT_INPUT;
    if (!a.cases || !slots || !reports)
        fprintf(stderr, "samebits numerics: out of memory\n");
    else if (numerics_parse(&a, argc, argv, &rc))
        rc = numerics_cases(&a, slots, reports);
    free(a.cases), free(slots), free(reports);
    return rc;
}
