#include "cli/mpi_job.h"

#include <mpi.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/exit_code.h"
#include "engine/rank_board.h"
#include "sim/error.h"

namespace cc::cli {

void add_mpi_job_options(CLI::App& sub, MpiJobOptions& options) {
  sub.add_option("--stall-timeout", options.stall_timeout_s,
                 "End the job on every rank when one makes no progress (a step, a start-up phase) for this many "
                 "seconds (0: never)")
      ->capture_default_str();
}

namespace {

// The job's board (engine/rank_board.h), named after rank 0's process so that two jobs on one
// machine never share one; its name is removed once every rank has mapped it. Without shared
// memory the job runs with a watchdog that names only its own rank.
std::unique_ptr<engine::RankBoard> open_rank_board(int rank, int world) {
  long long token[2] = {static_cast<long long>(::getpid()), static_cast<long long>(engine::RankBoard::now_ns())};
  MPI_Bcast(token, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  std::unique_ptr<engine::RankBoard> board;
  try {
    board = std::make_unique<engine::RankBoard>(fmt::format("/clustercast-{}-{}", token[0], token[1]), world, rank);
  } catch (const SpecError& e) {
    std::cerr << "clustercast: note: rank " << rank << ": " << e.what()
              << "; a stall will be reported without naming the rank that holds the job\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (board) board->unlink_name();
  return board;
}

}  // namespace

void run_mpi_job(const MpiJobOptions& options, const std::function<void(int rank, int world)>& body) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) MPI_Init(nullptr, nullptr);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int status = 0;
  try {
    // A day at most: a longer value is a typo for a smaller one, and 0 turns the watchdog off.
    constexpr double kMaxStallTimeout = 86'400;
    if (!(options.stall_timeout_s >= 0 && options.stall_timeout_s <= kMaxStallTimeout))
      fail("--stall-timeout is {}; it must be a number of seconds in [0, {:g}] (0: no watchdog)",
           options.stall_timeout_s, kMaxStallTimeout);
    const std::unique_ptr<engine::RankBoard> board = open_rank_board(rank, world);
    const engine::StallWatchdog watchdog(rank, options.stall_timeout_s, board.get());
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
