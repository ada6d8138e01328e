/* samebits diff: the first divergent probe of two trace files. */
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char diff_usage[] =
    "usage: samebits diff TRACE_A TRACE_B [--dumps DIR_A,DIR_B]\n"
    "\n"
    "Reads two traces (or goldens) and prints the first probe, in program\n"
    "order, whose hash, name or shape differs. No re-run, no element diff:\n"
    "that is `samebits locate`.\n"
    "--dumps DIR_A,DIR_B: the divergent probe dumped by a re-run of each side\n"
    "  (<probe>.npy, <probe>.bound.npy, as `run --dump` writes them), for traces\n"
    "  that have no case to re-run (a foreign framework's); prints the element\n"
    "  diff and the verdict.\n"
    "exit status: 0 identical, 1 they diverge, 2 usage or input error\n";

/* Reads DIR/<probe>.npy and checks it is the record's tensor: a dump from a
 * re-run that did not repeat the traced run cannot vouch for it. */
static sb_status dump_read(sb_tensor *t, const char *dir, const sb_record *r, bool *same,
                           char *err, size_t errlen)
{
    char path[1024];
    if ((size_t)snprintf(path, sizeof path, "%s/%s.npy", dir, r->name) >= sizeof path) {
        snprintf(err, errlen, "%.300s: dump path too long", dir);
        return SB_ERR_USAGE;
    }
    sb_status st = sb_npy_read(path, t, err, errlen);
    if (st != SB_OK)
        return st;
    sb_hash h = sb_hash_tensor(t);
    *same = sb_hash_equal(&h, &r->hash);
    if (!*same)
        fprintf(stderr, "%s: not the traced tensor (its hash differs from the record's)\n",
                path);
    return SB_OK;
}

/* The element diff of the divergent probe from the two sides' dumps, the
 * bound from side A's <probe>.bound.npy (none there: no bound known). */
static sb_status dumps_classify(sb_divergence *d, const sb_trace *a, const sb_trace *b,
                                const char *dirs, char *err, size_t errlen)
{
    char dir_a[512];
    const char *comma = strchr(dirs, ',');
    if (!comma || (size_t)(comma - dirs) >= sizeof dir_a || comma == dirs || !comma[1]) {
        snprintf(err, errlen, "--dumps: expected DIR_A,DIR_B, found \"%s\"", dirs);
        return SB_ERR_USAGE;
    }
    snprintf(dir_a, sizeof dir_a, "%.*s", (int)(comma - dirs), dirs);
    const sb_record *ra = &a->records[d->index], *rb = &b->records[d->index];
    sb_tensor ta = {0}, tb = {0}, bound = {0};
    bool same_a = false, same_b = false;
    sb_status st = dump_read(&ta, dir_a, ra, &same_a, err, errlen);
    if (st == SB_OK)
        st = dump_read(&tb, comma + 1, rb, &same_b, err, errlen);
    char path[1024];
    bool have_bound = st == SB_OK && ta.dtype == SB_DTYPE_F32 &&
                      (size_t)snprintf(path, sizeof path, "%s/%s.bound.npy", dir_a, ra->name) <
                          sizeof path &&
                      access(path, F_OK) == 0;
    if (have_bound) {
        st = sb_npy_read(path, &bound, err, errlen);
        if (st == SB_OK && (bound.dtype != SB_DTYPE_F32 ||
                            sb_tensor_count(&bound) != sb_tensor_count(&ta))) {
            snprintf(err, errlen, "%.300s: bound is not f32 with %zu elements", path,
                     sb_tensor_count(&ta));
            st = SB_ERR_SHAPE;
        }
    }
    /* only dumps whose hashes match the records (and so their dtypes and
     * shapes) are compared */
    d->nondeterministic = st == SB_OK && (!same_a || !same_b);
    if (st == SB_OK && !d->nondeterministic) {
        if (ta.dtype == SB_DTYPE_F32)
            sb_elem_diff_f32(&d->elem, ta.data, tb.data, have_bound ? bound.data : NULL,
                             sb_tensor_count(&ta));
        else
            sb_elem_diff_ints(&d->elem, &ta, &tb);
        d->have_elements = true;
    }
    free(ta.data);
    free(tb.data);
    free(bound.data);
    return st;
}

int cli_diff(int argc, char **argv)
{
    const char *paths[2], *dumps = NULL;
    const sb_option options[] = {{"--dumps", &dumps, NULL}, {NULL, NULL, NULL}};
    cli_line l = {.cmd = "diff", .usage = diff_usage, .options = options,
                  .positional = paths, .min_positional = 2, .max_positional = 2};
    int rc;
    if (!cli_line_parse(&l, argc, argv, &rc))
        return rc;
    sb_trace a, b;
    sb_trace_init(&a);
    sb_trace_init(&b);
    char err[512] = "";
    rc = SB_EXIT_INPUT;
    if (sb_trace_read(&a, paths[0], err, sizeof err) != SB_OK ||
        sb_trace_read(&b, paths[1], err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        goto done;
    }
    sb_divergence d;
    sb_trace_compare(&a, &b, &d);
    if (!d.found) {
        printf("identical: %zu probes\n", a.n_records);
        rc = SB_EXIT_OK;
        goto done;
    }
    printf("first divergence: record %zu, step %lld, probe %s (op %s)\n", d.index,
           (long long)d.step, d.probe, d.op);
    if (d.structural)
        printf("  the probe sequence differs here (name, shape or count)\n");
    else if (d.inputs_untraced)
        printf("  its inputs are not all traced: the difference may have come in with an "
               "input no traced op made\n");
    else
        printf("  its inputs are %s\n", d.inputs_identical
                   ? "identical in both: the difference arises in this op"
                   : "not identical: the difference came in from upstream");
    rc = SB_EXIT_UNEXPECTED;
    if (dumps && !d.structural) {
        if (dumps_classify(&d, &a, &b, dumps, err, sizeof err) != SB_OK) {
            fprintf(stderr, "%s\n", err);
            rc = SB_EXIT_INPUT;
            goto done;
        }
        const sb_elem_diff *e = &d.elem;
        char bound[384];
        sb_elem_bound_text(bound, sizeof bound, e);
        if (d.have_elements)
            printf("  %zu of %zu elements differ, max abs %.3g, max ULP %.3g, %s\n",
                   e->differing, e->total, e->max_abs, e->max_ulp, bound);
        else
            printf("  the dumps are not the traced tensors (re-runs did not repeat the runs)\n");
        sb_verdict v = sb_divergence_verdict(&d);
        printf("verdict: %s\n", sb_verdict_name(v));
        if (v == SB_VERDICT_UNBOUNDED) {
            char why[512];
            sb_unbounded_text(why, sizeof why, &d);
            printf("  %s\n", why);
        }
    }
done:
    sb_trace_free(&a);
    sb_trace_free(&b);
    return rc;
}
