// mpi_job.h — how `train` and `profile` run as MPI jobs: initialise MPI, run the body on
// every rank, and on bad input let rank 0 alone print the one message while every rank
// exits with status 2 (validation is identical on every rank, so none is left waiting).
// While the body runs, a stall watchdog (engine/stall_watchdog.h) ends the job when a rank
// makes no progress for --stall-timeout seconds.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "engine/stall_watchdog.h"

namespace cc::cli {

struct MpiJobOptions {
  double stall_timeout_s = engine::kDefaultStallTimeoutSeconds;
};

// The options every MPI job command has (--stall-timeout).
void add_mpi_job_options(CLI::App& sub, MpiJobOptions& options);

// Calls body(rank, world size) between MPI_Init and MPI_Finalize; throws ExitCode{2}
// after MPI_Finalize when the body threw SpecError.
void run_mpi_job(const MpiJobOptions& options, const std::function<void(int rank, int world)>& body);

}  // namespace cc::cli
