#include "sim/model_spec.h"

#include <utility>

#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

const char* to_string(Activation a) {
  switch (a) {
    case Activation::GeLU: return "gelu";
    case Activation::SwiGLU: return "swiglu";
    case Activation::GeGLU: return "geglu";
    case Activation::SquaredReLU: return "squared_relu";
  }
  return "?";
}
const char* to_string(Normalization n) { return n == Normalization::LayerNorm ? "layernorm" : "rmsnorm"; }
const char* to_string(PositionEmbedding p) {
  switch (p) {
    case PositionEmbedding::Learned: return "learned";
    case PositionEmbedding::Rope: return "rope";
    case PositionEmbedding::Alibi: return "alibi";
  }
  return "?";
}

const char* to_string(QkNorm n) {
  switch (n) {
    case QkNorm::None: return "none";
    case QkNorm::PerHead: return "per_head";
    case QkNorm::Full: return "full";
  }
  return "?";
}
const char* to_string(RouterScore s) { return s == RouterScore::Softmax ? "softmax" : "sigmoid"; }

namespace {

// An MLP of width f on hidden size h: gated (three matrices) or not (two), with or without biases.
std::int64_t mlp_parameters(std::int64_t h, std::int64_t f, bool gated, bool biases) {
  if (gated) return 3 * h * f + (biases ? 2 * f + h : 0);
  return 2 * h * f + (biases ? f + h : 0);
}

}  // namespace

std::int64_t ModelSpec::norm_parameters(int width) const {
  return normalization == Normalization::LayerNorm ? 2 * std::int64_t{width} : width;
}

std::int64_t ModelSpec::attention_parameters() const {
  const std::int64_t h = hidden_size, heads = num_attention_heads;
  const std::int64_t out_bias = projection_bias ? h : 0;
  if (mla.enabled) {
    // Megatron-Core's MLASelfAttention (DeepSeek-V2/V3's layout): the query through a latent of
    // q_lora_rank with its norm (or one projection when the rank is 0); the keys and values
    // through a latent of kv_lora_rank with its norm, plus one RoPE key part for all heads.
    const std::int64_t qk = mla.qk_head_dim + mla.qk_pos_emb_head_dim, rq = mla.q_lora_rank,
                       rkv = mla.kv_lora_rank;
    const std::int64_t q_norm = mla.latent_norms ? norm_parameters(mla.q_lora_rank) : 0;
    const std::int64_t kv_norm = mla.latent_norms ? norm_parameters(mla.kv_lora_rank) : 0;
    const std::int64_t q = rq > 0 ? h * rq + q_norm + rq * heads * qk : h * heads * qk;
    const std::int64_t kv = h * (rkv + mla.qk_pos_emb_head_dim) + kv_norm + rkv * heads * (mla.qk_head_dim + mla.v_head_dim);
    return q + kv + heads * mla.v_head_dim * h + out_bias;
  }
  const std::int64_t q = query_width(), kv = kv_channels();
  const std::int64_t qkv = h * (q + 2 * kv) + (qkv_bias ? q + 2 * kv : 0);
  const std::int64_t proj = q * h + out_bias;
  std::int64_t qk_norms = 0;
  if (qk_norm == QkNorm::PerHead) qk_norms = 2 * norm_parameters(head_dim());
  if (qk_norm == QkNorm::Full) qk_norms = norm_parameters(query_width()) + norm_parameters(kv_channels());
  return qkv + proj + qk_norms + (attention_sinks ? heads : 0);
}

std::int64_t ModelSpec::dense_mlp_parameters() const {
  return mlp_parameters(hidden_size, ffn_hidden_size, gated_mlp(), dense_mlp_bias());
}

std::int64_t ModelSpec::expert_parameters() const {
  return mlp_parameters(hidden_size, moe.ffn_hidden_size, gated_mlp(), moe.expert_linear_biases);
}

std::int64_t ModelSpec::router_parameters() const {
  const std::int64_t e = moe.num_experts;
  return std::int64_t{hidden_size} * e + (moe.router_linear_bias ? e : 0) + (moe.router_expert_bias ? e : 0);
}

std::int64_t ModelSpec::shared_expert_parameters() const {
  if (moe.shared_expert_ffn_hidden_size == 0) return 0;
  return mlp_parameters(hidden_size, moe.shared_expert_ffn_hidden_size, gated_mlp(), false) +
         (moe.shared_expert_gate ? hidden_size : 0);
}

bool ModelSpec::is_moe_layer(int layer) const {
  if (!moe.enabled()) return false;
  // Bounds-checked: a spec not yet validated (a GUI edit) may hold a pattern of another length.
  if (!moe.layer_pattern.empty())
    return layer >= 0 && static_cast<std::size_t>(layer) < moe.layer_pattern.size() &&
           moe.layer_pattern[static_cast<std::size_t>(layer)] != 0;
  return moe.layer_freq > 0 && layer % moe.layer_freq == 0;
}

int ModelSpec::moe_layer_count() const {
  int n = 0;
  for (int i = 0; i < num_layers; ++i) n += is_moe_layer(i) ? 1 : 0;
  return n;
}

std::int64_t ModelSpec::layer_parameters(int layer, bool active) const {
  std::int64_t block = dense_mlp_parameters();
  if (is_moe_layer(layer))
    block = router_parameters() + (active ? moe.router_topk : moe.num_experts) * expert_parameters() +
            shared_expert_parameters();
  return attention_parameters() + block + 2 * norm_parameters(hidden_size);
}

std::int64_t ModelSpec::mtp_parameters(bool active) const {
  // Megatron-Core's MultiTokenPredictionLayer: enorm and hnorm, eh_proj (2h -> h, no bias), a
  // transformer layer of the last decoder layer's kind, and its final norm.
  if (mtp_num_layers == 0) return 0;
  const std::int64_t h = hidden_size;
  const std::int64_t one = 3 * norm_parameters(hidden_size) + 2 * h * h + layer_parameters(num_layers - 1, active);
  return mtp_num_layers * one;
}

std::int64_t ModelSpec::embedding_parameters() const {
  const std::int64_t words = std::int64_t{vocab_size} * hidden_size;
  return words + (position_embedding == PositionEmbedding::Learned ? std::int64_t{seq_length} * hidden_size : 0);
}

std::int64_t ModelSpec::output_layer_parameters() const {
  return tied_embeddings ? 0 : std::int64_t{vocab_size} * hidden_size;
}

namespace {

std::int64_t counted_parameters(const ModelSpec& m, bool active) {
  std::int64_t layers = 0;
  if (!m.moe.enabled())  // every layer alike: one product, as fast as before MoE
    layers = m.num_layers * m.layer_parameters(0, active);
  else
    for (int i = 0; i < m.num_layers; ++i) layers += m.layer_parameters(i, active);
  return layers + m.embedding_parameters() + m.output_layer_parameters() + m.norm_parameters(m.hidden_size) +
         m.mtp_parameters(active);
}

}  // namespace

std::int64_t ModelSpec::total_parameters() const { return counted_parameters(*this, false); }
std::int64_t ModelSpec::active_parameters() const { return counted_parameters(*this, true); }

namespace {

// Each refusal's field is the Megatron-LM flag of the value, as in ModelSpec::validate.
void validate_experts(const ModelSpec& m, const std::string& where) {
  const MoeSpec& e = m.moe;
  if (e.num_experts < 0 || e.num_experts > 65'536)
    fail_at("--num-experts", "{}: num_experts is {}; it must be 0 (dense) or a positive integer up to 65536", where,
            e.num_experts);
  if (!e.enabled()) {
    // A dense model that names a router or an expert size was meant to be a mixture.
    if (e.router_topk != 0 || e.ffn_hidden_size != 0 || e.shared_expert_ffn_hidden_size != 0)
      fail_at("--num-experts",
              "{}: num_experts is 0 (a dense model) but moe_router_topk {}, moe_ffn_hidden_size {} or "
              "moe_shared_expert_intermediate_size {} is set; give num_experts, or drop the expert fields",
              where, e.router_topk, e.ffn_hidden_size, e.shared_expert_ffn_hidden_size);
    return;
  }
  if (e.router_topk < 1 || e.router_topk > e.num_experts)
    fail_at("--moe-router-topk", "{}: moe_router_topk is {}; it must be between 1 and num_experts {}", where,
            e.router_topk, e.num_experts);
  if (e.ffn_hidden_size < 1 || e.ffn_hidden_size > 4'194'304)
    fail_at("--moe-ffn-hidden-size", "{}: moe_ffn_hidden_size is {}; it must be a positive integer up to 4194304",
            where, e.ffn_hidden_size);
  if (e.shared_expert_ffn_hidden_size < 0 || e.shared_expert_ffn_hidden_size > 4'194'304)
    fail_at("--moe-shared-expert-intermediate-size",
            "{}: moe_shared_expert_intermediate_size is {}; it must be 0 (no shared expert) or a positive integer "
            "up to 4194304",
            where, e.shared_expert_ffn_hidden_size);
  if (e.shared_expert_gate && e.shared_expert_ffn_hidden_size == 0)
    fail_at("--moe-shared-expert-gate",
            "{}: moe_shared_expert_gate is set but there is no shared expert (moe_shared_expert_intermediate_size "
            "0); give the shared expert's size or drop the gate",
            where);
  if (e.layer_pattern.empty()) {
    if (e.layer_freq < 1 || e.layer_freq > m.num_layers)
      fail_at("--moe-layer-freq", "{}: moe_layer_freq is {}; it must be between 1 and num_layers {}", where,
              e.layer_freq, m.num_layers);
  } else {
    if (e.layer_pattern.size() != static_cast<std::size_t>(m.num_layers))
      fail_at("--moe-layer-freq", "{}: the moe_layer_freq pattern has {} entries; it needs one per layer ({})",
              where, e.layer_pattern.size(), m.num_layers);
    for (std::size_t i = 0; i < e.layer_pattern.size(); ++i)
      if (e.layer_pattern[i] != 0 && e.layer_pattern[i] != 1)
        fail_at("--moe-layer-freq", "{}: moe_layer_freq pattern entry {} is {}; each entry must be 0 (dense) or 1 (MoE)",
                where, i, e.layer_pattern[i]);
    if (m.moe_layer_count() == 0)
      fail_at("--moe-layer-freq", "{}: the moe_layer_freq pattern has no MoE layer (no 1); with num_experts {} at "
              "least one layer must be MoE", where, e.num_experts);
  }
  if (e.router_num_groups < 0 || e.router_group_topk < 0)
    fail_at("--moe-router-num-groups", "{}: moe_router_num_groups {} and moe_router_group_topk {} must be >= 0",
            where, e.router_num_groups, e.router_group_topk);
  if (e.router_num_groups > 0) {
    if (e.num_experts % e.router_num_groups != 0)
      fail_at("--moe-router-num-groups", "{}: moe_router_num_groups {} does not divide num_experts {}", where,
              e.router_num_groups, e.num_experts);
    if (e.router_group_topk < 1 || e.router_group_topk > e.router_num_groups)
      fail_at("--moe-router-group-topk", "{}: moe_router_group_topk is {}; it must be between 1 and "
              "moe_router_num_groups {}", where, e.router_group_topk, e.router_num_groups);
    const int reachable = e.router_group_topk * (e.num_experts / e.router_num_groups);
    if (e.router_topk > reachable)
      fail_at("--moe-router-topk",
              "{}: moe_router_topk {} is more than the {} experts in moe_router_group_topk {} groups of {}; it must "
              "be at most {}", where, e.router_topk, reachable, e.router_group_topk,
              e.num_experts / e.router_num_groups, reachable);
  } else if (e.router_group_topk != 0) {
    fail_at("--moe-router-group-topk",
            "{}: moe_router_group_topk is {} without moe_router_num_groups; give the number of groups", where,
            e.router_group_topk);
  }
  if (!(e.topk_scaling_factor > 0) || e.topk_scaling_factor > 1e6)
    fail_at("--moe-router-topk-scaling-factor",
            "{}: moe_router_topk_scaling_factor is {}; it must be a positive number (1 when unscaled)", where,
            e.topk_scaling_factor);
}

void validate_latent_attention(const ModelSpec& m, const std::string& where) {
  const MlaSpec& a = m.mla;
  if (!a.enabled) {
    if (a.q_lora_rank != 0 || a.kv_lora_rank != 0 || a.qk_head_dim != 0 || a.qk_pos_emb_head_dim != 0 ||
        a.v_head_dim != 0)
      fail_at("--multi-latent-attention",
              "{}: q_lora_rank, kv_lora_rank or an MLA head width is set without multi_latent_attention; set "
              "multi_latent_attention true, or drop them", where);
    return;
  }
  auto positive = [&](const char* name, const char* flag, int v, int min) {
    if (v < min || v > 65'536)
      fail_at(flag, "{}: {} is {}; with multi_latent_attention it must be an integer from {} to 65536", where, name,
              v, min);
  };
  positive("q_lora_rank", "--q-lora-rank", a.q_lora_rank, 0);
  positive("kv_lora_rank", "--kv-lora-rank", a.kv_lora_rank, 1);
  positive("qk_head_dim", "--qk-head-dim", a.qk_head_dim, 1);
  positive("qk_pos_emb_head_dim", "--qk-pos-emb-head-dim", a.qk_pos_emb_head_dim, 1);
  positive("v_head_dim", "--v-head-dim", a.v_head_dim, 1);
  // The latents replace the Q, K and V projections: their biases would be another layout.
  if (m.qkv_bias)
    fail_at("--add-qkv-bias",
            "{}: qkv_bias with multi_latent_attention is not modelled (MLA's latent projections have no biases); "
            "set qkv_bias false", where);
  if (m.qk_norm != QkNorm::None || m.attention_sinks)
    fail_at("--multi-latent-attention",
            "{}: qk_norm or attention_sinks with multi_latent_attention is not modelled; drop them", where);
}

}  // namespace

void ModelSpec::validate(const std::string& where) const {
  // Upper bounds far beyond any trained model keep every derived count (FLOPs, bytes,
  // nanoseconds) inside its type.
  // Each refusal's field is the Megatron-LM flag of the value (sim/error.h).
  auto in_range = [&](const char* name, const char* flag, int v, int max) {
    if (v <= 0 || v > max) fail_at(flag, "{}: {} is {}; it must be a positive integer up to {}", where, name, v, max);
  };
  in_range("num_layers", "--num-layers", num_layers, 10'000);
  in_range("hidden_size", "--hidden-size", hidden_size, 1'048'576);
  in_range("num_attention_heads", "--num-attention-heads", num_attention_heads, 65'536);
  in_range("num_query_groups", "--num-query-groups", num_query_groups, 65'536);
  in_range("ffn_hidden_size", "--ffn-hidden-size", ffn_hidden_size, 4'194'304);
  in_range("vocab_size", "--vocab-size", vocab_size, 16'777'216);
  in_range("seq_length", "--seq-length", seq_length, 4'194'304);
  if (explicit_head_dim != 0) {
    in_range("head_dim", "--kv-channels", explicit_head_dim, 65'536);
    if (std::int64_t{explicit_head_dim} * num_attention_heads > 4'194'304)
      fail_at("--kv-channels",
              "{}: head_dim {} x num_attention_heads {} is wider than 4194304; it must be at most that", where,
              explicit_head_dim, num_attention_heads);
  } else if (hidden_size % num_attention_heads != 0)
    fail_at("--num-attention-heads",
            "{}: hidden_size {} is not divisible by num_attention_heads {}; choose heads that divide the hidden size",
            where, hidden_size, num_attention_heads);
  if (num_attention_heads % num_query_groups != 0)
    fail_at("--num-query-groups",
            "{}: num_attention_heads {} is not divisible by num_query_groups {}; query groups must divide the heads",
            where, num_attention_heads, num_query_groups);
  for (const auto& [name, cap] : {std::pair{"attn_logit_softcapping", attention_softcap},
                                  std::pair{"final_logit_softcapping", final_logit_softcap}})
    if (!(cap >= 0 && cap <= 1e6))
      fail("{}: {} is {}; it must be 0 (no cap) or a positive number up to 1e6", where, name, cap);
  if (!(rotary_base >= 1 && rotary_base <= kMaxRotaryBase))
    fail_at("--rotary-base", "{}: rotary_base is {}; it must be a number from 1 to {:g}", where, rotary_base,
            kMaxRotaryBase);
  if (rotary_base != kDefaultRotaryBase && position_embedding != PositionEmbedding::Rope)
    fail_at("--rotary-base", "{}: rotary_base {} on a model with {} positions; it applies to rope positions only",
            where, rotary_base, to_string(position_embedding));
  // Megatron-LM's TransformerConfig refuses squared ReLU beside its fused bias-activation, which is
  // on whenever the MLP has biases; unfused (--no-bias-gelu-fusion) the bias add is a pass of its
  // own that clustercast does not price.
  if (activation == Activation::SquaredReLU && (dense_mlp_bias() || (moe.enabled() && moe.expert_linear_biases)))
    fail_at("--disable-bias-linear",
            "{}: a squared-ReLU MLP with biases is not modelled (Megatron-LM refuses it beside its fused "
            "bias-activation; Nemotron-4's MLP has none): drop the MLP biases (--disable-bias-linear, mlp_bias false)",
            where);
  validate_experts(*this, where);
  validate_latent_attention(*this, where);
  if (mtp_num_layers < 0 || mtp_num_layers > 100)
    fail_at("--mtp-num-layers", "{}: mtp_num_layers is {}; it must be an integer from 0 to 100", where,
            mtp_num_layers);
}

namespace {

// The expert keys of our model JSON: Megatron-LM's argument names without the dashes.
void read_experts(const JsonFields& f, MoeSpec& e) {
  e.num_experts = static_cast<int>(f.integer_or("num_experts", 0, 0));
  e.router_topk = static_cast<int>(f.integer_or("moe_router_topk", 0, 0));
  e.ffn_hidden_size = static_cast<int>(f.integer_or("moe_ffn_hidden_size", 0, 0));
  e.shared_expert_ffn_hidden_size = static_cast<int>(f.integer_or("moe_shared_expert_intermediate_size", 0, 0));
  e.shared_expert_gate = f.boolean_or("moe_shared_expert_gate", false);
  if (f.has("moe_layer_freq") && f.raw("moe_layer_freq").is_array()) {
    for (const auto& v : f.raw("moe_layer_freq")) {
      if (!v.is_number_integer())
        fail_at("moe_layer_freq", "{}: field 'moe_layer_freq' holds {}; a pattern's entries must be 0 or 1",
                f.where(), v.dump());
      e.layer_pattern.push_back(v.get<int>() == 0 ? 0 : v.get<int>() == 1 ? 1 : 2);  // 2: refused by validate()
    }
  } else {
    e.layer_freq = static_cast<int>(f.integer_or("moe_layer_freq", 1, 1));
  }
  e.score_function = f.choice_or("moe_router_score_function", {"softmax", "sigmoid"}, "softmax") == "softmax"
                         ? RouterScore::Softmax
                         : RouterScore::Sigmoid;
  e.router_expert_bias = f.boolean_or("moe_router_enable_expert_bias", false);
  e.router_linear_bias = f.boolean_or("moe_router_bias", false);
  e.expert_linear_biases = f.boolean_or("moe_expert_linear_biases", false);
  e.router_num_groups = static_cast<int>(f.integer_or("moe_router_num_groups", 0, 0));
  e.router_group_topk = static_cast<int>(f.integer_or("moe_router_group_topk", 0, 0));
  e.topk_scaling_factor = f.number_or("moe_router_topk_scaling_factor", 0.0, 1.0);
}

void write_experts(const MoeSpec& e, nlohmann::json& j) {
  j["num_experts"] = e.num_experts;
  j["moe_router_topk"] = e.router_topk;
  j["moe_ffn_hidden_size"] = e.ffn_hidden_size;
  if (e.shared_expert_ffn_hidden_size > 0) j["moe_shared_expert_intermediate_size"] = e.shared_expert_ffn_hidden_size;
  if (e.shared_expert_gate) j["moe_shared_expert_gate"] = true;
  if (e.layer_pattern.empty())
    j["moe_layer_freq"] = e.layer_freq;
  else
    j["moe_layer_freq"] = e.layer_pattern;
  j["moe_router_score_function"] = to_string(e.score_function);
  if (e.router_expert_bias) j["moe_router_enable_expert_bias"] = true;
  if (e.router_linear_bias) j["moe_router_bias"] = true;
  if (e.expert_linear_biases) j["moe_expert_linear_biases"] = true;
  if (e.router_num_groups > 0) {
    j["moe_router_num_groups"] = e.router_num_groups;
    j["moe_router_group_topk"] = e.router_group_topk;
  }
  if (e.topk_scaling_factor != 1.0) j["moe_router_topk_scaling_factor"] = e.topk_scaling_factor;
}

}  // namespace

ModelSpec model_from_json(const nlohmann::json& doc, const std::string& where) {
  const JsonFields f(doc, where);
  ModelSpec m;
  m.name = f.string_or("name", "custom");
  m.num_layers = static_cast<int>(f.integer("num_layers", 1));
  m.hidden_size = static_cast<int>(f.integer("hidden_size", 1));
  m.num_attention_heads = static_cast<int>(f.integer("num_attention_heads", 1));
  m.num_query_groups = static_cast<int>(f.integer_or("num_query_groups", 1, m.num_attention_heads));
  m.ffn_hidden_size = static_cast<int>(f.integer_or("ffn_hidden_size", 1, 4LL * m.hidden_size));
  m.vocab_size = static_cast<int>(f.integer("vocab_size", 1));
  m.seq_length = static_cast<int>(f.integer("seq_length", 1));
  const std::string act = f.choice_or("activation", {"gelu", "swiglu", "geglu", "squared_relu"}, "gelu");
  m.activation = act == "gelu"     ? Activation::GeLU
                 : act == "swiglu" ? Activation::SwiGLU
                 : act == "geglu"  ? Activation::GeGLU
                                   : Activation::SquaredReLU;
  m.normalization = f.choice_or("normalization", {"layernorm", "rmsnorm"}, "layernorm") == "layernorm"
                        ? Normalization::LayerNorm
                        : Normalization::RMSNorm;
  const std::string pos = f.choice_or("position_embedding", {"learned", "rope", "alibi"}, "learned");
  m.position_embedding = pos == "learned" ? PositionEmbedding::Learned
                         : pos == "rope"  ? PositionEmbedding::Rope
                                          : PositionEmbedding::Alibi;
  m.rotary_base = f.number_or("rotary_base", 1, ModelSpec::kDefaultRotaryBase);
  m.explicit_head_dim = static_cast<int>(f.integer_or("head_dim", 1, 0));
  m.tied_embeddings = f.boolean_or("tied_embeddings", true);
  m.dropout = f.boolean_or("dropout", true);
  m.qkv_bias = f.boolean_or("qkv_bias", true);
  m.projection_bias = f.boolean_or("projection_bias", true);
  if (f.has("mlp_bias")) m.mlp_bias = f.boolean_or("mlp_bias", false);
  const std::string qk = f.choice_or("qk_norm", {"none", "per_head", "full"}, "none");
  m.qk_norm = qk == "none" ? QkNorm::None : qk == "per_head" ? QkNorm::PerHead : QkNorm::Full;
  m.attention_sinks = f.boolean_or("attention_sinks", false);
  m.attention_softcap = f.number_or("attn_logit_softcapping", 0, 0);
  m.final_logit_softcap = f.number_or("final_logit_softcapping", 0, 0);
  read_experts(f, m.moe);
  m.mla.enabled = f.boolean_or("multi_latent_attention", false);
  m.mla.q_lora_rank = static_cast<int>(f.integer_or("q_lora_rank", 0, 0));
  m.mla.kv_lora_rank = static_cast<int>(f.integer_or("kv_lora_rank", 0, 0));
  m.mla.qk_head_dim = static_cast<int>(f.integer_or("qk_head_dim", 0, 0));
  m.mla.qk_pos_emb_head_dim = static_cast<int>(f.integer_or("qk_pos_emb_head_dim", 0, 0));
  m.mla.v_head_dim = static_cast<int>(f.integer_or("v_head_dim", 0, 0));
  m.mla.latent_norms = f.boolean_or("mla_latent_norms", true);
  m.mtp_num_layers = static_cast<int>(f.integer_or("mtp_num_layers", 0, 0));
  f.refuse_unread({"source", "description"});
  m.validate(where);
  return m;
}

nlohmann::json model_to_json(const ModelSpec& m) {
  nlohmann::json j = {{"name", m.name},
          {"num_layers", m.num_layers},
          {"hidden_size", m.hidden_size},
          {"num_attention_heads", m.num_attention_heads},
          {"num_query_groups", m.num_query_groups},
          {"ffn_hidden_size", m.ffn_hidden_size},
          {"vocab_size", m.vocab_size},
          {"seq_length", m.seq_length},
          {"activation", to_string(m.activation)},
          {"normalization", to_string(m.normalization)},
          {"position_embedding", to_string(m.position_embedding)},
          {"tied_embeddings", m.tied_embeddings},
          {"dropout", m.dropout}};
  // The fields below are written only where they depart from a dense Megatron GPT layer.
  if (m.rotary_base != ModelSpec::kDefaultRotaryBase) j["rotary_base"] = m.rotary_base;
  if (m.explicit_head_dim != 0) j["head_dim"] = m.explicit_head_dim;
  if (!m.qkv_bias) j["qkv_bias"] = false;
  if (!m.projection_bias) j["projection_bias"] = false;
  if (m.dense_mlp_bias() != m.mlp_bias_by_default()) j["mlp_bias"] = m.dense_mlp_bias();  // against the MLP's convention
  if (m.qk_norm != QkNorm::None) j["qk_norm"] = to_string(m.qk_norm);
  if (m.attention_sinks) j["attention_sinks"] = true;
  if (m.attention_softcap > 0) j["attn_logit_softcapping"] = m.attention_softcap;
  if (m.final_logit_softcap > 0) j["final_logit_softcapping"] = m.final_logit_softcap;
  if (m.moe.enabled()) write_experts(m.moe, j);
  if (m.mla.enabled) {
    j["multi_latent_attention"] = true;
    j["q_lora_rank"] = m.mla.q_lora_rank;
    j["kv_lora_rank"] = m.mla.kv_lora_rank;
    j["qk_head_dim"] = m.mla.qk_head_dim;
    j["qk_pos_emb_head_dim"] = m.mla.qk_pos_emb_head_dim;
    j["v_head_dim"] = m.mla.v_head_dim;
    if (!m.mla.latent_norms) j["mla_latent_norms"] = false;
  }
  if (m.mtp_num_layers > 0) j["mtp_num_layers"] = m.mtp_num_layers;
  return j;
}

}  // namespace cc
