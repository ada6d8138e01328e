/* samebits-bench-decode: what det's batch invariance costs in the char
 * GPT's KV-cache decoding (kernels/model/gpt_decode.h): the time of one
 * decode step with det's kernels and decode attention against loose's, at
 * batch 1, 4 and 16 requests and cache lengths 64 and 512, at 1 and 2
 * threads, as det time / loose time per round (the median of the rounds,
 * with the smallest and largest). The model is the char GPT's default
 * size (2 blocks, 4 heads, width 128) with a context of 512, its weights
 * from the initialiser and its cache filled with uniform values: the
 * arithmetic does not depend on the values. The load average before and
 * after is printed: the machine may be shared. A benchmark, not a test. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "model/gpt_decode.h"
#include "sb_rng.h"

static const int batches[] = {1, 4, 16};
static const int lengths[] = {64, 512};
static const int thread_counts[] = {1, 2};
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

/* --clock cpu (bench_clock): with OMP_WAIT_POLICY=passive, so that
 * waiting threads sleep and are not charged, it leaves out the time other
 * programs hold the cores. */
static bool cpu_clock;

/* seconds per step: one warm-up step, then steps until min_time has passed */
static double time_per_step(sb_gpt_decoder *d, const sb_gpt_request *req, int n, double min_time)
{
    sb_gpt_decode_step(d, req, n);
    int steps = 0;
    double t0 = bench_clock(cpu_clock, omp_get_max_threads()), t;
    do {
        sb_gpt_decode_step(d, req, n);
        steps++;
        t = bench_clock(cpu_clock, omp_get_max_threads()) - t0;
    } while (t < min_time);
    return t / steps;
}

int main(int argc, char **argv)
{
    int rounds = 7;
    double min_time = 0.05;
    for (int i = 1; i < argc; i++) {
        if (!bench_round_option(argc, argv, &i, &rounds, &min_time, &cpu_clock)) {
            fprintf(stderr, "usage: samebits-bench-decode [--rounds R] [--min-time SECONDS] "
                            "[--clock wall|cpu]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || !(min_time > 0.0)) {
        fprintf(stderr, "samebits-bench-decode: --rounds 1..%d, --min-time above 0\n",
                MAX_ROUNDS);
        return 2;
    }
    sb_train_config cfg;
    sb_gpt_config_defaults(&cfg);
    cfg.batch = 1;
    cfg.gpt.context = 512;
    sb_gpt g;
    sb_gpt_decoder d;
    if (sb_gpt_alloc(&g, sb_kernels(SB_FAMILY_DET), &cfg, SB_TEXT_VOCAB) != SB_OK ||
        sb_gpt_decoder_alloc(&d, &g, sb_attn_decode_det, 16, 16) != SB_OK) {
        fprintf(stderr, "samebits-bench-decode: out of memory\n");
        return 1;
    }
    const sb_model_probe none = {.hook = NULL};
    sb_gpt_init(&g, &none);
    const size_t cache = (size_t)d.slots * (size_t)g.context * 2 * (size_t)g.width;
    for (int l = 0; l < g.layers; l++)
        for (size_t i = 0; i < cache; i++)
            d.kv[l][i] = sb_rng_uniform(7, 0, (uint32_t)l, i) - 0.5f;
    bench_load_print("before");
    printf("decode step of the char GPT (%d blocks, %d heads, width %d): det against loose, "
           "%d rounds of at least %.2f s each, %s time\n", g.layers, g.heads, g.width, rounds,
           min_time, cpu_clock ? "CPU" : "wall");
    printf("%3s %5s %5s %10s %10s %22s\n", "thr", "batch", "cache", "det us", "loose us",
           "det/loose [min max]");
    sb_gpt_request req[16];
    for (int t = 0; t < COUNT(thread_counts); t++)
        for (int b = 0; b < COUNT(batches); b++)
            for (int c = 0; c < COUNT(lengths); c++) {
                omp_set_num_threads(thread_counts[t]);
                const int n = batches[b];
                for (int r = 0; r < n; r++)
                    req[r] = (sb_gpt_request){r, lengths[c] - 1, (int32_t)(r % SB_TEXT_VOCAB)};
                double det[MAX_ROUNDS], loose[MAX_ROUNDS];
                for (int k = 0; k < rounds; k++)
                    for (int turn = 0; turn < 2; turn++) {
                        /* det first in even rounds, loose first in odd ones */
                        const bool is_det = (turn == 0) == (k % 2 == 0);
                        g.k = sb_kernels(is_det ? SB_FAMILY_DET : SB_FAMILY_LOOSE);
                        d.attend = is_det ? sb_attn_decode_det : sb_attn_decode_loose;
                        (is_det ? det : loose)[k] = time_per_step(&d, req, n, min_time);
                    }
                printf("%3d %5d %5d %10.1f %10.1f", thread_counts[t], n, lengths[c],
                       median_of(det, rounds) * 1e6, median_of(loose, rounds) * 1e6);
                print_spread(ratio_spread(det, loose, rounds));
                printf("\n");
                fflush(stdout);
            }
    bench_load_print("after");
    sb_gpt_decoder_free(&d);
    sb_gpt_free(&g);
    return 0;
}
