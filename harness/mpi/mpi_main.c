/* samebits-mpi: `samebits run` as one rank of an MPI job. The sweep starts
 *   mpirun --oversubscribe --bind-to none -np R samebits-mpi run CASE --threads T --trace FILE ...
 * for each (R, T) of a [parallel] case; every rank trains its share of each
 * batch and combines gradients with the others; rank 0 writes FILE (and any
 * stream or dump), rank r FILE.rank<r>. */
#include <string.h>

#include <mpi.h>

#include "cli/cli.h"
#include "mpi_runner.h"

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "run") != 0) {
        fputs("usage: samebits-mpi run CASE --threads N --trace FILE [samebits run options]\n"
              "(started by samebits sweep under mpirun for a [parallel] case)\n",
              stderr);
        return SB_EXIT_INPUT;
    }
    MPI_Init(&argc, &argv);
    sb_grad_combine cb;
    sb_mpi_combine_init(&cb);
    int rc = cli_run_rank(argc - 1, argv + 1, &cb);
    /* a rank that failed would leave the others waiting in a combine: the
     * whole job ends with its status */
    if (rc != SB_EXIT_OK)
        MPI_Abort(MPI_COMM_WORLD, rc);
    MPI_Finalize();
    return rc;
}
