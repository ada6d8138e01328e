/* samebits decode: the decode comparison of a trained char_gpt case
 * (harness/decode/decode.h): every position's tensors from the training
 * forward pass, prefill, incremental decoding and decoding in batches of
 * other requests, at each thread count, judged against the training
 * forward pass at one thread. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "decode/decode.h"
#include "decode/decode_greedy.h"
#include "mutants/decode_mutants.h"

static const char decode_usage[] =
    "usage: samebits decode CASE [--threads LIST] [--prompt P] [--positions LIST]\n"
    "                            [--seed S] [--mutant NAME] [--data-dir DIR]\n"
    "       samebits decode CASE --completions N [--threads T] [--prompt P] [--seed S]\n"
    "\n"
    "Trains the char_gpt case CASE (det or loose) once at one thread, then\n"
    "computes the tensors of every position of one sequence (the first context\n"
    "characters of the validation text) six ways at each thread count of LIST\n"
    "(default 1,2,4,8): train (the training forward pass, the sequence one\n"
    "window of a batch), prefill (the sequence as one prompt), incremental (a\n"
    "prefill of P tokens, default 8, then one token a step with the KV cache),\n"
    "and batch+1, batch+3, batch+15 (the same in a batch with 1, 3, 15 other\n"
    "requests of other lengths, drawn with seed S, default 1). Each is judged\n"
    "against train at one thread: its first divergent tensor, its origins and\n"
    "the worst origin's verdict, and the largest logit difference at the\n"
    "positions of LIST (default P-1, P, the middle and the last). --mutant runs\n"
    "a det case with decode mutant NAME (kernels/mutants/mutants.def).\n"
    "\n"
    "With --completions: the greedy experiment instead. N greedy completions of\n"
    "the prompt (the first P characters of the validation text) from the\n"
    "trained weights, with det's kernels and then loose's, at T threads (the\n"
    "first of the list), each decoded in a batch of other requests that join\n"
    "and leave at random (seed S); how many distinct completions, where each\n"
    "first parted from the first, the largest logit difference before it\n"
    "parted, the smallest gap between the first completion's two most likely\n"
    "tokens, and the time per decode step.\n"
    "exit status: 0 det identical everywhere, or loose with no verdict worse\n"
    "than reordering; 1 otherwise; 2 usage or input error\n";

#define MAX_POSITIONS 8

typedef struct decode_args {
    const sb_case *c;
    const char *path;           /* the case file */
    const int *threads;
    int n_threads;
    int prompt;
    int positions[MAX_POSITIONS];
    int n_positions;
    uint64_t seed;
    int mutant;                 /* a decode mutant's index, or -1 */
    int completions;            /* > 0: the greedy experiment */
    bool failed, input_error, unexpected;
} decode_args;

static void describe(char *out, size_t len, const sb_divergence *d)
{
    if (!d->found) {
        snprintf(out, len, "-");
        return;
    }
    snprintf(out, len, "%s (%s)", d->probe, d->op);
}

/* A path's line: judged against train at one thread (the verdict that
 * counts), and its first divergence from train at its own thread count
 * (same, what the path alone changes). */
static void row_print(const decode_args *a, int threads, sb_decode_path p,
                      const sb_decode_trace *ref, const sb_decode_trace *same,
                      const sb_decode_trace *run)
{
    sb_decode_judgement j, js;
    sb_decode_judge(&j, ref, run);
    sb_decode_judge(&js, same, run);
    char first[200], alone[200], worst[512] = "-";
    describe(first, sizeof first, &j.first);
    describe(alone, sizeof alone, &js.first);
    if (j.worst.found) {
        char b[64];
        sb_elem_bound_text(b, sizeof b, &j.worst.elem);
        snprintf(worst, sizeof worst, "%s (%s) %s, %zu elements, max abs %.3g, %s",
                 j.worst.probe, j.worst.op, sb_verdict_name(sb_divergence_verdict(&j.worst)),
                 j.worst.elem.differing, j.worst.elem.max_abs, b);
    }
    printf("%-7d %-12s %-12s %-26s %7d  %-12s %-26s ", threads, sb_decode_path_name(p),
           sb_verdict_name(j.verdict), first, j.origins, sb_verdict_name(js.verdict), alone);
    for (int i = 0; i < a->n_positions; i++) {
        bool moved;
        double m = sb_decode_logit_diff(ref, run, a->positions[i], &moved);
        printf(" %8.2g%s", m, moved ? "*" : " ");
    }
    printf("  %s\n", worst);
    const bool det = a->c->family == SB_FAMILY_DET;
    if (det ? j.verdict != SB_VERDICT_IDENTICAL
            : sb_verdict_rank(j.verdict) > sb_verdict_rank(SB_VERDICT_REORDERING))
        ((decode_args *)(uintptr_t)a)->unexpected = true;
}

static void compare(void *ctx, sb_gpt *g, const sb_text *val)
{
    decode_args *a = ctx;
    const sb_case *c = a->c;
    sb_decode_setup s = {
        .g = g,
        .attend = c->family == SB_FAMILY_DET ? sb_attn_decode_det : sb_attn_decode_loose,
        .val = val, .prompt = a->prompt, .seed = a->seed,
    };
    /* train's batch of windows of the validation text */
    if (val->n < (int64_t)g->batch * g->context + 1) {
        fprintf(stderr, "%s: samebits decode needs %d windows of %d characters in the test "
                "range (the batch of the training forward pass); it holds %lld characters\n",
                a->path, g->batch, g->context, (long long)val->n);
        a->failed = a->input_error = true;
        return;
    }
    if (a->mutant >= 0) {
        s.attend = sb_decode_mutant_attend(a->mutant);
        s.fault = sb_decode_mutant_fault_kind(a->mutant);
        printf("decode mutant %s: %s\n", sb_decode_mutant_name(a->mutant),
               sb_decode_mutant_fault(a->mutant));
    }
    printf("case %s (%s): sequence the first %d characters of the validation text, "
           "prompt %d, other requests seed %llu\n",
           c->name, sb_family_name(c->family), g->context, a->prompt,
           (unsigned long long)a->seed);
    printf("reference: train at 1 thread; \"same-threads\": against train at the line's "
           "thread count; * the most likely token differs\n");
    printf("%-7s %-12s %-12s %-26s %7s  %-12s %-26s ", "threads", "path", "verdict",
           "first divergence", "origins", "same-threads", "first divergence");
    for (int i = 0; i < a->n_positions; i++) {
        char h[32];
        snprintf(h, sizeof h, "dlogit@%d", a->positions[i]);
        printf(" %9s", h);
    }
    printf("  worst origin\n");
    omp_set_num_threads(1);
    sb_decode_trace ref;
    if (sb_decode_path_run(&ref, &s, SB_DECODE_TRAIN) != SB_OK) {
        fprintf(stderr, "samebits decode: out of memory\n");
        a->failed = true;
        sb_decode_trace_free(&ref);
        return;
    }
    for (int k = 0; k < a->n_threads && !a->failed; k++) {
        omp_set_num_threads(a->threads[k]);
        sb_decode_trace same; /* train at this count, the first path */
        bool have_same = false;
        for (int p = 0; p < SB_DECODE_PATH_COUNT; p++) {
            sb_decode_trace run;
            if (sb_decode_path_run(&run, &s, (sb_decode_path)p) != SB_OK) {
                fprintf(stderr, "samebits decode: out of memory\n");
                a->failed = true;
                sb_decode_trace_free(&run);
                break;
            }
            if (p == SB_DECODE_TRAIN)
                same = run, have_same = true;
            row_print(a, a->threads[k], (sb_decode_path)p, &ref, &same, &run);
            if (p != SB_DECODE_TRAIN)
                sb_decode_trace_free(&run);
        }
        if (have_same)
            sb_decode_trace_free(&same);
        fflush(stdout);
    }
    sb_decode_trace_free(&ref);
}

static void text_print(const char *label, const int32_t *t, int n)
{
    printf("%s \"", label);
    for (int i = 0; i < n; i++) {
        char ch = sb_text_char(t[i]);
        if (ch == '\n')
            fputs("\\n", stdout);
        else if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else
            putchar(ch);
    }
    printf("\"\n");
}

/* The greedy experiment with det's kernels, then loose's, on the trained
 * weights. */
static void greedy(void *ctx, sb_gpt *g, const sb_text *val)
{
    decode_args *a = ctx;
    const sb_kernel_table *trained = g->k;
    if (val->n < 2 * (int64_t)g->context + 1) { /* the other requests' windows */
        fprintf(stderr, "%s: samebits decode --completions needs 2 windows of %d characters "
                "in the test range; it holds %lld characters\n", a->path, g->context,
                (long long)val->n);
        a->failed = a->input_error = true;
        return;
    }
    omp_set_num_threads(a->threads[0]);
    printf("case %s (trained %s): %d greedy completions of the first %d characters of the "
           "validation text, %d tokens each, at %d threads, other requests seed %llu\n",
           a->c->name, sb_family_name(a->c->family), a->completions, a->prompt,
           g->context - a->prompt, a->threads[0], (unsigned long long)a->seed);
    printf("%-6s %8s %-32s %11s %11s %9s %9s\n", "family", "distinct",
           "parted at token: completions", "max dlogit", "min margin", "ms/step", "rows/step");
    const sb_family fams[] = {SB_FAMILY_DET, SB_FAMILY_LOOSE};
    sb_greedy r[2];
    for (int f = 0; f < 2; f++) {
        g->k = sb_kernels(fams[f]);
        if (sb_greedy_run(&r[f], g, fams[f] == SB_FAMILY_DET ? sb_attn_decode_det
                                                                : sb_attn_decode_loose,
                          val, a->prompt, a->completions, a->seed) != SB_OK) {
            fprintf(stderr, "samebits decode: out of memory\n");
            a->failed = true;
            if (f == 1)
                sb_greedy_free(&r[0]);
            g->k = trained;
            return;
        }
        char parted[256] = "-";
        size_t used = 0;
        for (int tok = 0; tok < r[f].tokens; tok++) {
            int count = 0;
            for (int c = 0; c < r[f].n; c++)
                count += r[f].parted[c] == tok;
            if (count > 0 && used < sizeof parted - 16)
                used += (size_t)snprintf(parted + used, sizeof parted - used, "%s%d: %d",
                                         used ? ", " : "", tok, count);
        }
        printf("%-6s %8d %-32s %11.3g %11.3g %9.3f %9.2f\n", sb_family_name(fams[f]),
               r[f].distinct, parted, r[f].max_logit_diff, r[f].min_margin,
               1e3 * r[f].seconds / (double)(r[f].steps > 0 ? r[f].steps : 1),
               (double)r[f].rows / (double)(r[f].steps > 0 ? r[f].steps : 1));
    }
    for (int f = 0; f < 2; f++) {
        char label[64];
        snprintf(label, sizeof label, "%s completion 0:", sb_family_name(fams[f]));
        text_print(label, r[f].text, r[f].tokens);
        for (int c = 1, shown = 0; c < r[f].n && shown < 4; c++)
            if (r[f].parted[c] >= 0) {
                bool first = true;
                for (int e = 1; e < c && first; e++)
                    first = r[f].parted[e] < 0 ||
                            memcmp(r[f].text + (size_t)e * (size_t)r[f].tokens,
                                   r[f].text + (size_t)c * (size_t)r[f].tokens,
                                   (size_t)r[f].tokens * sizeof *r[f].text) != 0;
                if (!first)
                    continue;
                snprintf(label, sizeof label, "%s completion %d:", sb_family_name(fams[f]), c);
                text_print(label, r[f].text + (size_t)c * (size_t)r[f].tokens, r[f].tokens);
                shown++;
            }
    }
    if (r[0].distinct != 1)
        a->unexpected = true;
    sb_greedy_free(&r[0]);
    sb_greedy_free(&r[1]);
    g->k = trained;
}

static bool parse_positions(decode_args *a, const char *s, int context)
{
    a->n_positions = 0;
    while (*s) {
        char *end;
        long p = strtol(s, &end, 10);
        if (end == s || p < 0 || p >= context || a->n_positions == MAX_POSITIONS ||
            (*end != ',' && *end != '\0')) {
            fprintf(stderr, "samebits decode: --positions: \"%s\" is not a list of at most %d "
                    "positions in 0..%d\n", s, MAX_POSITIONS, context - 1);
            return false;
        }
        a->positions[a->n_positions++] = (int)p;
        s = *end ? end + 1 : end;
    }
    return a->n_positions > 0;
}

int cli_decode(int argc, char **argv)
{
    const char *case_path = NULL, *threads_s = NULL, *prompt_s = NULL, *positions_s = NULL,
               *seed_s = NULL, *mutant_s = NULL, *data_dir = NULL,
               *completions_s = NULL;
    const sb_option options[] = {
        {"--threads", &threads_s, NULL}, {"--prompt", &prompt_s, NULL},
        {"--positions", &positions_s, NULL}, {"--seed", &seed_s, NULL},
        {"--mutant", &mutant_s, NULL},   {"--data-dir", &data_dir, NULL},
        {"--completions", &completions_s, NULL},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "decode", .usage = decode_usage, .options = options,
                  .positional = &case_path, .min_positional = 1, .max_positional = 1};
    int rc;
    if (!cli_line_parse(&l, argc, argv, &rc))
        return rc;
    int threads[SB_MAX_THREADS] = {1, 2, 4, 8}, n_threads = 4;
    int64_t prompt = 8, seed = 1, completions = 0;
    if ((threads_s && !cli_parse_threads("decode", threads_s, threads, &n_threads, "--threads")) ||
        (seed_s && !cli_parse_int("decode", seed_s, 0, INT64_MAX, &seed, "--seed")) ||
        (completions_s && !cli_parse_int("decode", completions_s, 1, 100000, &completions,
                                         "--completions")))
        return SB_EXIT_INPUT;
    sb_case c;
    if (!cli_case_load(&c, case_path))
        return SB_EXIT_INPUT;
    if (c.kind != SB_CASE_TRAIN || strcmp(c.model, "char_gpt") != 0 ||
        (c.family != SB_FAMILY_DET && c.family != SB_FAMILY_LOOSE)) {
        fprintf(stderr, "%s: samebits decode takes a det or loose training case of model "
                "char_gpt\n", case_path);
        return SB_EXIT_INPUT;
    }
    /* The decoder mirrors the GPT-2 block (gpt_decode.c looks its parameters
     * up by name); a LLaMA-style block has no decode step yet. */
    if (!sb_gpt_block_is_gpt2(&c.train.gpt.block)) {
        fprintf(stderr, "%s: samebits decode: not yet for a char_gpt block other than GPT-2's "
                "(norm, position, mlp, kv_heads, bias)\n", case_path);
        return SB_EXIT_INPUT;
    }
    const int mutant = mutant_s ? sb_decode_mutant_find(mutant_s) : -1;
    if (mutant_s && (mutant < 0 || c.family != SB_FAMILY_DET)) {
        fprintf(stderr, "samebits decode: --mutant: %s\n",
                mutant < 0 ? "not a decode mutant of kernels/mutants/mutants.def"
                           : "a decode mutant runs a det case");
        return SB_EXIT_INPUT;
    }
    const int context = c.train.gpt.context;
    if (prompt_s && !cli_parse_int("decode", prompt_s, 1, context - 1, &prompt, "--prompt"))
        return SB_EXIT_INPUT;
    decode_args a = {.c = &c, .path = case_path, .threads = threads, .n_threads = n_threads,
                     .prompt = (int)prompt, .seed = (uint64_t)seed, .mutant = mutant,
                     .completions = (int)completions};
    if (positions_s) {
        if (!parse_positions(&a, positions_s, context))
            return SB_EXIT_INPUT;
    } else {
        const int def[] = {(int)prompt - 1, (int)prompt, context / 2, context - 1};
        for (int i = 0; i < 4; i++)
            if (def[i] >= 0 && (a.n_positions == 0 || a.positions[a.n_positions - 1] != def[i]))
                a.positions[a.n_positions++] = def[i];
    }
    omp_set_num_threads(1);
    const char *dir = cli_data_dir(data_dir);
    char err[512] = "";
    const sb_model_kind *model = sb_model_find(c.model);
    sb_epoch_metrics *metrics = calloc((size_t)model->evaluations(&c.train), sizeof *metrics);
    if (!metrics) {
        fprintf(stderr, "samebits: out of memory\n");
        return 1;
    }
    sb_model_run r = sb_case_model_run(&c, sb_case_kernels(&c), &c.train, dir);
    sb_gpt_sample s = {.chars = 0, .trained = completions > 0 ? greedy : compare, .ctx = &a};
    int n_metrics = 0;
    sb_status st = sb_gpt_run(&r, metrics, &n_metrics, &s, err, sizeof err);
    free(metrics);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err[0] ? err : sb_status_name(st));
        return st == SB_ERR_INPUT || st == SB_ERR_USAGE ? SB_EXIT_INPUT : 1;
    }
    if (a.failed)
        return a.input_error ? SB_EXIT_INPUT : 1;
    return a.unexpected ? SB_EXIT_UNEXPECTED : SB_EXIT_OK;
}
