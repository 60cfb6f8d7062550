// megatron_arguments.cpp — a Megatron-LM argument file, read and written. Written: Megatron-LM
// arguments only, so `pretrain_gpt.py $(cat BEST.args)` works, with a launch script beside it
// (BEST.args.sh) for what arguments cannot say: the environment, the node count, the cluster.
// Read: through the one Megatron vocabulary (megatron_options.h) that `simulate` also parses.
#include <cmath>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "interop/layout_common.h"
#include "interop/megatron_options.h"
#include "interop/megatron_tokenizer.h"
#include "interop/moe_layer_freq.h"
#include "sim/error.h"
#include "sim/framework_spec.h"

namespace cc {

namespace interop {

namespace {

// The words of an argument file, as `$(cat FILE)` splits them; "#" comments (older clustercast
// exports had them, hand-written files may) end at the line's end.
std::vector<std::string> argument_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line.substr(0, line.find('#')));
    for (std::string w; in >> w;) words.push_back(w);
  }
  return words;
}

bool names_the_model(const MegatronModelArgs& a) {
  return a.num_layers || a.hidden_size || a.num_attention_heads || a.num_query_groups || a.ffn_hidden_size ||
         a.seq_length || a.vocab_size || a.kv_channels || a.max_position_embeddings || a.swiglu || a.squared_relu ||
         a.normalization || a.position_embedding_type || a.qk_layernorm || a.add_qkv_bias || a.num_experts ||
         a.moe_router_topk || a.moe_ffn_hidden_size || a.moe_shared_expert_intermediate_size ||
         a.moe_shared_expert_gate || a.moe_layer_freq || a.moe_router_score_function || a.moe_router_num_groups ||
         a.moe_router_group_topk || a.moe_router_topk_scaling_factor || a.moe_router_enable_expert_bias ||
         a.multi_latent_attention || a.q_lora_rank || a.kv_lora_rank || a.qk_head_dim || a.qk_pos_emb_head_dim ||
         a.v_head_dim || a.mtp_num_layers;
}

// The vocabulary Megatron-LM trains from the file's flags (megatron_tokenizer_vocabulary), padded
// at the file's TP; a tokenizer whose words clustercast cannot count leaves it to the command line
// (RunFlags::request refuses until --vocab-size gives it).
void read_vocabulary(const MegatronModelArgs& m, int tp, const std::string& where, ModelSpec& model, LayoutFile& out) {
  TokenizerVocabulary v = megatron_tokenizer_vocabulary(m, tp, where);
  if (!v.vocabulary) {
    out.vocabulary_unknown = std::move(v.unknown);
    return;
  }
  const long long padded = v.vocabulary->padded(tp);
  if (padded > 16'777'216) fail("{}: --vocab-size {} padded to {} is beyond 16777216", where, v.vocabulary->words, padded);
  out.vocabulary = v.vocabulary;  // RunFlags::request says where the words came from, at the run's TP
  model.vocab_size = static_cast<int>(padded);
}

}  // namespace

LayoutFile read_megatron(const std::string& text, const std::string& where, const std::string& launch_script) {
  const MegatronArgs args = parse_megatron_words(argument_words(text), where);
  LayoutFile out;
  ParallelConfig& c = out.config;
  // Megatron-LM's defaults where the file is silent: --attention-backend auto (flash or fused
  // attention) and FP32 (no --bf16, --fp16 or --fp8-format).
  c.attention = AttentionKernel::Flash;
  c.precision = Precision::FP32;
  c.global_batch = 0;  // finish_layout: micro batch x DP, Megatron's default
  out.switches = megatron_switches(args.layout);
  std::optional<ModelSpec> model;
  const MegatronModelArgs& m = args.model;
  if (names_the_model(m)) {
    // Megatron-LM requires all three; a file with some shape flags but not these would be
    // read as a different model.
    for (const auto& [flag, v] : {std::pair{"--num-layers", m.num_layers}, std::pair{"--hidden-size", m.hidden_size},
                                  std::pair{"--num-attention-heads", m.num_attention_heads}})
      if (!v) fail("{}: the model flags need {} beside them (Megatron-LM requires it)", where, flag);
    model = apply_megatron_model(m, gpt_base(), /*from_flags_alone=*/true, where);
  } else if (args.layout.layers_per_virtual_stage) {
    fail("{}: --num-layers-per-virtual-pipeline-stage needs --num-layers in the same file", where);
  }
  apply_megatron_layout(args.layout, c, model.value_or(ModelSpec{}), where);  // checks TP >= 1
  if (model) {
    read_vocabulary(m, c.tp, where, *model, out);
    out.megatron_model = m;
  }
  out.model = model;
  out.ignored = args.ignored;
  apply_clustercast_comment(text, out, where);  // an older export's own comment line
  apply_clustercast_comment(launch_script, out, where);
  finish_layout(out, where);
  return out;
}

}  // namespace interop

namespace {

// Megatron-LM pads --vocab-size to a multiple of --make-vocab-size-divisible-by x TP; the
// largest power-of-two unit (up to its default 128) under which our vocabulary is already such
// a multiple makes that padding a no-op, so Megatron builds the vocabulary we simulated.
int vocab_unit(const ModelSpec& m, int tp) {
  for (int unit = 128; unit > 1; unit /= 2)
    if (m.vocab_size % (static_cast<long long>(unit) * tp) == 0) return unit;
  return 1;
}

// The stack's deterministic kernels, where the run can have them: a run with a flag Megatron-LM's
// --deterministic-mode refuses trains without it, as its functional tests do.
bool exports_deterministic_mode(const ParallelConfig& c) {
  return load_framework(c.framework).deterministic_mode && !flag_refusing_deterministic_mode(c);
}

}  // namespace

std::string megatron_arguments(const SimResult& r, const MemoryReserve&) {
  const ParallelConfig& c = r.config;
  const ModelSpec& m = r.model;
  // What Megatron-LM's arguments cannot say is refused, never dropped: the file would train
  // another model than the one simulated.
  if (m.position_embedding == PositionEmbedding::Alibi)
    fail("--export-megatron: model '{}' uses ALiBi positions, which Megatron-LM's --position-embedding-type cannot "
         "express (learned_absolute, rope, ...); export it with --export or --export-nemo",
         m.name);
  if (m.activation == Activation::GeGLU)
    fail("--export-megatron: model '{}' has a GeGLU MLP, which Megatron-LM has no flag for (--quick-geglu is a gated "
         "quick-GELU, another function); export it with --export or --export-nemo",
         m.name);
  interop::refuse_unwritable_architecture(m, "--export-megatron");
  if (m.rotary_base != std::floor(m.rotary_base))
    fail("--export-megatron: model '{}' has a RoPE base of {}, and Megatron-LM's --rotary-base takes a whole number; "
         "export it with --export or --export-nemo",
         m.name, m.rotary_base);
  if (c.overlap_param_gather && !c.overlap_grad_reduce)
    fail("--export-megatron: the layout overlaps the parameter all-gather without overlapping the gradient "
         "reduction; Megatron-LM requires --overlap-grad-reduce with --overlap-param-gather");
  std::string out;
  auto arg = [&](const std::string& flag, const std::string& value = "") {
    out += value.empty() ? flag + "\n" : flag + " " + value + "\n";
  };
  arg("--tensor-model-parallel-size", std::to_string(c.tp));
  arg("--pipeline-model-parallel-size", std::to_string(c.pp));
  if (c.ep > 1) arg("--expert-model-parallel-size", std::to_string(c.ep));
  if (c.etp > 0) arg("--expert-tensor-parallel-size", std::to_string(c.etp));
  if (c.cp > 1) {
    arg("--context-parallel-size", std::to_string(c.cp));
    arg("--cp-comm-type", to_string(c.cp_comm_type));
  }
  if (c.cp_a2a_size)
    arg("--hierarchical-context-parallel-sizes", fmt::format("{} {}", c.cp_a2a_size, c.cp / c.cp_a2a_size));
  // A layout string sets the chunks itself; an uneven or counted split takes the chunk count
  // (Megatron-LM refuses layers per virtual stage beside uneven stages); an even split keeps
  // the layers per virtual stage it always wrote.
  if (!c.pipeline_layout.empty()) arg("--pipeline-model-parallel-layout", c.pipeline_layout);
  else if (c.virtual_stages > 1 && (c.first_stage_layers || c.last_stage_layers || c.account_for_embedding ||
                                    c.account_for_loss))
    arg("--num-virtual-stages-per-pipeline-rank", std::to_string(c.virtual_stages));
  else if (c.virtual_stages > 1)
    arg("--num-layers-per-virtual-pipeline-stage", std::to_string(m.num_layers / (c.pp * c.virtual_stages)));
  if (c.microbatch_group_size)
    arg("--microbatch-group-size-per-virtual-pipeline-stage", std::to_string(c.microbatch_group_size));
  if (c.account_for_embedding) arg("--account-for-embedding-in-pipeline-split");
  if (c.account_for_loss) arg("--account-for-loss-in-pipeline-split");
  if (c.first_stage_layers) arg("--decoder-first-pipeline-num-layers", std::to_string(c.first_stage_layers));
  if (c.last_stage_layers) arg("--decoder-last-pipeline-num-layers", std::to_string(c.last_stage_layers));
  if (c.sequence_parallel) arg("--sequence-parallel");
  arg("--micro-batch-size", std::to_string(c.micro_batch));
  arg("--global-batch-size", std::to_string(c.global_batch));
  if (c.recompute != RecomputeGranularity::None) arg("--recompute-granularity", to_string(c.recompute));
  if (c.recompute == RecomputeGranularity::Full) {
    arg("--recompute-method", to_string(c.recompute_method));
    arg("--recompute-num-layers", std::to_string(c.recompute_num_layers));
  }
  if (c.distributed_optimizer) arg("--use-distributed-optimizer");
  if (c.distributed_optimizer_instances > 1)
    arg("--num-distributed-optimizer-instances", std::to_string(c.distributed_optimizer_instances));
  if (c.overlap_grad_reduce) arg("--overlap-grad-reduce");
  if (c.overlap_param_gather) arg("--overlap-param-gather");
  if (c.tp_comm_overlap) arg("--tp-comm-overlap");
  if (c.grad_reduce_in_bf16) arg("--grad-reduce-in-bf16");
  if (c.fp8_param_gather) arg("--fp8-param-gather");
  if (c.fp8_recipe != Fp8Recipe::Delayed) arg("--fp8-recipe", to_string(c.fp8_recipe));
  if (c.cross_entropy_fusion) arg("--cross-entropy-loss-fusion");
  if (!c.rope_fusion && m.position_embedding == PositionEmbedding::Rope) arg("--no-rope-fusion");
  // The kernel choices of the stack the prediction was priced under: the run makes them too.
  const FrameworkSpec& stack = load_framework(c.framework);
  if (exports_deterministic_mode(c)) arg("--deterministic-mode");
  if (!stack.gradient_accumulation_fusion) arg("--no-gradient-accumulation-fusion");
  if (c.moe != MoeRunOptions{}) {
    const MoeRunOptions& o = c.moe;
    arg("--moe-token-dispatcher-type", to_string(o.dispatcher));
    if (o.dispatcher == TokenDispatcher::Flex) arg("--moe-flex-dispatcher-backend", to_string(o.flex_backend));
    if (o.grouped_gemm) arg("--moe-grouped-gemm");
    if (o.capacity_factor) arg("--moe-expert-capacity-factor", fmt::format("{}", *o.capacity_factor));
    if (o.pad_to_capacity) arg("--moe-pad-expert-input-to-capacity");
    arg("--moe-router-load-balancing-type", to_string(o.load_balancing));
    arg("--moe-aux-loss-coeff", fmt::format("{}", o.aux_loss_coeff));
    arg("--moe-token-drop-policy", to_string(o.drop_policy));
    if (o.shared_expert_overlap) arg("--moe-shared-expert-overlap");
    if (o.overlap_ep_comm) arg("--overlap-moe-expert-parallel-comm");
  }
  // Always written: without it Megatron-LM (and our reader) take auto, i.e. flash.
  arg("--attention-backend", c.attention == AttentionKernel::Flash ? "flash" : "unfused");
  switch (c.precision) {
    case Precision::BF16: arg("--bf16"); break;
    case Precision::FP16: arg("--fp16"); break;
    case Precision::FP8: arg("--bf16"); arg("--fp8-format", "hybrid"); break;
    case Precision::FP32: break;  // Megatron-LM's default
  }
  arg("--num-layers", std::to_string(m.num_layers));
  arg("--hidden-size", std::to_string(m.hidden_size));
  arg("--num-attention-heads", std::to_string(m.num_attention_heads));
  if (m.num_query_groups != m.num_attention_heads) {
    arg("--group-query-attention");
    arg("--num-query-groups", std::to_string(m.num_query_groups));
  }
  if (m.explicit_head_dim > 0) arg("--kv-channels", std::to_string(m.explicit_head_dim));
  arg("--ffn-hidden-size", std::to_string(m.ffn_hidden_size));
  arg("--seq-length", std::to_string(m.seq_length));
  arg("--max-position-embeddings", std::to_string(m.seq_length));
  arg("--vocab-size", std::to_string(m.vocab_size));
  arg("--make-vocab-size-divisible-by", std::to_string(vocab_unit(m, c.tp)));
  if (m.activation == Activation::SwiGLU) arg("--swiglu");
  if (m.activation == Activation::SquaredReLU) arg("--squared-relu");
  // Megatron-LM's biases are one switch (--add-bias-linear, its default) and --add-qkv-bias beside
  // it; refuse_unwritable_architecture refused the models they cannot say.
  if (!m.projection_bias) arg("--disable-bias-linear");
  if (!m.projection_bias && m.qkv_bias) arg("--add-qkv-bias");
  if (m.qk_norm == QkNorm::PerHead || (m.mla.enabled && m.mla.latent_norms)) arg("--qk-layernorm");
  if (m.normalization == Normalization::RMSNorm) arg("--normalization", "RMSNorm");
  if (m.position_embedding == PositionEmbedding::Rope) {
    arg("--position-embedding-type", "rope");
    arg("--rotary-base", fmt::format("{:.0f}", m.rotary_base));
  }
  if (!m.tied_embeddings) arg("--untie-embeddings-and-output-weights");
  if (!m.dropout) {
    arg("--attention-dropout", "0.0");
    arg("--hidden-dropout", "0.0");
  }
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    arg("--num-experts", std::to_string(e.num_experts));
    arg("--moe-router-topk", std::to_string(e.router_topk));
    arg("--moe-ffn-hidden-size", std::to_string(e.ffn_hidden_size));
    if (e.shared_expert_ffn_hidden_size > 0)
      arg("--moe-shared-expert-intermediate-size", std::to_string(e.shared_expert_ffn_hidden_size));
    if (e.shared_expert_gate) arg("--moe-shared-expert-gate");
    arg("--moe-layer-freq", moe_layer_freq_text(e));
    arg("--moe-router-score-function", to_string(e.score_function));
    if (e.router_num_groups > 0) {
      arg("--moe-router-num-groups", std::to_string(e.router_num_groups));
      arg("--moe-router-group-topk", std::to_string(e.router_group_topk));
    }
    if (e.topk_scaling_factor != 1.0) arg("--moe-router-topk-scaling-factor", fmt::format("{}", e.topk_scaling_factor));
    if (e.router_expert_bias) arg("--moe-router-enable-expert-bias");
  }
  if (m.mla.enabled) {
    const MlaSpec& l = m.mla;
    arg("--multi-latent-attention");
    if (l.q_lora_rank > 0) arg("--q-lora-rank", std::to_string(l.q_lora_rank));  // absent: no query latent
    arg("--kv-lora-rank", std::to_string(l.kv_lora_rank));
    arg("--qk-head-dim", std::to_string(l.qk_head_dim));
    arg("--qk-pos-emb-head-dim", std::to_string(l.qk_pos_emb_head_dim));
    arg("--v-head-dim", std::to_string(l.v_head_dim));
  }
  if (m.mtp_num_layers > 0) arg("--mtp-num-layers", std::to_string(m.mtp_num_layers));
  return out;
}

std::string megatron_script_path(const std::string& arguments_path) { return arguments_path + ".sh"; }

std::string megatron_launch_script(const SimResult& r, const MemoryReserve& reserve, const std::string& arguments_path) {
  const ParallelConfig& c = r.config;
  const int per_node = std::min(r.cluster.gpus_per_node, c.gpus());
  const std::string args_name = std::filesystem::path(arguments_path).filename().string();
  std::string out = "#!/usr/bin/env bash\n";
  out += fmt::format("# Megatron-LM launch for {} on {} x {} ({} nodes x {} GPUs), written by clustercast.\n",
                     r.model.name, c.gpus(), r.cluster.gpu.name, c.gpus() / per_node, per_node);
  out += interop::prediction_comment(r);
  out += fmt::format("# Run it on every node with NODE_RANK and MASTER_ADDR set, from Megatron-LM's folder; extra\n"
                     "# arguments (data, tokenizer, checkpoints) go after it. `clustercast simulate --config {}`\n"
                     "# reads the cluster and GPU count from the next line.\n",
                     args_name);
  out += interop::clustercast_comment(r, reserve);
  const int unit = vocab_unit(r.model, c.tp);
  if (r.model.vocab_size % c.tp != 0)
    out += fmt::format("# Megatron-LM pads the vocabulary {} to {}, a multiple of TP {}; clustercast simulated {}.\n",
                       r.model.vocab_size, megatron_padded_vocab(r.model.vocab_size, unit, c.tp), c.tp,
                       r.model.vocab_size);
  out += "set -euo pipefail\n";
  if (c.tp > 1)
    out += "# Megatron-LM asserts it under tensor (and sequence) parallelism on GPUs before Blackwell: one\n"
           "# hardware queue keeps the TP communication kernels in the order they were issued.\n"
           "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
  if (exports_deterministic_mode(c))
    out += "# --deterministic-mode: Megatron-LM asserts NCCL_ALGO is set (Ring, as its functional tests run), and\n"
           "# deterministic cuBLAS needs a fixed workspace (torch.use_deterministic_algorithms).\n"
           "export NCCL_ALGO=Ring\n"
           "export CUBLAS_WORKSPACE_CONFIG=:4096:8\n";
  out += fmt::format("torchrun --nproc_per_node {} --nnodes {} --node_rank \"${{NODE_RANK:-0}}\" \\\n"
                     "  --master_addr \"${{MASTER_ADDR:-localhost}}\" --master_port \"${{MASTER_PORT:-29500}}\" \\\n"
                     "  pretrain_gpt.py $(cat \"$(dirname \"$0\")/{}\") \"$@\"\n",
                     per_node, c.gpus() / per_node, args_name);
  return out;
}

}  // namespace cc
