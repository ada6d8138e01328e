/* The gradient combines of a data-parallel job over MPI (sb_grad_combine,
 * kernels/sb_model.h): loose is MPI_Allreduce with MPI_SUM, as users write
 * it; det gathers every chunk's partial gradient to every rank
 * (MPI_Allgatherv), which the model then adds in chunk order. MPI's default
 * error handler aborts the job on any failure. */
#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

#include "mpi_runner.h"

static int mpi_count(size_t n)
{
    SB_ASSERT(n <= INT_MAX);
    return (int)n;
}

static void combine_sum(void *ctx, float *g, size_t n)
{
    (void)ctx;
    MPI_Allreduce(MPI_IN_PLACE, g, mpi_count(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void combine_gather(void *ctx, float *partials, size_t n, int chunks)
{
    const sb_grad_combine *cb = ctx;
    int *counts = malloc((size_t)cb->ranks * sizeof *counts);
    int *offsets = malloc((size_t)cb->ranks * sizeof *offsets);
    SB_ASSERT(counts && offsets);
    for (int r = 0; r < cb->ranks; r++) {
        int first, count;
        sb_chunks_owned(r, cb->ranks, chunks, &first, &count);
        counts[r] = mpi_count((size_t)count * n);
        offsets[r] = mpi_count((size_t)first * n);
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, partials, counts, offsets, MPI_FLOAT,
                   MPI_COMM_WORLD);
    free(counts);
    free(offsets);
}

void sb_mpi_combine_init(sb_grad_combine *cb)
{
    *cb = (sb_grad_combine){.sum = combine_sum, .gather = combine_gather, .ctx = cb};
    MPI_Comm_rank(MPI_COMM_WORLD, &cb->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cb->ranks);
}
