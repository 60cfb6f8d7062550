// common_options.h — the flags `simulate` and `search` share: model, cluster, GPU count,
// model-shape overrides and the parallel layout, named as Megatron-LM names them so a
// user can paste a launch line. Resolving them yields validated specs or a SpecError.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/cluster_spec.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::cli {

struct ModelFlags {
  std::string model;  // preset or file; empty: GPT-style model from the shape flags alone
  std::optional<int> num_layers, hidden_size, heads, query_groups, ffn, seq_length, vocab;
  bool swiglu = false;
  void add_to(CLI::App& app);
  ModelSpec resolve() const;
};

struct ClusterFlags {
  std::string cluster = "dgx-a100-80gb";
  std::optional<int> gpus;
  double cuda_context_gib = MemoryReserve{}.cuda_context_gib;
  double comm_buffers_gib = MemoryReserve{}.comm_buffers_gib;
  double fragmentation = MemoryReserve{}.fragmentation_fraction;
  void add_to(CLI::App& app);
  ClusterSpec resolve() const;
  MemoryReserve reserve() const { return {cuda_context_gib, comm_buffers_gib, fragmentation}; }
};

// The layout flags of `simulate` (single values). `search` has its own list-valued flags.
struct LayoutFlags {
  std::string config_file;
  std::optional<int> tp, pp, dp, micro_batch, global_batch, layers_per_virtual_stage;
  std::optional<int> first_stage_layers, last_stage_layers, recompute_num_layers;
  std::optional<std::string> recompute_granularity, recompute_method, precision;
  bool sequence_parallel = false, distributed_optimizer = false, overlap_grad_reduce = false;
  bool overlap_param_gather = false, flash_attention = false;
  void add_to(CLI::App& app);
  // Config file first, then flags over it; DP from --gpus when not given.
  ParallelConfig resolve(const ModelSpec& model, std::optional<int> gpus) const;
};

// "300e9", "300B", "1.5T" → tokens. Throws SpecError naming the flag on anything else.
double parse_token_count(const std::string& text, const std::string& flag);

}  // namespace cc::cli
