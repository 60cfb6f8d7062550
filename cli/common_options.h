// common_options.h — the flags `simulate` and `search` share: model, cluster, GPU count,
// model-shape overrides and the parallel layout, named as Megatron-LM names them so a
// user can paste a launch line. Resolving them yields validated specs or a SpecError.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "interop/layout_files.h"
#include "interop/megatron_options.h"
#include "sim/cluster_spec.h"
#include "sim/cost_database.h"
#include "sim/cost_source.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::cli {

// The fields of Megatron-LM's shape flags come from MegatronModelArgs: registered from and
// applied by interop/megatron_options.h, the definitions a Megatron argument file is read through.
struct ModelFlags : MegatronModelArgs {
  std::string model;  // preset or file; empty: GPT-style model from the shape flags alone
  void add_to(CLI::App& app);
  // `from_file`: the model a layout file carries, used when --model is not given.
  ModelSpec resolve(const std::optional<ModelSpec>& from_file = std::nullopt) const;
};

struct ClusterFlags {
  std::string cluster;  // empty: the layout file's cluster, else dgx-a100-80gb
  std::optional<int> gpus;
  std::optional<double> cuda_context_gib, comm_buffers_gib, fragmentation, headroom;
  void add_to(CLI::App& app);
  ClusterSpec resolve(const std::optional<ClusterSpec>& from_file = std::nullopt) const;
  // Flags over the layout file's reserve over the defaults; the file's values pass the
  // flags' range checks, and a refusal names `file`.
  MemoryReserve reserve(const std::optional<MemoryReserve>& from_file = std::nullopt,
                        const std::string& file = "") const;
};

// The layout flags of `simulate` (single values). `search` has its own list-valued flags.
// Megatron-LM's layout, precision and attention flags are the MegatronLayoutArgs fields
// (interop/megatron_options.h).
struct LayoutFlags : MegatronLayoutArgs {
  std::string config_file;
  std::optional<int> dp;
  std::optional<std::string> precision, framework;
  void add_to(CLI::App& app);
  // The layout file first (when --config is given), then flags over it; DP from the GPU
  // count when not given. The stack: --framework, else the one a measured cost database
  // ran (`measured_framework`), else the layout file's, else Megatron-Core. Prints one note
  // line naming the Megatron-LM flags (given or in the file) left aside as bearing on neither
  // time nor memory.
  ParallelConfig resolve(const ModelSpec& model, std::optional<int> gpus, const LayoutFile* file,
                         const std::optional<std::string>& measured_framework = std::nullopt) const;
  std::optional<LayoutFile> read_file() const;

 private:
  std::vector<std::pair<std::string, CLI::Option*>> ignored_;  // Megatron-LM flags accepted and left aside
};

// --costs FILE read once: the measured database, or none (the analytic model) when empty.
std::optional<CostDatabase> read_costs(const std::string& costs_file);
// The stack a measured database ran, which its predictions replay.
std::optional<std::string> measured_framework(const std::optional<CostDatabase>& db);

// The cost source: the measured database (read from `costs_file`), or the analytic model
// of the cluster when there is none; `framework` picks the analytic model's fitted
// per-stack constants.
std::unique_ptr<CostSource> make_cost_source(std::optional<CostDatabase> db, const std::string& costs_file,
                                             const ClusterSpec& cluster, Precision precision,
                                             const std::string& framework);

// The folder an output file goes into must exist before an hour of work, not after.
void check_output_folder(const std::string& path, const char* flag);

// "300e9", "300B", "1.5T" → tokens. Throws SpecError naming the flag on anything else.
double parse_token_count(const std::string& text, const std::string& flag);

}  // namespace cc::cli
