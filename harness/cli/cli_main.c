/* samebits: run, sweep and compare the determinism cases. */
#include <string.h>

#include "cli.h"
#include "sb_build_info.h"

static const char usage[] =
    "usage: samebits COMMAND [ARGS]\n"
    "\n"
    "  sweep CASE...      run every thread count and repeat of each case against its golden\n"
    "  run CASE           run one configuration in this process and write its trace\n"
    "  golden CASE...     (re)write the golden of each case from its reference configuration\n"
    "  diff TRACE TRACE   first divergent probe of two trace files\n"
    "  locate CASE        where two thread counts of a case part ways, element by element\n"
    "  list CASE...       what each case will run\n"
    "  report --merge F...  one report from the JSON reports of a sweep's shards\n"
    "  numerics CASE...   every op's result against a double evaluation and its error bound\n"
    "  mutants CASE...    sweep mutant cases and score what the harness found\n"
    "  sample CASE        train a char_gpt case and print text sampled from it\n"
    "  decode CASE        a char_gpt case's logits from training, prefill and KV-cache decoding\n"
    "\n"
    "  samebits COMMAND --help   the command's options\n"
    "  samebits --version\n"
    "\n"
    "exit status: 0 as expected, 1 a divergence or verdict not expected,\n"
    "             2 usage or input error, 3 a crash or timeout\n";

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
} command;

static const command commands[] = {
    {"sweep", cli_sweep}, {"run", cli_run},       {"golden", cli_golden},
    {"diff", cli_diff},   {"locate", cli_locate}, {"list", cli_list},
    {"report", cli_report}, {"numerics", cli_numerics},
    {"mutants", cli_mutants}, {"sample", cli_sample}, {"decode", cli_decode},
};

int main(int argc, char **argv)
{
    /* a killed writer's temporaries in the directory it is run in */
    sb_out_stale_remove(".");
    if (argc < 2) {
        fputs("samebits: needs a command (samebits --help)\n", stderr);
        return SB_EXIT_INPUT;
    }
    if (cli_is_help(argv[1])) {
        fputs(usage, stdout);
        return SB_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("samebits %s (trace format %d)\n", SB_VERSION, SB_TRACE_FORMAT_VERSION);
        return SB_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "samebits: unknown command '%s' (samebits --help)\n", argv[1]);
    return SB_EXIT_INPUT;
}
