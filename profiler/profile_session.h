// profile_session.h — `clustercast profile`: for every TP degree and
// micro batch size asked for, trains the target model's own layers (its hidden size, heads,
// sequence length, per-rank split) for a few steps with every annotated scope timed, then
// sweeps the collectives, and returns the cost database. Runs on every MPI rank; DP fills
// the ranks a TP degree leaves (DP = ranks / TP), so every rank measures. The backend says
// which engine trains (CPU, or one GPU per rank) and what times the scopes (the host clock,
// or CUPTI's device timestamps).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/trainer.h"
#include "profiler/collective_sweep.h"
#include "profiler/host_recorder.h"
#include "sim/cost_database.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::profiler {

struct ProfileRequest {
  ModelSpec model;
  std::vector<int> tp_sizes = {1};
  std::vector<int> micro_batches = {1};
  int microbatches_per_step = 2;  // global batch = micro batch x DP x this
  bool sequence_parallel = false;  // applied where TP > 1
  RecomputeGranularity recompute = RecomputeGranularity::None;
  Precision precision = Precision::FP32;  // bf16 on GPUs; the CPU engine computes in fp32
  int warmup_steps = 2;  // run, not timed: first touch of memory, allocator warm-up
  int timed_steps = 5;
  // Every TP size x micro batch runs this many times, the runs in turn each round; each op's
  // time is the median over its rounds (pool_profiles), so a slow spell of a shared machine
  // that falls on one round's run does not set the database.
  int rounds = 1;
  std::uint64_t seed = 1234;
  bool ops = true;    // engine runs with every op timed
  bool sweep = true;  // the collective sweep (needs >= 2 ranks)
  SweepOptions sweep_options;
  std::string command;  // recorded in the database
  bool keep_timeline = false;  // gather every rank's scopes for a Chrome trace
};

// Throws SpecError, identically on every rank, for anything the run would refuse.
void validate(const ProfileRequest& request, int world_size);

struct ProfileOutcome {
  CostDatabase database;
  // Chrome trace / Perfetto JSON of every run on every rank (one process per rank, compute
  // and collectives on separate rows); on rank 0 only, when keep_timeline is set.
  std::string chrome_trace;
};

// Times the engine's annotated scopes during the runs: the host clock on the CPU backend
// (HostRecorder), CUPTI's device timestamps on GPUs (profiler/cuda/cupti_recorder.h).
class ScopeTimer {
 public:
  virtual ~ScopeTimer() = default;
  virtual engine::OpRecorder& recorder() = 0;
  // Every scope that ended so far (on GPUs: after waiting for the device).
  virtual const std::vector<RecordedOp>& collect() = 0;
  // Records the timer lost (CUPTI buffer overflow): the op times are then incomplete.
  virtual std::size_t dropped() const { return 0; }
};

using TrainFn = std::function<engine::TrainReport(const ModelSpec&, const ParallelConfig&, const engine::TrainOptions&,
                                                  std::ostream&)>;

// Where a profile runs: what the machine is, which engine trains and what times it, and
// what carries the collective sweep (MPI on the CPU backend, NCCL on GPUs: profiler/cuda).
struct ProfileBackend {
  MachineFingerprint machine;
  CollectiveTransport* transport = nullptr;
  TrainFn train = engine::train;
  ScopeTimer* timer = nullptr;  // null: the host clock
  bool gpu = false;             // the engine runs on GPUs (bf16 allowed)
};

// `log`: progress and the summary tables (pass a null stream on ranks other than 0).
ProfileOutcome run_profile(const ProfileRequest& request, const ProfileBackend& backend, std::ostream& log);

}  // namespace cc::profiler
