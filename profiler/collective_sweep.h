// collective_sweep.h — measures MPI collectives the way nccl-tests measures NCCL ones: each
// collective over a range of message sizes on groups of 2..n ranks, reporting the slowest
// rank's time per iteration with nccl-tests' size, algbw and busbw conventions, then fits
// the latency/bandwidth line the simulator prices collectives with (latency_bandwidth_fit.h).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "sim/cost_database.h"

namespace cc::profiler {

struct SweepOptions {
  std::int64_t min_bytes = 1024;
  std::int64_t max_bytes = 256LL << 20;
  int size_factor = 4;  // next size = size · factor: 1K, 4K, ..., 256M
  int warmup = 2;       // untimed iterations per size (first touch, connection setup)
  double target_seconds_per_size = 0.05;  // repeat a size until its batch lasts about this long,
  int min_iterations = 3;                 // but at least this many iterations
  int max_iterations = 1000;              // and at most this many
  std::vector<CollectiveKind> kinds = {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                                       CollectiveKind::ReduceScatter, CollectiveKind::SendRecv};
  std::vector<int> group_sizes;  // empty: every size 2..communicator size
};

// Throws SpecError naming the offending option (as its --sweep-* flag) and what is valid.
void validate(const SweepOptions& options, int world_size);

// Collective over `comm` (MPI already initialised): every rank calls it with the same
// options. Group size g runs on the first g ranks; the others wait. Returns one fitted curve
// per (group size, kind), identical on every rank; rank 0 writes each curve's table to
// `table` (when non-null) as it completes. A 1-rank communicator has no groups: empty.
std::vector<CollectiveCurve> sweep_collectives(MPI_Comm comm, const SweepOptions& options, std::ostream* table);

}  // namespace cc::profiler
