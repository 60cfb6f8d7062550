#include "cli/mpi_job.h"

#include <mpi.h>

#include <iostream>

#include "cli/exit_code.h"
#include "sim/error.h"

namespace cc::cli {

void run_mpi_job(const std::function<void(int rank, int world)>& body) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) MPI_Init(nullptr, nullptr);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int status = 0;
  try {
    body(rank, world);
  } catch (const SpecError& e) {
    // Every rank reaches the same verdict (validation needs no communication, and the
    // engine's agree() spreads rank-local failures); rank 0 alone reports it.
    if (rank == 0) std::cerr << "clustercast: " << e.what() << "\n";
    status = 2;
  }
  std::cout.flush();
  MPI_Finalize();
  if (status != 0) throw ExitCode{status};
}

}  // namespace cc::cli
