/* What every data-parallel model shares (sb_model.h): which chunks or
 * samples of a global batch a rank computes. Contiguous runs in rank order,
 * so that rank r's rows follow rank r-1's and a gather lays them end to end. */
#include "sb_model.h"

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
