// cost_database.h — the measured cost database the profiler writes to traces/ and the
// simulator reads (--costs): where and how it was measured, one record per profiled op
// shape, one curve per collective and group size, and the measured iteration of every
// profiled run. Schema documented in traces/README.md; the version below changes whenever
// a field changes meaning, and a reader refuses any other version.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/ops.h"

namespace cc {

inline constexpr int kCostDatabaseVersion = 1;
// `clustercast profile` measures clustercast's own engine (traces/presets/frameworks/).
inline constexpr const char* kMeasuredEngineFramework = "clustercast-engine";

// What the measurements were taken on. GPU fields stay empty on the CPU backend.
struct MachineFingerprint {
  std::string backend;     // "cpu" or "cuda"
  std::string cpu_model;   // /proc/cpuinfo "model name"
  int cpu_cores = 0;       // online logical CPUs
  double memory_gib = 0;   // MemTotal
  std::string gpu_name;
  int gpu_sms = 0;
  int gpu_clock_mhz = 0;   // max SM clock
  std::string driver_version, cuda_version, nccl_version, cublas_version;
  std::string mpi_version;  // MPI library the collectives ran on
};

// One op at one shape: every occurrence in the timed steps, summarised.
struct OpRecord {
  std::string name;   // the simulator's op name, e.g. "fc1", "fc2.wgrad", "softmax"
  Phase phase = Phase::Forward;
  std::array<std::int64_t, 4> shape{};  // m, n, k, batch (GEMM); elements, 1, 1, 1 (elementwise)
  std::string dtype;  // "fp32", "bf16", "fp16"
  int tp = 1;         // tensor-parallel degree of the run that measured it
  int samples = 0;    // occurrences timed
  // The simulator prices with the mean: per-op means add up to the mean step (medians do
  // not when times are skewed); the median and spread say how steady the op was.
  double mean_s = 0;
  double median_s = 0;
  double p10_s = 0, p90_s = 0;  // spread across occurrences
  // Host time to issue it (the launch calls and the engine's code around them), mean over the
  // same occurrences; 0: not recorded. A GPU profile records it, since a GPU op's time above is
  // its device time and a host that cannot launch as fast sets the step instead. A CPU profile
  // leaves it 0: there the host runs the op, so its time above already is the host's.
  double host_mean_s = 0;
};

// nccl-tests' columns for one message size.
struct CollectivePoint {
  double bytes = 0;  // nccl-tests "size"
  std::int64_t count = 0;  // elements of the element type
  double time_s = 0;       // the slowest rank's mean over the timed iterations (nccl-tests)
  double algbw_gbs = 0;    // bytes / time
  double busbw_gbs = 0;    // algbw · bus_bandwidth_factor(kind, group size)
};

// One collective on one group size: the sweep and its latency/bandwidth fit,
// time(bytes) = latency_s + bytes · bus_bandwidth_factor / bus_bandwidth_gbs. The fit is
// the summary printed and extrapolated beyond the fabric; inside the swept range the
// simulator uses the points themselves (measured_costs.h).
struct CollectiveCurve {
  CollectiveKind kind = CollectiveKind::AllReduce;
  int group_size = 2;
  std::vector<CollectivePoint> points;  // ascending bytes
  double latency_s = 0;
  double bus_bandwidth_gbs = 0;
  double max_residual = 0;  // largest |fit - measured| / measured over the points
};

// One collective of the engine's own runs at one message size, timed inside the training
// steps on the rank of its group that arrived last (the shortest duration of the call: that
// rank did not wait for another). Inside a step a collective costs more than in the sweep's
// tight loop: on the 2-core CPU machine (`tiny`, TP 2 + SP, micro batch 4, 2026-12-03) the
// SP all-gather took 35 us against the sweep's 13 us at 256 KiB, the reduce-scatter 71-85 us
// against 40 us. The simulator keeps the sweep's shape over message sizes and takes its level
// from these (measured_costs.h).
struct InStepCollective {
  CollectiveKind kind = CollectiveKind::AllReduce;
  int group_size = 2;
  double bytes = 0;  // per call, as the sweep counts them
  int calls = 0;     // calls timed
  double mean_s = 0;
};

// One engine run the profiler timed: what it ran and how long an iteration took.
struct ProfiledRun {
  std::string model;  // model JSON (the resolved spec), so a reader can reproduce it
  int tp = 1;
  int micro_batch = 1;
  int global_batch = 1;
  std::string recompute;  // "none", "selective", "full"
  bool sequence_parallel = false;
  int timed_steps = 0;
  double iteration_mean_s = 0;
  double iteration_median_s = 0;
  double iteration_p10_s = 0, iteration_p90_s = 0;
};

struct CostDatabase {
  int version = kCostDatabaseVersion;
  std::string created;  // ISO 8601 date of the measurement
  std::string command;  // the exact command line that produced it
  MachineFingerprint machine;
  std::string dtype;    // element type of every op record: to_string(Precision), e.g. "fp32"
  // The software stack whose semantics the runs had (a framework preset: whether pipeline
  // sends block, what overlaps what). A prediction from this database replays them unless
  // told otherwise, so a profile of our engine predicts our engine.
  std::string framework = kMeasuredEngineFramework;
  // Ops the simulator prices that this engine fuses into another measured op (e.g. the
  // fp32 main-gradient accumulation happens inside the weight-gradient GEMM): they cost
  // nothing on their own and count as measured.
  std::vector<std::string> fused_ops;
  std::vector<ProfiledRun> runs;
  std::vector<OpRecord> ops;
  std::vector<CollectiveCurve> collectives;
  std::vector<InStepCollective> in_step_collectives;  // ascending (kind, group size, bytes)
};

// Deterministic text (fixed key order, shortest round-trip numbers): a read of a written
// database writes back byte-identical.
std::string cost_database_to_text(const CostDatabase& db);
// Throws SpecError naming `where` (usually the file) and the offending field.
CostDatabase cost_database_from_text(const std::string& text, const std::string& where);
CostDatabase read_cost_database(const std::string& path);
void write_cost_database(const std::string& path, const CostDatabase& db);  // atomic

}  // namespace cc
