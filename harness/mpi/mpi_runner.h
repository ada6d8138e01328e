/* samebits-mpi, the rank program of a data-parallel job (README.md here). */
#ifndef SB_MPI_RUNNER_H
#define SB_MPI_RUNNER_H

#include "sb_harness.h"

/* This process's rank and the MPI combines; MPI must be initialised. */
void sb_mpi_combine_init(sb_grad_combine *cb);

#endif
