// simulator.h — simulate one training iteration of a model on a cluster under a parallel
// config: build the task graph, run it on the event engine, and report time, FLOPs,
// memory and training days.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/cost_source.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"
#include "sim/units.h"

namespace cc {

struct Straggler {
  int rank = 0;
  double slowdown = 1.0;  // compute on this rank takes this many times longer
};

struct SimOptions {
  // Symmetric mode simulates one rank per pipeline stage: TP peers and DP replicas behave
  // alike. Every-rank mode simulates each DP replica's pipeline and each DP collective
  // across replicas; TP peers run in lockstep (they meet at every layer's collective), so a
  // TP group advances at its slowest member's pace.
  bool every_rank = false;
  std::vector<Straggler> stragglers;  // every-rank mode only
  bool keep_timeline = false;
  double train_tokens = 0;            // 0: no training_days
  MemoryReserve reserve;
};

struct TimeBreakdown {  // seconds on the reported stage; they sum to the iteration time
  double compute = 0;
  double recompute = 0;
  double tp_comm = 0;  // exposed
  double cp_comm = 0;  // exposed
  double ep_comm = 0;  // exposed: MoE layers' dispatch and combine
  double pp_comm = 0;  // exposed
  double dp_comm = 0;  // exposed
  double optimizer = 0;
  double host = 0;     // idle, waiting for the host to issue kernels (a host-bound pass)
  double bubble = 0;   // idle, waiting on other stages
  double total() const {
    return compute + recompute + tp_comm + cp_comm + ep_comm + pp_comm + dp_comm + optimizer + host + bubble;
  }
};

enum class TaskKind { Forward, Backward, Send, GradReduce, EmbeddingSync, GradNorm, Optimizer, ParamGather };

// The stream an event ran on: every (stage, replica) has one of each. Cp holds, under context
// parallelism, each pass's K,V exchanges (hidden or not) as one event from the pass's start:
// they run beside its attention, layer after layer, which the lane shows summed.
enum class StreamLane { Compute, P2p, Dp, Cp };
const char* to_string(StreamLane lane);  // "compute", "p2p", "dp", "cp"

// One task of the simulated iteration, typed so that a viewer needs no parsing of `name`.
struct TimelineEvent {
  int process = 0;      // stage x replicas + replica: one row group per simulated rank
  int stage = 0;
  int replica = 0;      // always 0 in symmetric mode, which simulates one rank per stage
  StreamLane lane = StreamLane::Compute;
  int microbatch = -1;  // the pass's microbatch; -1 for work outside passes (DP reduction, optimizer)
  int chunk = 0;        // the pass's model chunk (virtual stage) on its rank
  std::string name;     // for display: "F3 c1", "send mb3 c1", "cp F3 c1", "GradReduce", ...
  TaskKind kind = TaskKind::Forward;
  SimTime start = 0;
  SimTime duration = 0;
};

// Where the measured time of a prediction is expected to fall: the cost source's held-out
// error (measured / predicted on runs its constants were not fitted to), as wide as held 80%
// of the measurements of sources it was not built from (docs/accuracy.md).
struct PredictionInterval {
  double low_ratio = 1.0, high_ratio = 1.0;
  std::string basis;
};

struct SimResult {
  ModelSpec model;
  ClusterSpec cluster;
  ParallelConfig config;
  std::string cost_source;

  double iteration_time_s = 0;
  double model_flops = 0;     // per iteration
  double hardware_flops = 0;  // per iteration, with recomputation
  double tflops_per_gpu = 0;  // model FLOPs
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  double tokens_per_s = 0;
  double bubble_fraction = 0;
  TimeBreakdown breakdown;
  int reported_stage = 0;

  MemoryReport memory;
  double peak_memory_gib = 0;
  double hbm_gib = 0;
  double usable_gib = 0;  // HBM less the headroom a layout must leave free
  bool fits = false;

  double train_tokens = 0;
  double training_days = 0;  // 0 when no token budget was given
  std::optional<PredictionInterval> interval;  // none for a source nobody cross-validated
  double iteration_time_low_s() const { return iteration_time_s * (interval ? interval->low_ratio : 1.0); }
  double iteration_time_high_s() const { return iteration_time_s * (interval ? interval->high_ratio : 1.0); }
  double training_days_low() const { return training_days * (interval ? interval->low_ratio : 1.0); }
  double training_days_high() const { return training_days * (interval ? interval->high_ratio : 1.0); }
  double measured_fraction = 0;
  std::string cost_coverage;  // CostSource::coverage(): how the ops were priced

  std::size_t tasks = 0;
  std::uint64_t events = 0;
  std::vector<TimelineEvent> timeline;
};

// Validates the config (throws SpecError) and simulates.
SimResult simulate(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config,
                   const CostSource& costs, const SimOptions& options = {});

const char* to_string(TaskKind k);

}  // namespace cc
