#include "cli/common_options.h"

#include <cmath>

#include "sim/error.h"
#include "cli/layout_files.h"
#include "sim/presets.h"

namespace cc::cli {

void ModelFlags::add_to(CLI::App& app) {
  app.add_option("--model", model, "Model preset name, model JSON, or HuggingFace config.json")
      ->group("Model");
  app.add_option("--num-layers", num_layers, "Override: transformer layers")->group("Model");
  app.add_option("--hidden-size", hidden_size, "Override: hidden size")->group("Model");
  app.add_option("--num-attention-heads", heads, "Override: attention heads")->group("Model");
  app.add_option("--num-query-groups", query_groups, "Override: KV heads (grouped-query attention)")->group("Model");
  app.add_option("--ffn-hidden-size", ffn, "Override: MLP hidden size")->group("Model");
  app.add_option("--seq-length", seq_length, "Override: sequence length")->group("Model");
  app.add_option("--vocab-size", vocab, "Override: (padded) vocabulary size")->group("Model");
  app.add_flag("--swiglu", swiglu, "Override: gated SwiGLU MLP instead of GeLU")->group("Model");
}

ModelSpec ModelFlags::resolve() const {
  ModelSpec m;
  if (!model.empty()) {
    m = load_model(model);
  } else {
    // No preset: a GPT-style model (4h GeLU MLP, LayerNorm, learned positions) from flags.
    if (!num_layers || !hidden_size || !heads)
      fail("no --model given: pass a preset (e.g. --model gpt3-175b) or at least --num-layers, --hidden-size and "
           "--num-attention-heads");
    m.name = "custom";
    m.seq_length = 2048;
    m.vocab_size = 51200;
  }
  if (num_layers) m.num_layers = *num_layers;
  if (hidden_size) m.hidden_size = *hidden_size;
  if (heads) m.num_attention_heads = *heads;
  if (query_groups) m.num_query_groups = *query_groups;
  else if (heads && model.empty()) m.num_query_groups = *heads;
  if (ffn) m.ffn_hidden_size = *ffn;
  else if (model.empty()) m.ffn_hidden_size = 4 * m.hidden_size;
  if (seq_length) m.seq_length = *seq_length;
  if (vocab) m.vocab_size = *vocab;
  if (swiglu) m.activation = Activation::SwiGLU;
  if (m.num_query_groups == 0) m.num_query_groups = m.num_attention_heads;
  m.validate(model.empty() ? "model flags" : "model '" + model + "' with overrides");
  return m;
}

void ClusterFlags::add_to(CLI::App& app) {
  app.add_option("--cluster", cluster, "Cluster preset name or cluster JSON")->capture_default_str()->group("Cluster");
  app.add_option("--gpus", gpus, "Total GPUs (DP = GPUs / (TP x PP))")->group("Cluster");
  app.add_option("--cuda-context-gib", cuda_context_gib, "Memory reserve: CUDA context and library handles, GiB")
      ->capture_default_str()->group("Memory reserve");
  app.add_option("--comm-buffers-gib", comm_buffers_gib, "Memory reserve: NCCL buffers, GiB")
      ->capture_default_str()->group("Memory reserve");
  app.add_option("--fragmentation", fragmentation, "Memory reserve: allocator fragmentation, fraction of activations")
      ->capture_default_str()->group("Memory reserve");
}

ClusterSpec ClusterFlags::resolve() const {
  ClusterSpec c = load_cluster(cluster);
  if (gpus && *gpus < 1) fail("--gpus is {}; it must be >= 1", *gpus);
  if (gpus && c.max_nodes > 0 && *gpus > c.max_nodes * c.gpus_per_node)
    fail("--gpus {} exceeds cluster '{}' ({} nodes x {} GPUs)", *gpus, c.name, c.max_nodes, c.gpus_per_node);
  if (cuda_context_gib < 0 || comm_buffers_gib < 0 || fragmentation < 0)
    fail("memory reserve values must be >= 0 (got context {}, buffers {}, fragmentation {})", cuda_context_gib,
         comm_buffers_gib, fragmentation);
  return c;
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
  app.add_flag("--use-flash-attn", flash_attention, "Flash attention instead of the unfused kernels")->group(g);
  app.add_option("--precision", precision, "bf16 (default), fp16, fp8 or fp32")->group(g);
}

ParallelConfig LayoutFlags::resolve(const ModelSpec& model, std::optional<int> gpus) const {
  ParallelConfig c;
  if (!config_file.empty()) c = read_layout_file(config_file);
  if (tp) c.tp = *tp;
  if (pp) c.pp = *pp;
  if (sequence_parallel) c.sequence_parallel = true;
  if (micro_batch) c.micro_batch = *micro_batch;
  if (recompute_granularity) c.recompute = recompute_granularity_from(*recompute_granularity, "--recompute-granularity");
  if (recompute_method) c.recompute_method = recompute_method_from(*recompute_method, "--recompute-method");
  if (recompute_num_layers) c.recompute_num_layers = *recompute_num_layers;
  if (distributed_optimizer) c.distributed_optimizer = true;
  if (overlap_grad_reduce) c.overlap_grad_reduce = true;
  if (overlap_param_gather) c.overlap_param_gather = true;
  if (flash_attention) c.attention = AttentionKernel::Flash;
  if (precision) c.precision = precision_from(*precision, "--precision");
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
  } else if (config_file.empty()) {
    c.dp = 1;
  }
  if (c.dp < 1) fail("--data-parallel-size is {}; it must be >= 1", c.dp);
  if (global_batch) c.global_batch = *global_batch;
  else if (config_file.empty()) c.global_batch = c.micro_batch * c.dp;
  return c;
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
  if (!(value * scale > 0) || !std::isfinite(value)) fail("{} '{}' must be a positive token count", flag, text);
  return value * scale;
}

}  // namespace cc::cli
