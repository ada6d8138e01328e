/* samebits list: what each case will run. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char list_usage[] =
    "usage: samebits list CASE...\n"
    "\n"
    "Prints what each case runs: op and tensors (kernel cases) or model, data\n"
    "and training settings (training cases), family, seed, thread counts,\n"
    "repeats, timeout, the expected verdict at each thread count, and the golden.\n"
    "exit status: 0 done, 2 usage or input error\n";

static void tensor_print(const char *role, int i, const sb_tensor *t)
{
    printf("  %s %d: %s [", role, i, sb_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++)
        printf("%s%lld", d ? " x " : "", (long long)t->dim[d]);
    printf("]\n");
}

static void kernel_print(const sb_case *c)
{
    sb_op_call call = c->call;
    printf("  op %s\n", sb_op_name(call.op));
    if (sb_op_call_describe(&call) != SB_OK) {
        printf("  (its shape is absurd)\n");
        return;
    }
    for (int i = 0; i < call.n_in; i++)
        tensor_print("input", i, &call.in[i]);
    for (int j = 0; j < call.n_out; j++)
        tensor_print("output", j, &call.out[j]);
}

static void train_print(const sb_case *c)
{
    const sb_train_config *t = &c->train;
    const bool gpt = strcmp(c->model, "char_gpt") == 0;
    printf("  model %s on %s: train [%lld, %lld), %s [%lld, %lld)\n", c->model, c->dataset,
           (long long)c->train_begin, (long long)c->train_end, gpt ? "validation" : "test",
           (long long)c->test_begin, (long long)c->test_end);
    printf("  %lld training steps in all\n", (long long)sb_case_train_steps(c));
    if (gpt) {
        const sb_gpt_config *g = &t->gpt;
        printf("  %d layers, %d heads, width %d, context %d, batch %d, %lld steps, "
               "evaluation every %d steps on %d windows\n", g->layers, g->heads, g->width,
               g->context, t->batch, (long long)g->steps, g->eval_every, g->eval_windows);
        const sb_gpt_block_config *b = &g->block;
        if (!sb_gpt_block_is_gpt2(b))
            printf("  block: norm %s, position %s, mlp %s, kv_heads %d, bias %s\n",
                   sb_gpt_norm_name(b->norm), sb_gpt_position_name(b->position),
                   sb_gpt_mlp_name(b->mlp), b->kv_heads > 0 ? b->kv_heads : g->heads,
                   b->no_bias ? "false" : "true");
        printf("  %s lr %g, clip %g, max steps %lld, seed %llu\n",
               sb_optimizer_name(t->optim.kind), (double)t->optim.lr, (double)g->clip,
               (long long)t->max_steps, (unsigned long long)t->seed);
        return;
    }
    printf("  %s lr %g, batch %d, %d epochs, max steps %lld, dropout %g/%g, seed %llu\n",
           sb_optimizer_name(t->optim.kind), (double)t->optim.lr, t->batch, t->epochs,
           (long long)t->max_steps, (double)t->dropout1, (double)t->dropout2,
           (unsigned long long)t->seed);
}

static void case_print(const sb_case *c)
{
    printf("%s (%s)\n", c->name, c->path);
    printf("  kind %s, family %s, seed %llu\n", sb_case_kind_name(c->kind),
           sb_family_name(c->family), (unsigned long long)c->seed);
    if (c->kind == SB_CASE_KERNEL)
        kernel_print(c);
    else if (c->kind == SB_CASE_TRAIN)
        train_print(c);
    else
        printf("  command %s (in %s)\n", c->command_run, c->command_dir);
    printf("  threads");
    for (int i = 0; i < c->n_threads; i++)
        printf(" %d", c->threads[i]);
    printf(", %d repeat%s", c->repeats, c->repeats == 1 ? "" : "s");
    for (int i = 0; i < c->n_threads; i++)
        if (c->repeats_at[c->threads[i]] > 0)
            printf(" (%d at %d thread%s)", c->repeats_at[c->threads[i]], c->threads[i],
                   c->threads[i] == 1 ? "" : "s");
    printf(", timeout %g s\n", c->timeout_seconds);
    printf("  expect");
    for (int i = 0; i < c->n_threads; i++)
        printf(" %d:%s", c->threads[i], sb_verdict_name(c->expect[c->threads[i]]));
    printf("\n  golden %s (reference %d thread%s), digest %s\n", c->golden_path,
           c->reference_threads, c->reference_threads == 1 ? "" : "s", c->digest);
}

int cli_list(int argc, char **argv)
{
    const char **cases = calloc((size_t)argc, sizeof *cases);
    if (!cases)
        return SB_EXIT_INPUT;
    const sb_option options[] = {{NULL, NULL, NULL}};
    cli_line l = {.cmd = "list", .usage = list_usage, .options = options,
                  .positional = cases, .min_positional = 1, .max_positional = argc};
    int rc;
    if (cli_line_parse(&l, argc, argv, &rc)) {
        /* every case is listed, also those after one that does not load */
        for (int i = 0; i < l.n_positional; i++) {
            sb_case c;
            if (cli_case_load(&c, cases[i]))
                case_print(&c);
            else
                rc = SB_EXIT_INPUT;
        }
    }
    free(cases);
    return rc;
}
