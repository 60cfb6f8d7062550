#include "cli/common_options.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/analytic_costs.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/measured_costs.h"
#include "sim/presets.h"

namespace cc::cli {

void ModelFlags::add_to(CLI::App& app) {
  app.add_option("--model", model, "Model preset name, model JSON, or HuggingFace config.json")
      ->group("Model");
  app.add_option("--num-layers", num_layers, "Override: transformer layers")->group("Model");
  app.add_option("--hidden-size", hidden_size,
                 "Override: hidden size; a preset FFN that is a whole multiple of its hidden size (4h) keeps "
                 "that multiple, any other FFN size stays as it is")
      ->group("Model");
  app.add_option("--num-attention-heads", heads,
                 "Override: attention heads; on a multi-head preset the query groups follow (stay MHA), "
                 "on a grouped-query preset they stay")
      ->group("Model");
  app.add_option("--num-query-groups", query_groups, "Override: KV heads (grouped-query attention)")->group("Model");
  app.add_option("--ffn-hidden-size", ffn, "Override: MLP hidden size")->group("Model");
  app.add_option("--seq-length", seq_length, "Override: sequence length")->group("Model");
  app.add_option("--vocab-size", vocab, "Override: (padded) vocabulary size")->group("Model");
  app.add_flag("--swiglu", swiglu, "Override: gated SwiGLU MLP instead of GeLU")->group("Model");
  const char* g = "Model (Megatron-LM names)";
  app.add_option("--max-position-embeddings", max_position_embeddings,
                 "Positions the model supports (>= --seq-length; learned positions: equal to it)")
      ->group(g);
  app.add_option("--normalization", normalization, "LayerNorm or RMSNorm")->group(g);
  app.add_option("--position-embedding-type", position_embedding_type, "learned_absolute or rope")->group(g);
  app.add_flag("--untie-embeddings-and-output-weights", untie_embeddings, "A separate output layer")->group(g);
  app.add_flag("--group-query-attention", group_query_attention,
               "Grouped-query attention: --num-query-groups KV heads (without it: the preset's, else 1 as in "
               "Megatron-LM)")
      ->group(g);
  app.add_flag("--disable-bias-linear", disable_bias_linear,
               "No biases in linear layers (modelled for gated SwiGLU/GeGLU MLPs, which have none)")
      ->group(g);
  app.add_option("--hidden-dropout", hidden_dropout, "Hidden dropout probability (0: no masks stored)")->group(g);
  app.add_option("--attention-dropout", attention_dropout, "Attention dropout probability")->group(g);
}

namespace {

// Megatron-LM spells these in its own way; ModelSpec holds a subset. Anything else is refused
// by name rather than read as the nearest thing we model.
Normalization normalization_from(const std::string& name) {
  if (name == "LayerNorm") return Normalization::LayerNorm;
  if (name == "RMSNorm") return Normalization::RMSNorm;
  fail("--normalization '{}' is not modelled; valid: LayerNorm, RMSNorm", name);
}

PositionEmbedding position_embedding_from(const std::string& name) {
  if (name == "learned_absolute") return PositionEmbedding::Learned;
  if (name == "rope") return PositionEmbedding::Rope;
  fail("--position-embedding-type '{}' is not modelled; valid: learned_absolute, rope", name);
}

void check_dropout(const char* flag, const std::optional<double>& p) {
  if (p && !(*p >= 0 && *p < 1)) fail("{} is {}; it must be a probability in [0, 1)", flag, *p);
}

}  // namespace

ModelSpec ModelFlags::resolve(const std::optional<ModelSpec>& from_file) const {
  ModelSpec m;
  if (!model.empty()) {
    std::vector<std::string> notes;  // what a HuggingFace import assumed (which key gave the length)
    m = load_model(model, seq_length, &notes);
    for (const auto& note : notes) fmt::print(stderr, "note: {}\n", note);
  } else if (from_file) {
    m = *from_file;
  } else {
    // No preset: a GPT-style model (4h GeLU MLP, LayerNorm, learned positions) from flags.
    if (!num_layers || !hidden_size || !heads)
      fail("no --model given: pass a preset (e.g. --model gpt3-175b) or at least --num-layers, --hidden-size and "
           "--num-attention-heads");
    m.name = "custom";
    m.seq_length = 2048;
    m.vocab_size = 51200;
  }
  const bool from_flags_alone = model.empty() && !from_file;
  // What the base model was before the overrides, for the fields that follow others.
  const bool base_is_mha = m.num_query_groups == 0 || m.num_query_groups == m.num_attention_heads;
  const bool ffn_is_multiple = m.hidden_size > 0 && m.ffn_hidden_size > 0 && m.ffn_hidden_size % m.hidden_size == 0;
  const int ffn_multiple = ffn_is_multiple ? m.ffn_hidden_size / m.hidden_size : 0;
  if (num_layers) m.num_layers = *num_layers;
  if (hidden_size) m.hidden_size = *hidden_size;
  if (heads) m.num_attention_heads = *heads;
  // Query groups: given, else Megatron's 1 under --group-query-attention on a model from flags,
  // else they follow new heads on a multi-head model (an MHA preset stays MHA); a
  // grouped-query preset keeps its groups.
  if (query_groups) m.num_query_groups = *query_groups;
  else if (group_query_attention && from_flags_alone) m.num_query_groups = 1;
  else if (heads && (from_flags_alone || base_is_mha)) m.num_query_groups = *heads;
  // FFN: given, else 4h from flags alone, else a preset's whole multiple of h follows a new h.
  if (ffn) m.ffn_hidden_size = *ffn;
  else if (from_flags_alone) m.ffn_hidden_size = 4 * m.hidden_size;
  else if (hidden_size && ffn_is_multiple) m.ffn_hidden_size = ffn_multiple * m.hidden_size;
  if (seq_length) m.seq_length = *seq_length;
  if (vocab) m.vocab_size = *vocab;
  if (swiglu) m.activation = Activation::SwiGLU;
  if (m.num_query_groups == 0) m.num_query_groups = m.num_attention_heads;
  if (normalization) m.normalization = normalization_from(*normalization);
  if (position_embedding_type) m.position_embedding = position_embedding_from(*position_embedding_type);
  if (untie_embeddings) m.tied_embeddings = false;
  check_dropout("--hidden-dropout", hidden_dropout);
  check_dropout("--attention-dropout", attention_dropout);
  if (hidden_dropout || attention_dropout) {
    // ModelSpec has one switch for both (are dropout masks stored?); Megatron's default is 0.1.
    const bool hidden_on = hidden_dropout.value_or(0.1) > 0, attention_on = attention_dropout.value_or(0.1) > 0;
    if (hidden_on != attention_on)
      fail("--hidden-dropout {} with --attention-dropout {}: dropout in only one of the two is not modelled; "
           "give both zero or both non-zero",
           hidden_dropout.value_or(0.1), attention_dropout.value_or(0.1));
    m.dropout = hidden_on;
  }
  if (disable_bias_linear && !m.gated_mlp())
    fail("--disable-bias-linear on model '{}' with a GeLU MLP is not modelled (its MLP biases are counted); it is "
         "modelled for gated MLPs (--swiglu), which have none",
         m.name);
  if (max_position_embeddings) {
    if (*max_position_embeddings < m.seq_length)
      fail("--max-position-embeddings {} is below the sequence length {}; it must be >= --seq-length",
           *max_position_embeddings, m.seq_length);
    // The learned position table is sized by the sequence length in ModelSpec.
    if (m.position_embedding == PositionEmbedding::Learned && *max_position_embeddings != m.seq_length)
      fail("--max-position-embeddings {} with learned positions and sequence length {} is not modelled: the "
           "position table is sized by --seq-length (give them equal, or --position-embedding-type rope)",
           *max_position_embeddings, m.seq_length);
  }
  m.validate(from_flags_alone ? "model flags" : "model '" + m.name + "' with overrides");
  return m;
}

void ClusterFlags::add_to(CLI::App& app) {
  app.add_option("--cluster", cluster, "Cluster preset name or cluster JSON (default: dgx-a100-80gb)")->group("Cluster");
  app.add_option("--gpus", gpus, "Total GPUs (DP = GPUs / (TP x PP))")->group("Cluster");
  const MemoryReserve d;
  app.add_option("--cuda-context-gib", cuda_context_gib,
                 fmt::format("Memory reserve: CUDA context and library handles, GiB (default {})", d.cuda_context_gib))
      ->group("Memory reserve");
  app.add_option("--comm-buffers-gib", comm_buffers_gib,
                 fmt::format("Memory reserve: NCCL buffers, GiB (default {})", d.comm_buffers_gib))
      ->group("Memory reserve");
  app.add_option("--fragmentation", fragmentation,
                 fmt::format("Memory reserve: allocator fragmentation, fraction of activations (default {})",
                             d.fragmentation_fraction))
      ->group("Memory reserve");
  app.add_option("--memory-headroom", headroom,
                 fmt::format("Fraction of HBM a layout must leave free to fit (default {})", d.headroom_fraction))
      ->group("Memory reserve");
}

ClusterSpec ClusterFlags::resolve(const std::optional<ClusterSpec>& from_file) const {
  const ClusterSpec c = !cluster.empty() ? load_cluster(cluster) : from_file ? *from_file : load_cluster("dgx-a100-80gb");
  if (gpus && *gpus < 1) fail("--gpus is {}; it must be >= 1", *gpus);
  if (gpus && c.max_nodes > 0 && *gpus > c.max_nodes * c.gpus_per_node)
    fail("--gpus {} exceeds cluster '{}' ({} nodes x {} GPUs)", *gpus, c.name, c.max_nodes, c.gpus_per_node);
  return c;
}

namespace {

// Every memory-reserve value, with its flag and its sane range. Flags and layout files go
// through the same check (check_reserve_value), so a file cannot carry what a flag would refuse.
struct ReserveField {
  const char* flag;
  double max;
  double MemoryReserve::*field;
};
constexpr ReserveField kReserveFields[] = {
    {"--cuda-context-gib", 1024, &MemoryReserve::cuda_context_gib},
    {"--comm-buffers-gib", 1024, &MemoryReserve::comm_buffers_gib},
    {"--fragmentation", 10, &MemoryReserve::fragmentation_fraction},
    {"--memory-headroom", 0.9, &MemoryReserve::headroom_fraction},
};

void check_reserve_value(const ReserveField& f, double value, const std::string& where) {
  if (!(value >= 0 && value <= f.max))  // also refuses NaN
    fail("{}{} is {}; it must be between 0 and {}", where.empty() ? "" : where + ": ", f.flag, value, f.max);
}

}  // namespace

MemoryReserve ClusterFlags::reserve(const std::optional<MemoryReserve>& from_file, const std::string& file) const {
  MemoryReserve r = from_file.value_or(MemoryReserve{});
  if (from_file)
    for (const auto& f : kReserveFields) check_reserve_value(f, r.*f.field, "layout file '" + file + "'");
  const std::optional<double> flags[] = {cuda_context_gib, comm_buffers_gib, fragmentation, headroom};
  for (std::size_t i = 0; i < std::size(kReserveFields); ++i) {
    if (!flags[i]) continue;
    check_reserve_value(kReserveFields[i], *flags[i], "");
    r.*kReserveFields[i].field = *flags[i];
  }
  return r;
}

void LayoutFlags::add_to(CLI::App& app) {
  const char* g = "Parallel layout (Megatron-LM names)";
  app.add_option("--config", config_file, "Layout file exported by `search` (JSON, Megatron args or NeMo YAML)")
      ->group(g);
  app.add_option("--tensor-model-parallel-size,--tp", tp, "Tensor-parallel size")->group(g);
  app.add_option("--pipeline-model-parallel-size,--pp", pp, "Pipeline-parallel size")->group(g);
  app.add_option("--data-parallel-size,--dp", dp, "Data-parallel size (default: GPUs / (TP x PP))")->group(g);
  app.add_flag("--sequence-parallel", sequence_parallel, "Sequence parallelism (needs TP > 1)")->group(g);
  app.add_option("--micro-batch-size", micro_batch, "Micro batch size")->group(g);
  app.add_option("--global-batch-size", global_batch, "Global batch size (default: micro batch x DP)")->group(g);
  app.add_option("--num-layers-per-virtual-pipeline-stage", layers_per_virtual_stage,
                 "Layers per virtual stage: interleaved 1F1B")->group(g);
  app.add_option("--decoder-first-pipeline-num-layers", first_stage_layers, "Layers on the first stage (uneven split)")
      ->group(g);
  app.add_option("--decoder-last-pipeline-num-layers", last_stage_layers, "Layers on the last stage (uneven split)")
      ->group(g);
  app.add_option("--recompute-granularity", recompute_granularity, "none, selective or full")->group(g);
  app.add_option("--recompute-method", recompute_method, "uniform or block (full recompute)")->group(g);
  app.add_option("--recompute-num-layers", recompute_num_layers, "Layers per recompute group (uniform) or recomputed "
                 "layers per stage (block)")->group(g);
  app.add_flag("--use-distributed-optimizer", distributed_optimizer, "Shard optimizer state over DP")->group(g);
  app.add_flag("--overlap-grad-reduce", overlap_grad_reduce, "Reduce gradients in buckets during backward")->group(g);
  app.add_flag("--overlap-param-gather", overlap_param_gather, "Hide the parameter all-gather (distributed optimizer)")
      ->group(g);
  app.add_flag("--use-flash-attn", flash_attention, "Flash attention instead of the unfused kernels (= "
               "--attention-backend flash)")->group(g);
  app.add_option("--attention-backend", attention_backend,
                 "auto, flash or fused: scores never stored; unfused or local: the s x s scores are "
                 "materialised, as in the 2021-2022 papers' runs (default: the layout file's, else the stack's: "
                 "flash for megatron-core and nemo, unfused for megatron-2021, megatron-deepspeed and our engine)")
      ->group(g);
  app.add_flag("--recompute-activations", recompute_activations, "= --recompute-granularity selective")->group(g);
  app.add_option("--precision", precision, "bf16 (default), fp16, fp8 or fp32")->group(g);
  app.add_flag("--bf16", bf16, "= --precision bf16")->group(g);
  app.add_flag("--fp16", fp16, "= --precision fp16")->group(g);
  app.add_option("--fp8-format", fp8_format, "hybrid or e4m3: FP8 GEMMs (= --precision fp8; Megatron-LM passes "
                 "--bf16 beside it)")->group(g);
  app.add_option("--framework", framework,
                 fmt::format("Software stack: {} (default: the one a --costs database measured, else {})",
                             fmt::join(framework_preset_names(), ", "), kDefaultFramework))
      ->group(g);
}

std::optional<LayoutFile> LayoutFlags::read_file() const {
  if (config_file.empty()) return std::nullopt;
  return read_layout_file(config_file);
}

ParallelConfig LayoutFlags::resolve(const ModelSpec& model, std::optional<int> gpus, const LayoutFile* file,
                                    const std::optional<std::string>& measured_framework) const {
  ParallelConfig c;
  if (file) c = file->config;
  if (tp) c.tp = *tp;
  if (pp) c.pp = *pp;
  if (sequence_parallel) c.sequence_parallel = true;
  if (micro_batch) c.micro_batch = *micro_batch;
  if (recompute_granularity) c.recompute = recompute_granularity_from(*recompute_granularity, "--recompute-granularity");
  if (recompute_activations) {
    if (recompute_granularity && c.recompute != RecomputeGranularity::Selective)
      fail("--recompute-activations means selective recompute, but --recompute-granularity is '{}'",
           *recompute_granularity);
    c.recompute = RecomputeGranularity::Selective;
  }
  if (recompute_method) c.recompute_method = recompute_method_from(*recompute_method, "--recompute-method");
  if (recompute_num_layers) c.recompute_num_layers = *recompute_num_layers;
  if (distributed_optimizer) c.distributed_optimizer = true;
  if (overlap_grad_reduce) c.overlap_grad_reduce = true;
  if (overlap_param_gather) c.overlap_param_gather = true;
  if (flash_attention) c.attention = AttentionKernel::Flash;
  if (attention_backend) {
    c.attention = attention_backend_from(*attention_backend, "simulate");
    if (flash_attention && c.attention != AttentionKernel::Flash)
      fail("--use-flash-attn contradicts --attention-backend {}; give one of them", *attention_backend);
  }
  if (bf16 && fp16) fail("--bf16 and --fp16 are both given; give one");
  const char* megatron_precision = bf16 ? "bf16" : fp16 ? "fp16" : nullptr;
  if (megatron_precision && precision && *precision != megatron_precision &&
      !(*precision == "fp8" && bf16))  // Megatron's fp8 runs pass --bf16 beside --fp8-format
    fail("--{} contradicts --precision {}; give one of them", megatron_precision, *precision);
  if (fp8_format) {
    if (*fp8_format != "hybrid" && *fp8_format != "e4m3")
      fail("--fp8-format '{}' is not one of hybrid, e4m3", *fp8_format);
    if (fp16) fail("--fp8-format {} with --fp16 is not modelled; FP8 runs keep bf16 beside it (--bf16)", *fp8_format);
    if (precision && *precision != "fp8")
      fail("--fp8-format {} contradicts --precision {}; give one of them", *fp8_format, *precision);
    megatron_precision = "fp8";
  }
  if (megatron_precision) c.precision = precision_from(megatron_precision, "--precision");
  if (precision) c.precision = precision_from(*precision, "--precision");
  if (framework) apply_framework(c, *framework);
  else if (measured_framework) apply_framework(c, *measured_framework);
  // No kernel named and no layout file: the stack's own default.
  if (!flash_attention && !attention_backend && !file) c.attention = default_attention(c.framework);
  if (first_stage_layers) c.first_stage_layers = *first_stage_layers;
  if (last_stage_layers) c.last_stage_layers = *last_stage_layers;
  if (c.tp < 1) fail("--tensor-model-parallel-size is {}; it must be >= 1", c.tp);
  if (c.pp < 1) fail("--pipeline-model-parallel-size is {}; it must be >= 1", c.pp);
  if (layers_per_virtual_stage) {
    const int per_stage = *layers_per_virtual_stage;
    if (per_stage < 1 || model.num_layers % (c.pp * per_stage) != 0)
      fail("--num-layers-per-virtual-pipeline-stage {} does not divide num_layers {} / PP {}", per_stage,
           model.num_layers, c.pp);
    c.virtual_stages = model.num_layers / (c.pp * per_stage);
  }
  if (dp) {
    c.dp = *dp;
  } else if (gpus) {
    if (*gpus % (c.tp * c.pp) != 0)
      fail("--gpus {} is not divisible by TP {} x PP {} = {}; DP would not be whole", *gpus, c.tp, c.pp, c.tp * c.pp);
    c.dp = *gpus / (c.tp * c.pp);
  } else if (!file) {
    c.dp = 1;
  }
  if (c.dp < 1) fail("--data-parallel-size is {}; it must be >= 1", c.dp);
  if (global_batch) c.global_batch = *global_batch;
  else if (!file) c.global_batch = c.micro_batch * c.dp;
  return c;
}

AttentionKernel default_attention(const std::string& framework) {
  return load_framework(framework).flash_attention ? AttentionKernel::Flash : AttentionKernel::Unfused;
}

void check_output_folder(const std::string& path, const char* flag) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    fail("{} {}: folder '{}' does not exist", flag, path, parent.string());
  check_output_target(path, flag);
}

double parse_token_count(const std::string& text, const std::string& flag) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail("{} '{}' is not a number; write e.g. 300e9 or 300B", flag, text);
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1e3;
  else if (suffix == "M") scale = 1e6;
  else if (suffix == "B" || suffix == "G") scale = 1e9;
  else if (suffix == "T") scale = 1e12;
  else if (!suffix.empty()) fail("{} '{}' has an unknown suffix '{}'; use K, M, B or T", flag, text, suffix);
  // 1e16 tokens is a thousand times the largest runs published (about 1.5e13, 2024);
  // beyond it a budget is a typo, and near 1e308 it prints "inf days".
  constexpr double kMaxTokens = 1e16;
  const double tokens = value * scale;
  if (!(tokens > 0 && tokens <= kMaxTokens))
    fail("{} '{}' must be a positive token count of at most 1e16 (10000T)", flag, text);
  return tokens;
}

std::optional<CostDatabase> read_costs(const std::string& costs_file) {
  if (costs_file.empty()) return std::nullopt;
  return read_cost_database(costs_file);
}

std::optional<std::string> measured_framework(const std::optional<CostDatabase>& db) {
  if (!db) return std::nullopt;
  return db->framework;
}

std::unique_ptr<CostSource> make_cost_source(std::optional<CostDatabase> db, const std::string& costs_file,
                                             const ClusterSpec& cluster, Precision precision,
                                             const std::string& framework) {
  if (!db) return std::make_unique<AnalyticCosts>(cluster, precision, framework);
  return std::make_unique<MeasuredCosts>(std::move(*db), costs_file, cluster, precision);
}

}  // namespace cc::cli
