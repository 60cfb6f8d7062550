// input_flags.h — the flags that describe a run, named as Megatron-LM names them so a user can
// paste a launch line: model, cluster, GPU count, model-shape overrides, the parallel layout and
// the cost database. `clustercast simulate`, `search` and the GUI register these same definitions
// with CLI11 and hand what they read to the resolver (interop/resolver.h), so one command line
// means one run wherever it is typed.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "interop/layout_files.h"
#include "interop/megatron_options.h"
#include "interop/resolver.h"
#include "sim/cluster_spec.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// The fields of Megatron-LM's shape flags come from MegatronModelArgs: registered from and
// applied by interop/megatron_options.h, the definitions a Megatron argument file is read through.
struct ModelFlags : MegatronModelArgs {
  std::string model;  // preset or file; empty: GPT-style model from the shape flags alone
  void add_to(CLI::App& app);
  // `from_file`: the model a layout file carries, used when --model is not given.
  ModelSpec resolve(const std::optional<ModelSpec>& from_file = std::nullopt) const;
  // Tokenizer flags (--tokenizer-type, --tokenizer-model, --make-vocab-size-divisible-by) say a
  // vocabulary; beside --model, whose vocabulary is its own, they are refused by name unless
  // --vocab-size gives the vocabulary outright.
  void refuse_tokenizer_flags_beside_model() const;
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
  std::optional<double> moe_load_imbalance;  // clustercast's own: never in a Megatron argument file
  void add_to(CLI::App& app);
  // The layout file first (when --config is given), then flags over it, and which values were
  // named; the resolver completes the rest. Prints one note line naming the Megatron-LM flags
  // (given or in the file) left aside as bearing on neither time nor memory.
  LayoutRequest request(const ModelSpec& model, const LayoutFile* file) const;
  std::optional<LayoutFile> read_file() const;

 private:
  std::vector<std::pair<std::string, CLI::Option*>> ignored_;  // Megatron-LM flags accepted and left aside
};

// What `simulate` and the GUI read: the three groups above and --costs.
struct RunFlags {
  ModelFlags model;
  ClusterFlags cluster;
  LayoutFlags layout;
  std::string costs;
  void add_to(CLI::App& app);
  // The layout file (when --config is given), then every flag over it, for resolve_run.
  RunRequest request() const;
};

}  // namespace cc
