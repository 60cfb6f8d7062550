#include "profiler/collective_sweep.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "engine/stall_watchdog.h"
#include "profiler/latency_bandwidth_fit.h"
#include "sim/error.h"

// MPI calls are not checked one by one: communicators keep MPI's default handler,
// MPI_ERRORS_ARE_FATAL, which aborts the whole job with MPI's own message.

namespace cc::profiler {

namespace {

constexpr std::int64_t kElementBytes = sizeof(float);  // the sweep moves float32, like nccl-tests' default
constexpr std::int64_t kMaxBytes = INT_MAX * kElementBytes;  // MPI counts are ints

std::vector<int> group_sizes_to_sweep(const SweepOptions& options, int world_size) {
  if (!options.group_sizes.empty()) return options.group_sizes;
  std::vector<int> sizes;
  for (int g = 2; g <= world_size; ++g) sizes.push_back(g);
  return sizes;
}

// nccl-tests' "size" at each step. All-gather's size is its whole output and reduce-scatter's
// its whole input, so they round down to a whole number of elements per rank.
std::vector<std::int64_t> message_sizes(const SweepOptions& options, CollectiveKind kind, int group_size) {
  const bool split_across_ranks = kind == CollectiveKind::AllGather || kind == CollectiveKind::ReduceScatter;
  const std::int64_t granule = kElementBytes * (split_across_ranks ? group_size : 1);
  std::vector<std::int64_t> sizes;
  for (std::int64_t bytes = options.min_bytes;; bytes *= options.size_factor) {
    sizes.push_back(bytes / granule * granule);
    if (bytes > options.max_bytes / options.size_factor) break;  // the next size would pass max_bytes
  }
  return sizes;
}

// The slowest rank's mean time per iteration over a batch, as nccl-tests reports it. The
// max-reduce hands every rank the same number.
double slowest_rank_seconds(MPI_Comm group, CollectiveTransport& transport, CollectiveKind kind, std::int64_t count,
                            int iterations) {
  MPI_Barrier(group);
  const double start = MPI_Wtime();
  transport.run(kind, count, iterations);
  double seconds = (MPI_Wtime() - start) / iterations;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, group);
  return seconds;
}

double seconds_per_iteration(MPI_Comm group, CollectiveTransport& transport, CollectiveKind kind, std::int64_t bytes,
                             const SweepOptions& options) {
  const std::int64_t count = bytes / kElementBytes;
  if (options.warmup > 0) transport.run(kind, count, options.warmup);
  // One timed iteration sizes the batch. Every rank holds the same probe time (max-reduced),
  // so every rank picks the same iteration count and none waits on a collective the others skipped.
  const double probe = slowest_rank_seconds(group, transport, kind, count, 1);
  const double wanted = std::ceil(options.target_seconds_per_size / std::max(probe, 1e-9));
  const int iterations = static_cast<int>(std::clamp(wanted, double(options.min_iterations), double(options.max_iterations)));
  return slowest_rank_seconds(group, transport, kind, count, iterations);
}

CollectiveCurve make_curve(CollectiveKind kind, int group_size, const std::vector<std::int64_t>& sizes,
                           const std::vector<double>& seconds) {
  CollectiveCurve curve;
  curve.kind = kind;
  curve.group_size = group_size;
  const double factor = bus_bandwidth_factor(kind, group_size);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    CollectivePoint point;
    point.bytes = static_cast<double>(sizes[i]);
    point.count = sizes[i] / kElementBytes;
    point.time_s = seconds[i];
    point.algbw_gbs = point.bytes / point.time_s / 1e9;
    point.busbw_gbs = point.algbw_gbs * factor;
    curve.points.push_back(point);
  }
  fit_latency_bandwidth(curve);
  return curve;
}

// The first g ranks of a communicator; MPI_COMM_NULL on the ranks left out.
struct SubCommunicator {
  MPI_Comm comm = MPI_COMM_NULL;
  SubCommunicator(MPI_Comm parent, int rank, int group_size) {
    MPI_Comm_split(parent, rank < group_size ? 0 : MPI_UNDEFINED, rank, &comm);
  }
  ~SubCommunicator() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  SubCommunicator(const SubCommunicator&) = delete;
  SubCommunicator& operator=(const SubCommunicator&) = delete;
};

}  // namespace

void validate(const SweepOptions& options, int world_size) {
  for (int g : options.group_sizes) {
    if (world_size < 2)
      fail("--sweep-group-sizes {}: a collective needs at least 2 ranks and the MPI world has {}; start more with "
           "mpirun -np",
           g, world_size);
    if (g < 2 || g > world_size)
      fail("--sweep-group-sizes {}: valid group sizes are 2..{} (the MPI world size)", g, world_size);
  }
  const std::vector<int> groups = group_sizes_to_sweep(options, world_size);
  const int largest_group = groups.empty() ? 1 : *std::max_element(groups.begin(), groups.end());
  if (options.min_bytes < kElementBytes || options.min_bytes % kElementBytes != 0)
    fail("--sweep-min-bytes {}: must be a positive multiple of 4 bytes (whole float32 elements)", options.min_bytes);
  if (options.min_bytes < kElementBytes * largest_group)
    fail("--sweep-min-bytes {}: must be at least {} so every rank of a {}-rank all-gather holds an element",
         options.min_bytes, kElementBytes * largest_group, largest_group);
  if (options.size_factor < 2)
    fail("--sweep-size-factor {}: must be at least 2 (each size is the previous one times the factor)",
         options.size_factor);
  if (options.max_bytes > kMaxBytes)
    fail("--sweep-max-bytes {}: at most {} bytes (MPI counts elements in an int)", options.max_bytes, kMaxBytes);
  if (options.min_bytes > options.max_bytes / options.size_factor)
    fail("--sweep-max-bytes {}: must be at least --sweep-min-bytes {} x --sweep-size-factor {}, so the fit has two "
         "sizes",
         options.max_bytes, options.min_bytes, options.size_factor);
  if (options.warmup < 0) fail("--sweep-warmup {}: must be 0 or more iterations", options.warmup);
  if (!(options.target_seconds_per_size > 0) || !std::isfinite(options.target_seconds_per_size))
    fail("--sweep-seconds-per-size {}: must be a positive number of seconds", options.target_seconds_per_size);
  if (options.min_iterations < 1)
    fail("--sweep-min-iterations {}: must be at least 1", options.min_iterations);
  if (options.max_iterations < options.min_iterations)
    fail("--sweep-max-iterations {}: must be at least --sweep-min-iterations {}", options.max_iterations,
         options.min_iterations);
  if (options.kinds.empty())
    fail("--sweep-collectives: name at least one of all_reduce, all_gather, reduce_scatter, send_recv");
}

void MpiTransport::join(MPI_Comm group, std::int64_t max_bytes) {
  group_ = group;
  int rank = 0;
  MPI_Comm_rank(group, &rank);
  // Buffers for the largest message, allocated once and touched up front so page faults
  // never land inside a timed iteration.
  const auto elements = static_cast<std::size_t>(max_bytes / kElementBytes);
  send_.assign(elements, 1.0f + static_cast<float>(rank));
  receive_.assign(elements, 0.0f);
}

void MpiTransport::leave() { group_ = MPI_COMM_NULL; }

void MpiTransport::run(CollectiveKind kind, std::int64_t count64, int iterations) {
  int rank = 0, size = 0;
  MPI_Comm_rank(group_, &rank);
  MPI_Comm_size(group_, &size);
  const int count = static_cast<int>(count64);  // validate() bounds sizes to what an int counts
  for (int i = 0; i < iterations; ++i) {
    switch (kind) {
      case CollectiveKind::AllReduce:
        MPI_Allreduce(send_.data(), receive_.data(), count, MPI_FLOAT, MPI_SUM, group_);
        break;
      case CollectiveKind::AllGather:
        MPI_Allgather(send_.data(), count / size, MPI_FLOAT, receive_.data(), count / size, MPI_FLOAT, group_);
        break;
      case CollectiveKind::ReduceScatter:
        MPI_Reduce_scatter_block(send_.data(), receive_.data(), count / size, MPI_FLOAT, MPI_SUM, group_);
        break;
      case CollectiveKind::SendRecv:  // a ring: every link carries `count` elements at once
        MPI_Sendrecv(send_.data(), count, MPI_FLOAT, (rank + 1) % size, 0, receive_.data(), count, MPI_FLOAT,
                     (rank - 1 + size) % size, 0, group_, MPI_STATUS_IGNORE);
        break;
      case CollectiveKind::AllToAll:  // nccl-tests' size is each rank's buffer, 1/size to every rank
        MPI_Alltoall(send_.data(), count / size, MPI_FLOAT, receive_.data(), count / size, MPI_FLOAT, group_);
        break;
    }
  }
  engine::mark_progress("the collective sweep");
}

std::vector<CollectiveCurve> sweep_collectives(MPI_Comm comm, const SweepOptions& options, std::ostream* table,
                                               CollectiveTransport& transport) {
  int rank = 0, world_size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &world_size);
  validate(options, world_size);  // same options everywhere, so every rank throws or none does

  const std::vector<int> groups = group_sizes_to_sweep(options, world_size);
  std::vector<CollectiveCurve> curves;
  for (int group_size : groups) {
    const SubCommunicator group(comm, rank, group_size);
    if (group.comm != MPI_COMM_NULL) transport.join(group.comm, options.max_bytes);
    for (CollectiveKind kind : options.kinds) {
      const std::vector<std::int64_t> sizes = message_sizes(options, kind, group_size);
      std::vector<double> seconds(sizes.size());
      if (group.comm != MPI_COMM_NULL)
        for (std::size_t i = 0; i < sizes.size(); ++i)
          seconds[i] = seconds_per_iteration(group.comm, transport, kind, sizes[i], options);
      // Ranks outside the group wait here, and leave with the group's times: rank 0 is in
      // every group, and after the max-reduce every member holds the same numbers. So every
      // rank fits the same curve (and throws alike if the fit fails).
      MPI_Bcast(seconds.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, 0, comm);
      curves.push_back(make_curve(kind, group_size, sizes, seconds));
      if (rank == 0 && table != nullptr) *table << format_sweep_table(curves.back(), transport.name()) << std::flush;
    }
    if (group.comm != MPI_COMM_NULL) transport.leave();
  }
  return curves;
}

}  // namespace cc::profiler
