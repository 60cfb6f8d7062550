// nemo_yaml.cpp — a NeMo Megatron GPT config (examples/nlp/language_modeling/conf/
// megatron_gpt_config.yaml and the launcher's conf/training/gpt3/*.yaml), read with yaml-cpp and
// OmegaConf's interpolations (omegaconf.h), and written with only keys NeMo's base config has.
// The model keys go through the same rules as Megatron-LM's flags (apply_megatron_model).
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "interop/layout_common.h"
#include "interop/megatron_options.h"
#include "interop/megatron_tokenizer.h"
#include "interop/omegaconf.h"
#include "sim/error.h"
#include "sim/numbers.h"

namespace cc {

namespace interop {

namespace {

class NemoKeys {
 public:
  explicit NemoKeys(const OmegaConfTree& tree) : y_(tree) {}
  std::optional<std::string> get(const std::string& key) const { return y_.scalar(key); }
  bool has(const std::string& key) const { return y_.has(key); }
  std::optional<int> integer(const std::string& key) const {
    const auto v = get(key);
    if (!v) return std::nullopt;
    // NeMo loads its YAML with OmegaConf, whose loader follows YAML 1.1: a leading 0 makes an
    // integer octal there (010 is 8, 09 a string). Reading 010 as 10 would simulate another
    // layout than NeMo runs, so the one ambiguous spelling is refused.
    const std::string digits = v->substr(!v->empty() && (v->front() == '-' || v->front() == '+') ? 1 : 0);
    if (digits.size() > 1 && digits.front() == '0' && parse_integer(*v))
      fail_at(key,
              "{}: {} is {}; NeMo reads YAML 1.1, where a leading 0 makes an integer octal (010 is 8): write it "
              "without leading zeros",
              y_.where(), key, *v);
    return to_int(*v, key, y_.where());
  }
  std::optional<double> number(const std::string& key) const {
    const auto v = get(key);
    return v ? std::optional<double>(to_double(*v, key, y_.where())) : std::nullopt;
  }
  // OmegaConf reads YAML 1.1 booleans (PyYAML): true/false in their three capitalisations.
  bool boolean(const std::string& key, bool fallback) const {
    const auto v = get(key);
    if (!v) return fallback;
    if (*v == "true" || *v == "True" || *v == "TRUE") return true;
    if (*v == "false" || *v == "False" || *v == "FALSE") return false;
    fail_at(key, "{}: {} is '{}'; expected true or false", y_.where(), key, *v);
  }
  // One of `valid` (written as in NeMo's own comments), else a SpecError listing them.
  std::string choice(const std::string& key, const std::string& fallback, std::initializer_list<const char*> valid) const {
    const std::string v = get(key).value_or(fallback);
    for (const char* ok : valid)
      if (v == ok) return v;
    std::string list;
    for (const char* ok : valid) list += (list.empty() ? "" : ", ") + std::string(ok);
    fail_at(key, "{}: {} is '{}', which clustercast does not model; valid: {}", y_.where(), key, v, list);
  }
  const std::string& where() const { return y_.where(); }
  // A key written as null (YAML's null, ~ or an empty value), which has() reads as absent.
  bool is_null(const std::string& key) const {
    YAML::Node node;
    node.reset(y_.root());
    for (std::size_t start = 0;;) {
      const std::size_t dot = key.find('.', start);
      if (!node.IsMap()) return false;
      const YAML::Node next = std::as_const(node)[key.substr(start, dot == std::string::npos ? dot : dot - start)];
      if (!next.IsDefined()) return false;
      node.reset(next);
      if (dot == std::string::npos) return node.IsNull();
      start = dot + 1;
    }
  }

 private:
  const OmegaConfTree& y_;
};

Precision nemo_precision(const NemoKeys& y) {
  // Lightning's spellings (trainer.precision), and model.fp8 for Transformer Engine's FP8 GEMMs.
  const std::string p = y.choice("trainer.precision", "32", {"32", "32-true", "16", "16-mixed", "bf16", "bf16-mixed"});
  const bool fp8 = y.boolean("model.fp8", false);
  // The FP8 format (E4M3 throughout, or E4M3 forward and E5M2 gradients) is priced alike; NeMo's
  // build_transformer_config raises when FP8 is on and neither is set.
  const bool e4m3 = y.boolean("model.fp8_e4m3", false), hybrid = y.boolean("model.fp8_hybrid", false);
  if (fp8) {
    if (!e4m3 && !hybrid)
      fail_at("model.fp8", "{}: model.fp8 is true but neither model.fp8_e4m3 nor model.fp8_hybrid is; NeMo needs one "
              "of them for the FP8 format",
              y.where());
    if (p.rfind("bf16", 0) != 0)
      fail("{}: model.fp8 with trainer.precision {} is not modelled; FP8 runs keep bf16 beside it (bf16-mixed)",
           y.where(), p);
    return Precision::FP8;
  }
  if (p.rfind("bf16", 0) == 0) return Precision::BF16;
  if (p.rfind("16", 0) == 0) return Precision::FP16;
  return Precision::FP32;
}

// NeMo hands the MoE keys to Megatron-Core's TransformerConfig under the same names as
// Megatron-LM's flags (moe_token_dispatcher_type, ...); absent keys keep Megatron-Core's defaults.
void read_moe_options(const NemoKeys& y, MoeRunOptions& o) {
  const std::string& where = y.where();
  if (const auto v = y.get("model.moe_token_dispatcher_type")) o.dispatcher = token_dispatcher_from(*v, where);
  if (const auto v = y.get("model.moe_flex_dispatcher_backend")) o.flex_backend = flex_backend_from(*v, where);
  if (y.boolean("model.moe_enable_deepep", false)) {
    if (o.dispatcher != TokenDispatcher::Flex || o.flex_backend == FlexBackend::HybridEP)
      fail_at("model.moe_enable_deepep",
              "{}: moe_enable_deepep needs moe_token_dispatcher_type flex and no other flex backend (Megatron-Core); "
              "the dispatcher is {}",
              where, to_string(o.dispatcher));
    o.flex_backend = FlexBackend::DeepEP;
  }
  o.grouped_gemm = y.boolean("model.moe_grouped_gemm", o.grouped_gemm);
  // null (dropless) reads as absent; any number is read, and validate_layout() judges it.
  if (const auto v = y.number("model.moe_expert_capacity_factor")) o.capacity_factor = *v;
  o.pad_to_capacity = y.boolean("model.moe_pad_expert_input_to_capacity", o.pad_to_capacity);
  if (const auto v = y.get("model.moe_router_load_balancing_type")) o.load_balancing = load_balancing_from(*v, where);
  if (const auto v = y.number("model.moe_aux_loss_coeff")) o.aux_loss_coeff = *v;
  if (const auto v = y.get("model.moe_token_drop_policy")) o.drop_policy = token_drop_policy_from(*v, where);
  o.shared_expert_overlap = y.boolean("model.moe_shared_expert_overlap", o.shared_expert_overlap);
  o.overlap_ep_comm = y.boolean("model.overlap_moe_expert_parallel_comm", o.overlap_ep_comm);
}

// The model keys of experts, MLA and MTP: Megatron-Core's TransformerConfig fields, which NeMo 1
// copies from model.* keys of the same name and Megatron-Bridge's providers are; Megatron-LM's flag
// names with underscores, except num_moe_experts (--num-experts). MLA's widths left out take
// MLATransformerConfig's defaults (query and key/value latents of 512, heads of 128 + 64, values
// of 128); a null q_lora_rank is no query latent.
void read_model_architecture(const NemoKeys& y, MegatronModelArgs& a) {
  a.qk_layernorm = y.boolean("model.qk_layernorm", false);
  a.add_qkv_bias = y.boolean("model.add_qkv_bias", false);
  a.num_experts = y.integer("model.num_moe_experts");
  a.moe_router_topk = y.integer("model.moe_router_topk");
  a.moe_ffn_hidden_size = y.integer("model.moe_ffn_hidden_size");
  a.moe_shared_expert_intermediate_size = y.integer("model.moe_shared_expert_intermediate_size");
  a.moe_shared_expert_gate = y.boolean("model.moe_shared_expert_gate", false);
  if (y.has("model.moe_layer_freq.0")) {
    // A list, one 0/1 per layer: read as the same list display Megatron-LM's flag takes.
    std::string list = "[";
    for (int i = 0; y.has(fmt::format("model.moe_layer_freq.{}", i)); ++i) {
      if (i > 10'000) fail_at("model.moe_layer_freq", "{}: model.moe_layer_freq has more entries than any model has layers", y.where());
      const int v = *y.integer(fmt::format("model.moe_layer_freq.{}", i));
      if (v < 0) fail_at("model.moe_layer_freq", "{}: model.moe_layer_freq entry {} is {}; each entry must be 0 (dense) or 1 (MoE)", y.where(), i, v);
      list += fmt::format("{}{}", i == 0 ? "" : ",", v);
    }
    a.moe_layer_freq = list + "]";
  } else if (const auto freq = y.integer("model.moe_layer_freq")) {
    a.moe_layer_freq = std::to_string(*freq);
  }
  a.moe_router_score_function = y.get("model.moe_router_score_function");
  a.moe_router_num_groups = y.integer("model.moe_router_num_groups");
  a.moe_router_group_topk = y.integer("model.moe_router_group_topk");
  a.moe_router_topk_scaling_factor = y.number("model.moe_router_topk_scaling_factor");
  a.moe_router_enable_expert_bias = y.boolean("model.moe_router_enable_expert_bias", false);
  a.multi_latent_attention = y.boolean("model.multi_latent_attention", false);
  // With MLA a key left out takes MLATransformerConfig's default; without it, one given is
  // refused by apply_megatron_model, naming it.
  const struct {
    const char* key;
    std::optional<int> MegatronModelArgs::*field;
    int mla_default;
  } widths[] = {{"model.q_lora_rank", &MegatronModelArgs::q_lora_rank, 512},
                {"model.kv_lora_rank", &MegatronModelArgs::kv_lora_rank, 512},
                {"model.qk_head_dim", &MegatronModelArgs::qk_head_dim, 128},
                {"model.qk_pos_emb_head_dim", &MegatronModelArgs::qk_pos_emb_head_dim, 64},
                {"model.v_head_dim", &MegatronModelArgs::v_head_dim, 128}};
  for (const auto& w : widths) {
    a.*w.field = y.integer(w.key);
    if (a.multi_latent_attention && !(a.*w.field)) a.*w.field = y.is_null(w.key) ? 0 : w.mla_default;
  }
  a.mtp_num_layers = y.integer("model.mtp_num_layers");
}

// The tokenizers whose words are a fact of the tokenizer itself, not of a file we lack: Megatron's
// GPT-2 BPE, and a HuggingFace tokenizer named by its Hub repository (hub_tokenizer_words).
std::optional<long long> known_tokenizer_words(const NemoKeys& y) {
  const std::string type = y.get("model.tokenizer.type").value_or("");
  if (type == "GPT2BPETokenizer") return kGpt2BpeWords;
  if (y.get("model.tokenizer.library").value_or("") != "huggingface") return std::nullopt;
  return hub_tokenizer_words(type);
}

ModelSpec nemo_model(const NemoKeys& y, int tp, bool vocab_in_comment, LayoutFile& out) {
  MegatronModelArgs a;
  for (const auto& [key, field] : {std::pair{"model.num_layers", &a.num_layers},
                                   std::pair{"model.hidden_size", &a.hidden_size},
                                   std::pair{"model.num_attention_heads", &a.num_attention_heads}}) {
    *field = y.integer(key);
    if (!*field)
      fail_at(key, "{}: {} is missing (the model keys need num_layers, hidden_size and num_attention_heads)", y.where(),
              key);
  }
  a.num_query_groups = y.integer("model.num_query_groups");
  a.ffn_hidden_size = y.integer("model.ffn_hidden_size");
  a.seq_length = y.integer("model.encoder_seq_length");
  a.max_position_embeddings = y.integer("model.max_position_embeddings");
  a.kv_channels = y.integer("model.kv_channels");
  a.hidden_dropout = y.number("model.hidden_dropout");
  a.attention_dropout = y.number("model.attention_dropout");
  a.untie_embeddings = !y.boolean("model.share_embeddings_and_output_weights", true);
  // NeMo 1's `bias` is Megatron-Core's add_bias_linear, the name Megatron-Bridge writes.
  const bool bias = y.boolean("model.bias", true), add_bias_linear = y.boolean("model.add_bias_linear", bias);
  if (y.has("model.bias") && add_bias_linear != bias)
    fail_at("model.add_bias_linear", "{}: model.bias {} and model.add_bias_linear {} disagree; they are one switch",
            y.where(), bias, add_bias_linear);
  a.disable_bias_linear = !add_bias_linear;
  ModelSpec base = gpt_base();
  // NeMo's names; GeGLU and ALiBi have no Megatron-LM flag, so they go into the base.
  const std::string act =
      y.choice("model.activation", "gelu", {"gelu", "swiglu", "fast-swiglu", "geglu", "fast-geglu", "squared-relu"});
  if (act.find("swiglu") != std::string::npos) a.swiglu = true;
  if (act == "squared-relu") {
    a.squared_relu = true;
    // Without biases (the model refuses squared ReLU beside them) the fused bias-activation has
    // nothing to fuse: either value runs the one squared-ReLU kernel.
    y.boolean("model.bias_activation_fusion", true);
  }
  if (act.find("geglu") != std::string::npos) base.activation = Activation::GeGLU;
  // layernorm1p (Megatron's apply_layernorm_1p: gamma stored as 1 + w, zero-centred) has
  // LayerNorm's parameters and work.
  const std::string norm = y.choice("model.normalization", "layernorm", {"layernorm", "layernorm1p", "rmsnorm"});
  a.normalization = norm == "rmsnorm" ? "RMSNorm" : "LayerNorm";
  const std::string pos =
      y.choice("model.position_embedding_type", "learned_absolute", {"learned_absolute", "rope", "alibi"});
  if (pos == "alibi") base.position_embedding = PositionEmbedding::Alibi;
  else a.position_embedding_type = pos;
  // NeMo passes rotary_base to rope positions only.
  if (const auto theta = y.number("model.rotary_base"); theta && pos == "rope") {
    if (!(*theta >= 1 && *theta <= ModelSpec::kMaxRotaryBase))
      fail_at("model.rotary_base", "{}: model.rotary_base is {}; it must be a number from 1 to {:g}", y.where(),
              *theta, ModelSpec::kMaxRotaryBase);
    base.rotary_base = *theta;
  }
  read_model_architecture(y, a);
  ModelSpec m = apply_megatron_model(a, base, /*from_flags_alone=*/true, y.where());
  // NeMo takes the vocabulary from the tokenizer and pads it as Megatron-LM does.
  const int unit = y.integer("model.make_vocab_size_divisible_by").value_or(128);
  if (unit < 1)
    fail_at("model.make_vocab_size_divisible_by", "{}: model.make_vocab_size_divisible_by is {}; it must be >= 1",
            y.where(), unit);
  if (const auto words = known_tokenizer_words(y)) {
    out.vocabulary = MegatronVocabulary{*words, unit};
    m.vocab_size = static_cast<int>(out.vocabulary->padded(tp));
  } else if (!vocab_in_comment) {
    // Its model file's path is left out: it is often an interpolation only the launcher resolves.
    out.vocabulary_unknown =
        fmt::format("{}: the vocabulary comes from model.tokenizer (library '{}'), whose words clustercast cannot count",
                    y.where(), y.get("model.tokenizer.library").value_or("none"));
  }
  return m;
}

}  // namespace

LayoutFile read_nemo(const std::string& text, const std::string& where) {
  const OmegaConfTree tree(text, where);
  const NemoKeys y(tree);
  LayoutFile out;
  ParallelConfig& c = out.config;
  c.tp = y.integer("model.tensor_model_parallel_size").value_or(1);
  c.pp = y.integer("model.pipeline_model_parallel_size").value_or(1);
  c.cp = y.integer("model.context_parallel_size").value_or(1);
  // Megatron-Core's names; ETP left out is TP there, as here (0).
  c.ep = y.integer("model.expert_model_parallel_size").value_or(1);
  c.etp = y.integer("model.expert_tensor_parallel_size").value_or(0);
  for (const auto& [key, v] : {std::pair{"model.tensor_model_parallel_size", c.tp},
                               std::pair{"model.pipeline_model_parallel_size", c.pp},
                               std::pair{"model.context_parallel_size", c.cp},
                               std::pair{"model.expert_model_parallel_size", c.ep}})
    if (v < 1) fail_at(key, "{}: {} is {}; it must be >= 1", where, key, v);
  if (y.has("model.expert_tensor_parallel_size") && c.etp < 1)
    fail_at("model.expert_tensor_parallel_size", "{}: model.expert_tensor_parallel_size is {}; it must be >= 1", where,
            c.etp);
  // NeMo hands model keys named as Megatron-Core's TransformerConfig fields to it; p2p is its default.
  c.cp_comm_type = cp_comm_type_from(y.choice("model.cp_comm_type", "p2p", {"p2p", "a2a", "allgather", "a2a+p2p"}), where);
  if (y.has("model.hierarchical_context_parallel_sizes.0")) {  // a list: its first entry
    const auto a2a = y.integer("model.hierarchical_context_parallel_sizes.0");
    const auto ring = y.integer("model.hierarchical_context_parallel_sizes.1");
    if (!a2a || !ring || *a2a < 1 || *ring < 1 || y.has("model.hierarchical_context_parallel_sizes.2") ||
        std::int64_t{*a2a} * *ring != c.cp)
      fail_at("model.hierarchical_context_parallel_sizes",
              "{}: model.hierarchical_context_parallel_sizes must be two sizes >= 1, the all-to-all group then the "
              "ring, whose product is model.context_parallel_size {}",
              where, c.cp);
    c.cp_a2a_size = *a2a;
  }
  c.virtual_stages = y.integer("model.virtual_pipeline_model_parallel_size").value_or(1);
  c.sequence_parallel = y.boolean("model.sequence_parallel", false);
  c.micro_batch = y.integer("model.micro_batch_size").value_or(1);
  c.global_batch = y.integer("model.global_batch_size").value_or(0);
  if (const auto g = y.get("model.activations_checkpoint_granularity"))
    c.recompute = recompute_granularity_from(*g, where);
  if (const auto m = y.get("model.activations_checkpoint_method")) c.recompute_method = recompute_method_from(*m, where);
  c.recompute_num_layers = y.integer("model.activations_checkpoint_num_layers").value_or(1);
  // Keys of NeMo's base config that change the layout in ways not modelled: refused when set, as
  // Megatron-LM's flags clustercast does not model are.
  if (y.boolean("model.fsdp", false))
    fail_at("model.fsdp", "{}: model.fsdp true (PyTorch FSDP in place of Megatron's data parallelism) is not "
            "modelled; set it false",
            where);
  for (const char* key : {"model.num_micro_batches_with_partial_activation_checkpoints",
                          "model.activations_checkpoint_layers_per_pipeline"})
    if (const auto v = y.get(key))
      fail_at(key, "{}: {} {} (recompute for only some microbatches or stages) is not modelled; set it null", where,
              key, *v);
  for (const auto& [key, what] : {std::pair{"model.fp32_residual_connection", "the residual stream kept in fp32"},
                                  std::pair{"model.cpu_offloading", "weights or activations offloaded to the host"}})
    if (y.boolean(key, false)) fail_at(key, "{}: {} true ({}) is not modelled; set it false", where, key, what);
  // NeMo passes model.optim (less name and sched) to the optimizer's constructor
  // (ModelPT.setup_optimization); the two distributed optimizers shard its state.
  const std::string optimizer = y.choice("model.optim.name", "fused_adam",
                                         {"fused_adam", "adam", "adamw", "distributed_fused_adam",
                                          "mcore_distributed_optim"});
  c.distributed_optimizer = optimizer == "distributed_fused_adam" || optimizer == "mcore_distributed_optim";
  c.overlap_grad_reduce = y.boolean("model.optim.overlap_grad_sync", false);
  c.overlap_param_gather = y.boolean("model.optim.overlap_param_sync", false);
  // The distributed optimizers reduce the gradients in grad_sync_dtype (apex's DistributedFusedAdam;
  // NeMo's Megatron-Core optimizer gives DDP grad_reduce_in_fp32 = grad_sync_dtype == fp32): bf16 is
  // --grad-reduce-in-bf16 (ParallelConfig::main_grad_bytes).
  if (c.distributed_optimizer)
    c.grad_reduce_in_bf16 = y.choice("model.optim.grad_sync_dtype", "fp32", {"fp32", "bf16"}) == "bf16";
  c.tp_comm_overlap = y.boolean("model.ub_tp_comm_overlap", false);
  read_moe_options(y, c.moe);
  // Transformer Engine picks flash or fused attention itself; without it, NeMo's own
  // attention is flash only under use_flash_attention.
  const bool flash = y.boolean("model.use_flash_attention", false);
  const bool transformer_engine = y.boolean("model.transformer_engine", false);
  c.attention = flash || transformer_engine ? AttentionKernel::Flash : AttentionKernel::Unfused;
  c.precision = nemo_precision(y);
  // NeMo's base config leaves RoPE fusion off (PyTorch's separate RoPE kernels); its launcher's
  // recipes turn it and the fused loss on. Both keys reach Megatron-Core's TransformerConfig.
  const bool rope_fusion = y.boolean("model.apply_rope_fusion", false);  // read either way: moot without RoPE
  if (y.get("model.position_embedding_type").value_or("learned_absolute") == "rope") c.rope_fusion = rope_fusion;
  c.cross_entropy_fusion = y.boolean("model.cross_entropy_loss_fusion", false);
  // Our own export names the vocabulary in its clustercast line (NeMo has no key for it).
  const bool vocab_in_comment = text.find("# clustercast:") != std::string::npos &&
                                text.find(" --vocab-size ", text.find("# clustercast:")) != std::string::npos;
  if (y.has("model.num_layers")) out.model = nemo_model(y, c.tp, vocab_in_comment, out);
  if (y.has("trainer.devices") || y.has("trainer.num_nodes")) {
    // In 64 bits: two values up to 1e9 each wrapped an int and printed an overflowed DP.
    const long long devices = y.integer("trainer.devices").value_or(1), nodes = y.integer("trainer.num_nodes").value_or(1);
    if (devices < 1 || nodes < 1 || devices * nodes > std::numeric_limits<int>::max())
      fail("{}: trainer.devices {} x trainer.num_nodes {} is not a GPU count; each must be >= 1 and the product at "
           "most {}",
           where, devices, nodes, std::numeric_limits<int>::max());
    out.gpus = static_cast<int>(devices * nodes);
  }
  apply_clustercast_comment(text, out, where);
  finish_layout(out, where);
  // The model's architecture and parallelism are values directly under model; the mappings
  // there (data, tokenizer, optim's schedule) hold nothing clustercast prices.
  if (const auto unread = tree.unread_values("model"); !unread.empty())
    out.notes.push_back(fmt::format("{}: keys under model not read, so not priced (check that none changes the model "
                                    "or layout): {}",
                                    where, fmt::join(unread, ", ")));
  return out;
}

}  // namespace interop

namespace {

const char* nemo_activation(Activation a) {
  switch (a) {
    case Activation::GeLU: return "gelu";
    case Activation::SwiGLU: return "swiglu";
    case Activation::GeGLU: return "geglu";
    case Activation::SquaredReLU: return "squared-relu";
  }
  return "gelu";
}

const char* nemo_position(PositionEmbedding p) {
  switch (p) {
    case PositionEmbedding::Learned: return "learned_absolute";
    case PositionEmbedding::Rope: return "rope";
    case PositionEmbedding::Alibi: return "alibi";
  }
  return "learned_absolute";
}

}  // namespace

std::string nemo_yaml(const SimResult& r, const MemoryReserve& reserve) {
  const ParallelConfig& c = r.config;
  const ModelSpec& m = r.model;
  interop::refuse_unwritable_architecture(m, "--export-nemo");
  if (c.precision == Precision::FP8 && c.attention == AttentionKernel::Unfused)
    fail("--export-nemo: FP8 needs Transformer Engine, which runs flash or fused attention; the layout's unfused "
         "attention cannot be written for NeMo");
  if (c.grad_reduce_in_bf16 && !c.distributed_optimizer)
    fail("--export-nemo: NeMo reduces gradients in bf16 only through a distributed optimizer's grad_sync_dtype, and "
         "the layout has none (--grad-reduce-in-bf16 without --use-distributed-optimizer); export it with "
         "--export-megatron or --export");
  if (c.distributed_optimizer_instances > 1)
    fail("--export-nemo: --num-distributed-optimizer-instances {} has no key in NeMo's megatron_gpt_config.yaml or "
         "its launcher's recipes; export it with --export-megatron or --export", c.distributed_optimizer_instances);
  if (c.cross_entropy_fusion)
    fail("--export-nemo: --cross-entropy-loss-fusion has no key in NeMo's base megatron_gpt_config.yaml, which the "
         "export keeps to (NeMo reads model.cross_entropy_loss_fusion where a recipe adds it, as the launcher's Llama "
         "recipes do); export it with --export-megatron or --export");
  if (c.fp8_recipe != Fp8Recipe::Delayed)
    fail("--export-nemo: --fp8-recipe {} has no key in NeMo's base megatron_gpt_config.yaml (its FP8 is delayed "
         "scaling); export it with --export-megatron or --export", to_string(c.fp8_recipe));
  if (c.fp8_param_gather)
    fail("--export-nemo: --fp8-param-gather has no key in NeMo's base megatron_gpt_config.yaml, which the export "
         "keeps to; export it with --export-megatron or --export");
  const int devices = std::min(r.cluster.gpus_per_node, c.gpus());
  // What NeMo's config has no key for goes into the clustercast line: the vocabulary (NeMo
  // takes it from the tokenizer), uneven first/last stages, a layout string, the embedding or
  // loss counted as a layer, the microbatch group, and DP overlap without the distributed
  // optimizer (fused_adam takes no overlap argument).
  std::string extra = fmt::format(" --vocab-size {}", m.vocab_size);
  if (c.first_stage_layers) extra += fmt::format(" --decoder-first-pipeline-num-layers {}", c.first_stage_layers);
  if (c.last_stage_layers) extra += fmt::format(" --decoder-last-pipeline-num-layers {}", c.last_stage_layers);
  if (!c.pipeline_layout.empty()) extra += fmt::format(" --pipeline-model-parallel-layout {}", c.pipeline_layout);
  if (c.account_for_embedding) extra += " --account-for-embedding-in-pipeline-split";
  if (c.account_for_loss) extra += " --account-for-loss-in-pipeline-split";
  if (c.microbatch_group_size)
    extra += fmt::format(" --microbatch-group-size-per-virtual-pipeline-stage {}", c.microbatch_group_size);
  if (c.overlap_grad_reduce && !c.distributed_optimizer) extra += " --overlap-grad-reduce";

  YAML::Emitter e;
  e.SetNullFormat(YAML::LowerNull);  // "null", as NeMo's own configs write it
  e.SetDoublePrecision(6);           // 0.1, not 0.10000000000000001
  e << YAML::BeginMap;
  e << YAML::Key << "trainer" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "devices" << YAML::Value << devices;
  e << YAML::Key << "num_nodes" << YAML::Value << c.gpus() / devices;
  e << YAML::Key << "precision" << YAML::Value;
  switch (c.precision) {
    case Precision::FP32: e << 32; break;
    case Precision::FP16: e << "16-mixed"; break;
    case Precision::BF16:
    case Precision::FP8: e << "bf16-mixed"; break;  // FP8 GEMMs inside a bf16 run
  }
  e << YAML::EndMap;
  e << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  auto key = [&e](const char* k) -> YAML::Emitter& { return e << YAML::Key << k << YAML::Value; };
  key("micro_batch_size") << c.micro_batch;
  key("global_batch_size") << c.global_batch;
  key("tensor_model_parallel_size") << c.tp;
  key("pipeline_model_parallel_size") << c.pp;
  if (c.ep > 1) key("expert_model_parallel_size") << c.ep;
  if (c.etp > 0) key("expert_tensor_parallel_size") << c.etp;
  // Not keys of NeMo's base GPT config, but of its Llama 3 training configs, or fields of the
  // Megatron-Core config NeMo fills from model keys of the same name: written where CP is used.
  if (c.cp > 1) {
    key("context_parallel_size") << c.cp;
    key("cp_comm_type") << to_string(c.cp_comm_type);
    if (c.cp_a2a_size)
      key("hierarchical_context_parallel_sizes") << YAML::Flow << std::vector<int>{c.cp_a2a_size, c.cp / c.cp_a2a_size};
  }
  if (c.moe != MoeRunOptions{}) {
    const MoeRunOptions& o = c.moe;
    key("moe_token_dispatcher_type") << to_string(o.dispatcher);
    if (o.dispatcher == TokenDispatcher::Flex) key("moe_flex_dispatcher_backend") << to_string(o.flex_backend);
    key("moe_grouped_gemm") << o.grouped_gemm;
    if (o.capacity_factor) key("moe_expert_capacity_factor") << *o.capacity_factor;
    key("moe_pad_expert_input_to_capacity") << o.pad_to_capacity;
    key("moe_router_load_balancing_type") << to_string(o.load_balancing);
    key("moe_aux_loss_coeff") << o.aux_loss_coeff;
    key("moe_token_drop_policy") << to_string(o.drop_policy);
    key("moe_shared_expert_overlap") << o.shared_expert_overlap;
    key("overlap_moe_expert_parallel_comm") << o.overlap_ep_comm;
  }
  if (c.virtual_stages > 1) key("virtual_pipeline_model_parallel_size") << c.virtual_stages;
  else key("virtual_pipeline_model_parallel_size") << YAML::Null;
  key("sequence_parallel") << c.sequence_parallel;
  const bool full = c.recompute == RecomputeGranularity::Full;
  if (c.recompute == RecomputeGranularity::None) key("activations_checkpoint_granularity") << YAML::Null;
  else key("activations_checkpoint_granularity") << to_string(c.recompute);
  if (full) key("activations_checkpoint_method") << to_string(c.recompute_method);
  else key("activations_checkpoint_method") << YAML::Null;
  if (full) key("activations_checkpoint_num_layers") << c.recompute_num_layers;
  else key("activations_checkpoint_num_layers") << YAML::Null;
  key("encoder_seq_length") << m.seq_length;
  key("max_position_embeddings") << m.seq_length;
  key("num_layers") << m.num_layers;
  key("hidden_size") << m.hidden_size;
  key("ffn_hidden_size") << m.ffn_hidden_size;
  key("num_attention_heads") << m.num_attention_heads;
  key("num_query_groups") << m.num_query_groups;
  if (m.explicit_head_dim > 0) key("kv_channels") << m.explicit_head_dim;
  else key("kv_channels") << YAML::Null;
  key("activation") << nemo_activation(m.activation);
  // Megatron-Core's fused bias-activation takes GeLU and SwiGLU only; squared ReLU runs its own
  // compiled kernel, as Megatron-LM runs it without biases.
  if (m.activation == Activation::SquaredReLU) key("bias_activation_fusion") << false;
  // One switch for every linear, Q, K and V's beside it (refuse_unwritable_architecture).
  key("bias") << m.projection_bias;
  if (!m.projection_bias && m.qkv_bias) key("add_qkv_bias") << true;
  if (m.qk_norm == QkNorm::PerHead || (m.mla.enabled && m.mla.latent_norms)) key("qk_layernorm") << true;
  key("normalization") << (m.normalization == Normalization::RMSNorm ? "rmsnorm" : "layernorm");
  key("position_embedding_type") << nemo_position(m.position_embedding);
  if (m.position_embedding == PositionEmbedding::Rope) key("rotary_base") << m.rotary_base;
  key("share_embeddings_and_output_weights") << m.tied_embeddings;
  key("hidden_dropout") << (m.dropout ? 0.1 : 0.0);
  key("attention_dropout") << (m.dropout ? 0.1 : 0.0);
  if (m.moe.enabled()) {
    // TransformerConfig's field names, which NeMo fills from model keys of the same name.
    const MoeSpec& x = m.moe;
    key("num_moe_experts") << x.num_experts;
    key("moe_router_topk") << x.router_topk;
    key("moe_ffn_hidden_size") << x.ffn_hidden_size;
    if (x.shared_expert_ffn_hidden_size > 0) key("moe_shared_expert_intermediate_size") << x.shared_expert_ffn_hidden_size;
    if (x.shared_expert_gate) key("moe_shared_expert_gate") << true;
    if (x.layer_pattern.empty()) key("moe_layer_freq") << x.layer_freq;
    else key("moe_layer_freq") << YAML::Flow << x.layer_pattern;
    key("moe_router_score_function") << to_string(x.score_function);
    if (x.router_num_groups > 0) {
      key("moe_router_num_groups") << x.router_num_groups;
      key("moe_router_group_topk") << x.router_group_topk;
    }
    if (x.topk_scaling_factor != 1.0) key("moe_router_topk_scaling_factor") << x.topk_scaling_factor;
    if (x.router_expert_bias) key("moe_router_enable_expert_bias") << true;
  }
  if (m.mla.enabled) {
    const MlaSpec& l = m.mla;
    key("multi_latent_attention") << true;
    if (l.q_lora_rank > 0) key("q_lora_rank") << l.q_lora_rank;
    else key("q_lora_rank") << YAML::Null;  // no query latent
    key("kv_lora_rank") << l.kv_lora_rank;
    key("qk_head_dim") << l.qk_head_dim;
    key("qk_pos_emb_head_dim") << l.qk_pos_emb_head_dim;
    key("v_head_dim") << l.v_head_dim;
  }
  if (m.mtp_num_layers > 0) key("mtp_num_layers") << m.mtp_num_layers;
  // With NeMo's default mcore_gpt, use_flash_attention reaches only the legacy model; Megatron-Core's
  // GPT gets flash or fused attention from Transformer Engine's layer spec, and without it the
  // local spec, whose attention stores the s x s scores. So TE wherever flash attention (or FP8)
  // was predicted.
  key("use_flash_attention") << (c.attention == AttentionKernel::Flash);
  key("transformer_engine") << (c.attention == AttentionKernel::Flash || c.precision == Precision::FP8);
  // NeMo's base config has RoPE fusion off: the export states the kernel the prediction priced.
  if (m.position_embedding == PositionEmbedding::Rope) key("apply_rope_fusion") << c.rope_fusion;
  key("fp8") << (c.precision == Precision::FP8);
  if (c.precision == Precision::FP8) {
    key("fp8_e4m3") << false;  // we model the hybrid recipe (E4M3 forward, E5M2 gradients)
    key("fp8_hybrid") << true;
  }
  if (c.tp_comm_overlap) key("ub_tp_comm_overlap") << true;
  key("optim") << YAML::BeginMap;
  key("name") << (c.distributed_optimizer ? "distributed_fused_adam" : "fused_adam");
  if (c.distributed_optimizer) {
    // Keyword arguments of apex's DistributedFusedAdam; FusedAdam would reject them.
    key("overlap_grad_sync") << c.overlap_grad_reduce;
    key("overlap_param_sync") << c.overlap_param_gather;
    if (c.grad_reduce_in_bf16) key("grad_sync_dtype") << "bf16";
  }
  e << YAML::EndMap;  // optim
  e << YAML::EndMap;  // model
  e << YAML::EndMap;
  if (!e.good()) fail("--export-nemo: the YAML emitter failed: {}", e.GetLastError());
  std::string out = fmt::format("# NeMo Megatron GPT config for {} on {} x {}\n", m.name, c.gpus(), r.cluster.gpu.name);
  out += interop::prediction_comment(r);
  out += interop::clustercast_comment(r, reserve, extra);
  return out + e.c_str() + "\n";
}

}  // namespace cc
