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

// What moves the bytes: MPI on host buffers (MpiTransport, here), NCCL on device buffers
// (profiler/cuda/nccl_transport.h). The sweep owns the schedule, timing and fit; a
// transport only runs collectives.
class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;
  virtual const char* name() const = 0;  // shown in the table header, e.g. "MPI"
  // Called on the members of one group (the first g ranks) before its collectives, with
  // the largest message that will run; leave() after them.
  virtual void join(MPI_Comm group, std::int64_t max_bytes) = 0;
  virtual void leave() = 0;
  // Runs `iterations` back-to-back iterations of `kind` on `count` float32 elements (out of
  // place) and returns once they have completed on this rank.
  virtual void run(CollectiveKind kind, std::int64_t count, int iterations) = 0;
};

// MPI collectives on host memory.
class MpiTransport final : public CollectiveTransport {
 public:
  const char* name() const override { return "MPI"; }
  void join(MPI_Comm group, std::int64_t max_bytes) override;
  void leave() override;
  void run(CollectiveKind kind, std::int64_t count, int iterations) override;

 private:
  MPI_Comm group_ = MPI_COMM_NULL;
  std::vector<float> send_, receive_;
};

// Collective over `comm` (MPI already initialised): every rank calls it with the same
// options. Group size g runs on the first g ranks; the others wait. Returns one fitted curve
// per (group size, kind), identical on every rank; rank 0 writes each curve's table to
// `table` (when non-null) as it completes. A 1-rank communicator has no groups: empty.
std::vector<CollectiveCurve> sweep_collectives(MPI_Comm comm, const SweepOptions& options, std::ostream* table,
                                               CollectiveTransport& transport);

}  // namespace cc::profiler
