// resolver.h — one function from what a user gave (flags, a layout file, a model or HuggingFace
// file, a GUI project) to what the simulator runs: model, cluster, a whole parallel config and
// its cost source. Every default lives here once: DP from the GPU count, the default global
// batch, the software stack a measured database ran, the stack's attention kernel, and the
// checks. `clustercast simulate`, `search`, and the GUI call it, so they predict the same and
// refuse the same.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interop/megatron_options.h"
#include "sim/cluster_spec.h"
#include "sim/cost_database.h"
#include "sim/cost_source.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// The layout as the user gave it — a layout file's config, then flags over it — and which of
// its values were named; what was not named comes from the rules in resolve_run.
struct LayoutRequest {
  ParallelConfig config;
  bool from_file = false;                // config started from a layout file (its DP, batch, kernel stand)
  std::optional<int> dp;                 // --data-parallel-size
  bool global_batch_named = false;       // --global-batch-size
  bool attention_named = false;          // --use-flash-attn / --attention-backend (or the GUI's box)
  std::optional<std::string> framework;  // --framework
  // Megatron-LM switches stated by flags or the layout file, weighed by resolve_run.
  MegatronSwitches switches;
};

struct RunRequest {
  ModelSpec model;
  ClusterSpec cluster;
  std::optional<int> gpus;  // none: TP x PP x DP as resolved
  LayoutRequest layout;
  std::string costs_file;   // empty: the analytic model of the cluster
  MemoryReserve reserve;
};

struct ResolvedRun {
  ModelSpec model;
  ClusterSpec cluster;
  ParallelConfig config;  // whole and validated
  MemoryReserve reserve;
  std::string costs_file;
  std::shared_ptr<const CostDatabase> measured;  // null: the analytic model
  // Said once to the user (the CLI prints them as "warning: ...", the GUI beside the cost
  // source): e.g. a database measured on another GPU than the cluster's.
  std::vector<std::string> warnings;

  // The cost source the simulator prices this run with: the measured database, or the analytic
  // model of the cluster with the stack's fitted constants.
  std::unique_ptr<CostSource> cost_source() const;
};

// Reads the cost database (when named), completes the layout and validates everything.
// Throws SpecError naming the offending value.
ResolvedRun resolve_run(RunRequest request);

// The cost database named by --costs (null when none is named), read once.
std::shared_ptr<const CostDatabase> read_measured_costs(const std::string& costs_file);

// The measured database when there is one, else the analytic model of the cluster with the
// stack's fitted constants. `search` and the GUI's search price every layout with one of these.
std::unique_ptr<CostSource> make_cost_source(const std::shared_ptr<const CostDatabase>& measured,
                                             const std::string& costs_file, const ClusterSpec& cluster,
                                             Precision precision, const std::string& framework);

// --cross-entropy-loss-fusion under a stack without Megatron-Core's fused loss (FrameworkSpec::
// fused_cross_entropy) is refused by name: simulate, search and the GUI alike.
void check_fused_cross_entropy(bool fused, const std::string& framework);

// The software stack a run is priced under: the one named, else the one a measured database
// ran (its predictions replay that stack), else Megatron-Core.
std::string resolved_stack(const std::optional<std::string>& named, const CostDatabase* measured);

// Where a cost database's hardware is not the cluster's, one sentence saying so; none when
// they agree or the database was measured on a CPU (the CPU engine prices its own ranks).
std::optional<std::string> hardware_mismatch(const CostDatabase& measured, const ClusterSpec& cluster);

}  // namespace cc
