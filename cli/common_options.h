// common_options.h — the flags `simulate` and `search` share: model, cluster, GPU count,
// model-shape overrides and the parallel layout, named as Megatron-LM names them so a
// user can paste a launch line. Resolving them yields validated specs or a SpecError.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "interop/layout_files.h"
#include "sim/cluster_spec.h"
#include "sim/cost_database.h"
#include "sim/cost_source.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::cli {

struct ModelFlags {
  std::string model;  // preset or file; empty: GPT-style model from the shape flags alone
  std::optional<int> num_layers, hidden_size, heads, query_groups, ffn, seq_length, vocab;
  bool swiglu = false;
  // Megatron-LM's names for the architecture, so a launch line pastes; each is checked
  // against what ModelSpec represents and refused by name where it cannot.
  std::optional<int> max_position_embeddings;
  std::optional<std::string> normalization, position_embedding_type;
  std::optional<double> hidden_dropout, attention_dropout;
  bool untie_embeddings = false, group_query_attention = false, disable_bias_linear = false;
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
struct LayoutFlags {
  std::string config_file;
  std::optional<int> tp, pp, dp, micro_batch, global_batch, layers_per_virtual_stage;
  std::optional<int> first_stage_layers, last_stage_layers, recompute_num_layers;
  std::optional<std::string> recompute_granularity, recompute_method, precision, framework;
  bool sequence_parallel = false, distributed_optimizer = false, overlap_grad_reduce = false;
  bool overlap_param_gather = false, flash_attention = false;
  // Megatron-LM's precision and attention vocabulary beside --precision / --use-flash-attn.
  bool bf16 = false, fp16 = false, recompute_activations = false;
  std::optional<std::string> attention_backend, fp8_format;
  void add_to(CLI::App& app);
  // The layout file first (when --config is given), then flags over it; DP from the GPU
  // count when not given. The stack: --framework, else the one a measured cost database
  // ran (`measured_framework`), else the layout file's, else Megatron-Core.
  ParallelConfig resolve(const ModelSpec& model, std::optional<int> gpus, const LayoutFile* file,
                         const std::optional<std::string>& measured_framework = std::nullopt) const;
  std::optional<LayoutFile> read_file() const;
};

// The attention kernel a stack runs when the command line names none: Megatron-Core and NeMo
// (--attention-backend auto) run flash or fused attention; the 2021-2022 papers' stacks
// (megatron-2021, megatron-deepspeed) and our CPU engine materialise the s x s scores.
AttentionKernel default_attention(const std::string& framework);

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
