/* samebits sample: trains a char_gpt case in this process and prints text
 * sampled from the trained model, with the validation loss next to the
 * validation text's unigram entropy (the loss of a model that ignores
 * context), both in nats per character. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sb_text.h"

static const char sample_usage[] =
    "usage: samebits sample CASE [--threads N] [--chars K] [--seed S] [--data-dir DIR]\n"
    "\n"
    "Trains the char_gpt case CASE once at N threads (default 1), in its family,\n"
    "for its whole run (no checkpoint: the run is made again), and prints each\n"
    "evaluation, the final validation loss next to the unigram entropy of the\n"
    "validation text (nats per character), and K characters (default 200)\n"
    "sampled from the trained model with seed S (default 1): the prompt is the\n"
    "first context characters of the validation text. The output does not name\n"
    "the thread count, so a det case prints the same text at every count.\n"
    "exit status: 0 done, 2 usage or input error, 1 any other failure\n";

int cli_sample(int argc, char **argv)
{
    const char *case_path = NULL, *threads_s = NULL, *chars_s = NULL, *seed_s = NULL,
               *data_dir = NULL;
    const sb_option options[] = {
        {"--threads", &threads_s, NULL}, {"--chars", &chars_s, NULL},
        {"--seed", &seed_s, NULL},       {"--data-dir", &data_dir, NULL},
        {NULL, NULL, NULL},
    };
    cli_line l = {.cmd = "sample", .usage = sample_usage, .options = options,
                  .positional = &case_path, .min_positional = 1, .max_positional = 1};
    int rc;
    if (!cli_line_parse(&l, argc, argv, &rc))
        return rc;
    int64_t threads = 1, chars = 200, seed = 1;
    if ((threads_s &&
         !cli_parse_int("sample", threads_s, 1, SB_MAX_THREADS, &threads, "--threads")) ||
        (chars_s && !cli_parse_int("sample", chars_s, 1, 1000000, &chars, "--chars")) ||
        (seed_s && !cli_parse_int("sample", seed_s, 0, INT64_MAX, &seed, "--seed")))
        return SB_EXIT_INPUT;
    sb_case c;
    if (!cli_case_load(&c, case_path))
        return SB_EXIT_INPUT;
    if (c.kind != SB_CASE_TRAIN || strcmp(c.model, "char_gpt") != 0) {
        fprintf(stderr, "%s: samebits sample takes a training case of model char_gpt\n",
                case_path);
        return SB_EXIT_INPUT;
    }
    omp_set_num_threads((int)threads);
    const char *dir = cli_data_dir(data_dir);
    char err[512] = "";

    /* the validation text, for its entropy */
    sb_text all, val;
    if (sb_text_open(&all, c.dataset, dir, err, sizeof err) != SB_OK) {
        fprintf(stderr, "%s\n", err);
        return SB_EXIT_INPUT;
    }
    double entropy = 0.0;
    int64_t val_chars = 0;
    if (sb_text_slice(&val, &all, c.test_begin, c.test_end) == SB_OK) {
        entropy = sb_text_unigram_entropy(&val);
        val_chars = val.n;
    }
    sb_text_free(&all);

    const sb_model_kind *model = sb_model_find(c.model);
    sb_epoch_metrics *metrics = calloc((size_t)model->evaluations(&c.train), sizeof *metrics);
    char *text = malloc((size_t)chars + 1);
    if (!metrics || !text) {
        free(metrics);
        free(text);
        fprintf(stderr, "samebits: out of memory\n");
        return 1;
    }
    sb_model_run r = sb_case_model_run(&c, sb_case_kernels(&c), &c.train, dir);
    sb_gpt_sample s = {.chars = (int)chars, .seed = (uint64_t)seed, .out = text};
    int n_metrics = 0;
    sb_status st = sb_gpt_run(&r, metrics, &n_metrics, &s, err, sizeof err);
    if (st != SB_OK) {
        fprintf(stderr, "%s\n", err[0] ? err : sb_status_name(st));
        rc = st == SB_ERR_INPUT || st == SB_ERR_USAGE ? SB_EXIT_INPUT : 1;
    } else {
        printf("case %s (%s)\n", c.name, sb_family_name(c.family));
        for (int e = 0; e < n_metrics; e++)
            printf("evaluation %d step %lld train_loss %.4f val_loss %.4f val_accuracy %.4f\n",
                   metrics[e].epoch, (long long)metrics[e].steps, metrics[e].train_loss,
                   metrics[e].test_loss, metrics[e].test_accuracy);
        if (n_metrics > 0)
            printf("final validation loss %.4f nats per character; unigram entropy of the "
                   "validation text (%lld characters) %.4f\n",
                   metrics[n_metrics - 1].test_loss, (long long)val_chars, entropy);
        printf("sample (seed %lld, %lld characters):\n%s\n", (long long)seed, (long long)chars,
               text);
        rc = SB_EXIT_OK;
    }
    free(metrics);
    free(text);
    return rc;
}
