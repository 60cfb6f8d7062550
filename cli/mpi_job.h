// mpi_job.h — how `train` and `profile` run as MPI jobs: initialise MPI, run the body on
// every rank, and on bad input let rank 0 alone print the one message while every rank
// exits with status 2 (validation is identical on every rank, so none is left waiting).
#pragma once

#include <functional>

namespace cc::cli {

// Calls body(rank, world size) between MPI_Init and MPI_Finalize; throws ExitCode{2}
// after MPI_Finalize when the body threw SpecError.
void run_mpi_job(const std::function<void(int rank, int world)>& body);

}  // namespace cc::cli
