/* What every data-parallel model shares (data_parallel.h): which chunks or
 * samples of a global batch a rank computes, in contiguous runs in rank
 * order, so that rank r's rows follow rank r-1's and a gather lays them end
 * to end; and the combine of the passes' gradient rows. */
#include <string.h>

#include "data_parallel.h"

static void run_of(int rank, int ranks, int items, int *first, int *count)
{
    SB_ASSERT(ranks >= 1 && rank >= 0 && rank < ranks && items >= 0);
    int begin = (int)((int64_t)items * rank / ranks);
    int end = (int)((int64_t)items * (rank + 1) / ranks);
    *first = begin;
    *count = end - begin;
}

void sb_chunks_owned(int rank, int ranks, int chunks, int *first, int *count)
{
    run_of(rank, ranks, chunks, first, count);
}

void sb_share_owned(int rank, int ranks, int n, int *first, int *count)
{
    run_of(rank, ranks, n, first, count);
}

bool sb_data_parallel_config_ok(const sb_train_config *cfg)
{
    const sb_grad_combine *cb = cfg->combine;
    return (unsigned)cfg->reduce <= SB_REDUCE_LOOSE &&
           (cfg->reduce != SB_REDUCE_DET || cfg->chunk >= 1) &&
           (!cb || (cb->ranks >= 1 && cb->rank >= 0 && cb->rank < cb->ranks));
}

size_t sb_partials_rows(const sb_train_config *cfg, int batch)
{
    if (cfg->reduce != SB_REDUCE_DET)
        return 1;
    SB_ASSERT(cfg->chunk >= 1 && batch >= 1);
    return (size_t)((batch + cfg->chunk - 1) / cfg->chunk);
}

/* Adds the rows of partials[0..count) in row order into out. */
static void rows_add(float *out, const float *partials, int count, size_t total)
{
    if (count == 0) {
        memset(out, 0, total * sizeof *out);
        return;
    }
    memcpy(out, partials, total * sizeof *out);
    for (int c = 1; c < count; c++) {
        const float *p = partials + (size_t)c * total;
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < total; j++)
            out[j] += p[j];
    }
}

/* The mutant rank_skips_last_chunk: when the batch does not divide by the
 * rank count, the last rank leaves out its last chunk if it is partial. */
static bool skips_chunk(const sb_train_config *cfg, int rank, int ranks, int n, bool last,
                        int rows)
{
    return cfg->rank_fault == SB_RANK_FAULT_RANK_SKIPS_LAST_CHUNK && n % ranks != 0 &&
           rank == ranks - 1 && last && rows < cfg->chunk;
}

void sb_data_parallel_combine(const sb_train_config *cfg, int n, int64_t step, float *partials,
                              size_t total, sb_rows_pass_fn *pass, void *model)
{
    const sb_grad_combine *cb = cfg->combine;
    int rank = cb ? cb->rank : 0, ranks = cb ? cb->ranks : 1;
    const sb_model_probe quiet = {.step = step};
    if (cfg->reduce == SB_REDUCE_DET) {
        int chunks = (n + cfg->chunk - 1) / cfg->chunk, first, count;
        sb_chunks_owned(rank, ranks, chunks, &first, &count);
        for (int c = first; c < first + count; c++) {
            int begin = c * cfg->chunk;
            int rows = n - begin < cfg->chunk ? n - begin : cfg->chunk;
            float *row = partials + (size_t)c * total;
            if (skips_chunk(cfg, rank, ranks, n, c == first + count - 1, rows))
                memset(row, 0, total * sizeof *row);
            else
                pass(model, begin, rows, n, row, &quiet);
        }
        float *sum = sb_floats_try(total);
        SB_ASSERT(sum != NULL);
        if (cfg->rank_fault == SB_RANK_FAULT_ALLREDUCE_RANK_ASSOCIATION) {
            /* the mutant: this rank's chunks first, then the ranks' sums */
            rows_add(sum, partials + (size_t)first * total, count, total);
            if (cb)
                cb->sum(cb->ctx, sum, total);
        } else {
            if (cb)
                cb->gather(cb->ctx, partials, total, chunks);
            rows_add(sum, partials, chunks, total);
        }
        memcpy(partials, sum, total * sizeof *sum);
        free(sum);
    } else {
        int first, count;
        sb_share_owned(rank, ranks, n, &first, &count);
        if (count > 0)
            pass(model, first, count, n, partials, &quiet);
        else
            memset(partials, 0, total * sizeof *partials);
        if (cb)
            cb->sum(cb->ctx, partials, total);
    }
}
