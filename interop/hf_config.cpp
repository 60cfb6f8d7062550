#include "interop/hf_config.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

namespace {

// How one transformers model class is built. Each fact is read from the class's modelling code
// (transformers/models/<type>/modeling_<type>.py), not from the keys a file happens to carry.
enum class Mlp { Gelu, SwiGlu, GeGlu, SquaredRelu };
enum class Positions { Learned, Rope, FalconAlibiKey, Alibi };
enum class Keys { Gpt2, Bloom, Falcon, Standard };

struct Family {
  const char* model_type;
  std::vector<const char*> architectures;  // class names in `architectures`
  Keys keys;
  Mlp mlp;
  Normalization norm;
  Positions positions;
  bool tied_by_default;     // the config class's tie_word_embeddings default
  bool parallel_residual;   // attention and MLP read the same residual (GPT-J, NeoX, Falcon, Phi-2)
  const char* parallel_key;  // the key that switches it off, if the class has one
  bool sliding_window;       // the class implements sliding-window attention
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"gpt2", {"GPT2LMHeadModel"}, Keys::Gpt2, Mlp::Gelu, Normalization::LayerNorm, Positions::Learned, true,
       false, nullptr, false},
      {"gptj", {"GPTJForCausalLM"}, Keys::Gpt2, Mlp::Gelu, Normalization::LayerNorm, Positions::Rope, false, true,
       nullptr, false},
      {"gpt_neox", {"GPTNeoXForCausalLM"}, Keys::Standard, Mlp::Gelu, Normalization::LayerNorm, Positions::Rope,
       false, true, "use_parallel_residual", false},
      {"bloom", {"BloomForCausalLM"}, Keys::Bloom, Mlp::Gelu, Normalization::LayerNorm, Positions::Alibi, true,
       false, nullptr, false},
      {"falcon", {"FalconForCausalLM", "RWForCausalLM"}, Keys::Falcon, Mlp::Gelu, Normalization::LayerNorm,
       Positions::FalconAlibiKey, true, true, "parallel_attn", false},
      {"llama", {"LlamaForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope, false,
       false, nullptr, false},
      {"mistral", {"MistralForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope, false,
       false, nullptr, true},
      {"qwen2", {"Qwen2ForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope, false,
       false, nullptr, true},
      {"gemma", {"GemmaForCausalLM"}, Keys::Standard, Mlp::GeGlu, Normalization::RMSNorm, Positions::Rope, true,
       false, nullptr, false},
      {"gemma2", {"Gemma2ForCausalLM"}, Keys::Standard, Mlp::GeGlu, Normalization::RMSNorm, Positions::Rope, true,
       false, nullptr, true},
      {"phi", {"PhiForCausalLM"}, Keys::Standard, Mlp::Gelu, Normalization::LayerNorm, Positions::Rope, false, true,
       nullptr, false},
      // Nemotron-4 and Minitron: NemotronMLP is up_proj, relu2, down_proj; NemotronLayerNorm1P is a
      // LayerNorm (weight and bias) that stores its weight zero-centred.
      {"nemotron", {"NemotronForCausalLM"}, Keys::Standard, Mlp::SquaredRelu, Normalization::LayerNorm,
       Positions::Rope, false, false, nullptr, false},
      {"phi3", {"Phi3ForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope, false,
       false, nullptr, true},
      // Mixtures of experts: their experts, attention biases and norms are read by read_mixture().
      {"mixtral", {"MixtralForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope, false,
       false, nullptr, true},
      {"qwen2_moe", {"Qwen2MoeForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope,
       false, false, nullptr, true},
      {"qwen3_moe", {"Qwen3MoeForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope,
       false, false, nullptr, true},
      {"deepseek_v2", {"DeepseekV2ForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm,
       Positions::Rope, false, false, nullptr, false},
      {"deepseek_v3", {"DeepseekV3ForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm,
       Positions::Rope, false, false, nullptr, false},
      {"olmoe", {"OlmoeForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope, false,
       false, nullptr, false},
      {"gpt_oss", {"GptOssForCausalLM"}, Keys::Standard, Mlp::SwiGlu, Normalization::RMSNorm, Positions::Rope, false,
       false, nullptr, true},
  };
  return f;
}

bool is_mixture(const Family& fam) {
  for (const char* t : {"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "olmoe", "gpt_oss"})
    if (std::string(fam.model_type) == t) return true;
  return false;
}

// Keys that make a model a mixture of experts, in a dense family: a dense spec would count one
// expert's MLP where the model has many (Mixtral 8x7B: 46.7B parameters, not 7.2B).
constexpr const char* kExpertKeys[] = {"num_local_experts",   "num_experts",          "n_routed_experts",
                                       "moe_num_experts",     "num_experts_per_tok",  "moe_intermediate_size",
                                       "n_shared_experts",    "shared_expert_intermediate_size"};

std::string type_list() { return fmt::format("{}", fmt::join(hf_model_types(), ", ")); }

void refuse_experts(const JsonFields& f) {
  for (const char* key : kExpertKeys) {
    if (!f.has(key)) continue;
    const auto& v = f.raw(key);
    // Some dense configs carry these keys switched off: 0 (or 1 expert) is not a mixture.
    const bool size_key = std::string(key).find("size") != std::string::npos;
    if (v.is_number() && (v.get<double>() <= 0 || (!size_key && v.get<double>() <= 1))) continue;
    fail_at(key,
            "{}: {} is {} in a {} file: experts in this architecture are not modelled (a dense spec would count one "
            "expert's MLP instead of all of them); mixture-of-experts types: mixtral, qwen2_moe, qwen3_moe, "
            "deepseek_v2, deepseek_v3, olmoe, gpt_oss",
            f.where(), key, v.dump(), f.string_or("model_type", "dense"));
  }
}

const Family& family_of(const JsonFields& f) {
  const Family* by_type = nullptr;
  const Family* by_class = nullptr;
  std::string type, cls;
  if (f.has("model_type")) {
    type = f.string("model_type");
    // Falcon's first releases named their type after the RefinedWeb code.
    const std::string t = (type == "RefinedWeb" || type == "RefinedWebModel") ? "falcon" : type;
    for (const auto& fam : families())
      if (t == fam.model_type) by_type = &fam;
    if (t == "llama4")
      fail_at("model_type",
              "{}: model_type 'llama4' is not modelled: its text model nests in text_config and uses chunked local "
              "attention (attention_chunk_size) and layers without RoPE, which the simulator does not represent; "
              "modelled types: {}",
              f.where(), type_list());
    if (!by_type)
      fail("{}: model_type '{}' is not modelled; modelled types: {}", f.where(), type, type_list());
  }
  if (f.has("architectures")) {
    const auto& a = f.raw("architectures");
    if (!a.is_array() || a.empty() || !a[0].is_string())
      fail("{}: field 'architectures' must be a list of class names, found {}", f.where(), a.dump());
    cls = a[0].get<std::string>();
    for (const auto& fam : families())
      for (const char* c : fam.architectures)
        if (cls == c) by_class = &fam;
  }
  if (by_type && by_class && by_type != by_class)
    fail("{}: model_type '{}' and architectures '{}' name different models; fix one of them", f.where(), type, cls);
  if (by_type) return *by_type;
  if (by_class) return *by_class;
  if (!cls.empty())
    fail("{}: architectures '{}' is not modelled and there is no model_type; modelled types: {}", f.where(), cls,
         type_list());
  fail("{}: no model_type or architectures: the architecture cannot be decided; modelled types: {}", f.where(),
       type_list());
}

// The first of `keys` present (transformers' attribute_map aliases); an error lists them all.
long long integer_of(const JsonFields& f, std::initializer_list<const char*> keys, const char* what) {
  for (const char* k : keys)
    if (f.has(k)) return f.integer(k, 1);
  fail("{}: no {} (looked for {})", f.where(), what, fmt::join(keys, ", "));
}

std::optional<long long> optional_integer(const JsonFields& f, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (f.has(k)) return f.integer(k, 1);
  return std::nullopt;
}

// The key holding the longest sequence the model supports.
const char* position_limit_key(const Family& fam) {
  return fam.keys == Keys::Gpt2 ? "n_positions" : "max_position_embeddings";
}

Activation activation_of(const JsonFields& f, const Family& fam) {
  const char* key = fam.keys == Keys::Gpt2 ? "activation_function" : fam.keys == Keys::Falcon ? "activation"
                    : f.has("hidden_activation") ? "hidden_activation"  // Gemma's newer key
                                                 : "hidden_act";
  const std::string fallback = fam.mlp == Mlp::SwiGlu ? "silu" : fam.mlp == Mlp::SquaredRelu ? "relu2" : "gelu";
  const std::string act = f.string_or(key, fallback);
  const bool gelu = act.rfind("gelu", 0) == 0;  // gelu, gelu_new, gelu_fast, gelu_pytorch_tanh: one cost
  if (fam.mlp == Mlp::SwiGlu && act == "silu") return Activation::SwiGLU;
  if (fam.mlp == Mlp::GeGlu && gelu) return Activation::GeGLU;
  if (fam.mlp == Mlp::Gelu && gelu) return Activation::GeLU;
  if (fam.mlp == Mlp::SquaredRelu && act == "relu2") return Activation::SquaredReLU;
  fail("{}: {} '{}' in a {} model is not modelled; {} models use {}", f.where(), key, act, fam.model_type,
       fam.model_type, fallback);
}

// Which linears of a dense class carry biases, read from transformers' modeling_<type>.py. An MLP
// the class does not say has its activation's convention (ModelSpec::mlp_bias): biases when GeLU,
// none when gated.
void read_dense_biases(const JsonFields& f, const Family& fam, ModelSpec& m) {
  const std::string type = fam.model_type;
  if (type == "gpt2" || type == "bloom" || type == "phi") {
    m.qkv_bias = m.projection_bias = true;  // Conv1D / Linear layers with biases throughout
  } else if (type == "gptj" || type == "mistral" || type == "phi3") {
    m.qkv_bias = m.projection_bias = false;  // attention projections built with bias=False
  } else if (type == "qwen2") {
    m.qkv_bias = true;  // Qwen2Attention: q, k, v with biases; o_proj without
    m.projection_bias = false;
  } else if (type == "gpt_neox") {
    m.qkv_bias = m.projection_bias = f.boolean_or("attention_bias", true);
  } else if (type == "falcon") {
    // FalconLinear: one `bias` switch for query_key_value, dense and both MLP matrices.
    m.qkv_bias = m.projection_bias = f.boolean_or("bias", false);
    m.mlp_bias = m.qkv_bias;
  } else {  // llama, gemma, gemma2, nemotron: attention_bias on all four projections, off by default
    m.qkv_bias = m.projection_bias = f.boolean_or("attention_bias", false);
    // LlamaMLP's and NemotronMLP's projections (transformers' mlp_bias, false by default); the
    // other classes build their MLPs without it, so there the key stays unread and is named.
    if ((type == "llama" || type == "nemotron") && f.boolean_or("mlp_bias", false)) m.mlp_bias = true;
  }
}

// Megatron's 0/1 pattern of MoE layers from a rule over the layer index.
template <typename IsMoe>
std::vector<int> layer_pattern(int layers, IsMoe is_moe) {
  std::vector<int> p;
  for (int i = 0; i < layers; ++i) p.push_back(is_moe(i) ? 1 : 0);
  return p;
}

// The experts, attention details and extra layers of a mixture-of-experts class. Each fact is
// read from transformers' modeling_<type>.py: which linears carry biases, which norms exist,
// which layers are sparse, what the router holds.
void read_mixture(const JsonFields& f, const Family& fam, ModelSpec& m, std::vector<std::string>& notes) {
  const std::string type = fam.model_type;
  MoeSpec& e = m.moe;
  e.router_topk = static_cast<int>(integer_of(f, {"num_experts_per_tok", "experts_per_token"}, "router top-k"));
  e.ffn_hidden_size = m.ffn_hidden_size;  // Mixtral, OLMoE, gpt-oss: intermediate_size is an expert's width
  m.qkv_bias = m.projection_bias = false;
  if (type == "mixtral") {
    e.num_experts = static_cast<int>(integer_of(f, {"num_local_experts"}, "expert count"));
  } else if (type == "olmoe") {
    // OlmoeAttention: q_norm over the whole query width, k_norm over the whole key width.
    e.num_experts = static_cast<int>(integer_of(f, {"num_experts"}, "expert count"));
    m.qkv_bias = m.projection_bias = f.boolean_or("attention_bias", false);
    m.qk_norm = QkNorm::Full;
    if (f.has("clip_qkv"))
      notes.push_back(fmt::format("{}: clip_qkv {} clamps Q, K and V; it has no parameters and is not priced",
                                  f.where(), f.raw("clip_qkv").dump()));
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    e.num_experts = static_cast<int>(integer_of(f, {"num_experts"}, "expert count"));
    e.ffn_hidden_size = static_cast<int>(integer_of(f, {"moe_intermediate_size"}, "expert MLP size"));
    // A layer is sparse unless listed in mlp_only_layers, every decoder_sparse_step-th from 1.
    const long long step = f.integer_or("decoder_sparse_step", 1, 1);
    std::vector<long long> dense_layers;
    if (f.has("mlp_only_layers")) {
      const auto& list = f.raw("mlp_only_layers");
      if (!list.is_array()) fail_at("mlp_only_layers", "{}: mlp_only_layers must be a list of layer indices", f.where());
      for (const auto& v : list) {
        if (!v.is_number_integer())
          fail_at("mlp_only_layers", "{}: mlp_only_layers holds {}; it must list layer indices", f.where(), v.dump());
        dense_layers.push_back(v.get<long long>());
      }
    }
    e.layer_pattern = layer_pattern(m.num_layers, [&](int i) {
      return std::find(dense_layers.begin(), dense_layers.end(), i) == dense_layers.end() && (i + 1) % step == 0;
    });
    if (type == "qwen2_moe") {
      // Qwen2MoeAttention: Q, K, V biases (qkv_bias, default true), none on o_proj; one shared
      // expert scaled by a sigmoid gate (a linear with one output).
      m.qkv_bias = f.boolean_or("qkv_bias", true);
      e.shared_expert_ffn_hidden_size =
          static_cast<int>(integer_of(f, {"shared_expert_intermediate_size"}, "shared expert MLP size"));
      e.shared_expert_gate = true;
    } else {
      // Qwen3MoeAttention: attention_bias on all four projections; q_norm and k_norm per head.
      m.qkv_bias = m.projection_bias = f.boolean_or("attention_bias", false);
      m.qk_norm = QkNorm::PerHead;
    }
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    if (f.boolean_or("attention_bias", false))
      fail_at("attention_bias", "{}: attention_bias true in a {} model (biases on MLA's latent projections) is not "
              "modelled; DeepSeek's published models have none", f.where(), type);
    e.num_experts = static_cast<int>(integer_of(f, {"n_routed_experts"}, "routed expert count"));
    e.ffn_hidden_size = static_cast<int>(integer_of(f, {"moe_intermediate_size"}, "expert MLP size"));
    e.shared_expert_ffn_hidden_size =
        static_cast<int>(f.integer_or("n_shared_experts", 0, 0) * e.ffn_hidden_size);
    const long long first_dense = f.integer_or("first_k_dense_replace", 0, 0);
    const long long freq = f.integer_or("moe_layer_freq", 1, 1);
    e.layer_pattern = layer_pattern(m.num_layers, [&](int i) { return i >= first_dense && i % freq == 0; });
    const std::string score = f.string_or("scoring_func", type == "deepseek_v3" ? "sigmoid" : "softmax");
    if (score != "softmax" && score != "sigmoid")
      fail_at("scoring_func", "{}: scoring_func '{}' is not modelled; softmax or sigmoid", f.where(), score);
    e.score_function = score == "softmax" ? RouterScore::Softmax : RouterScore::Sigmoid;
    // topk_method: greedy (plain top-k), group_limited_greedy (V2: top groups first), noaux_tc
    // (V3: groups, plus the e_score_correction_bias that balances load without an auxiliary loss).
    const std::string method = f.string_or("topk_method", type == "deepseek_v3" ? "noaux_tc" : "greedy");
    if (method != "greedy" && method != "group_limited_greedy" && method != "noaux_tc")
      fail_at("topk_method", "{}: topk_method '{}' is not modelled; greedy, group_limited_greedy or noaux_tc",
              f.where(), method);
    if (method != "greedy") {
      e.router_num_groups = static_cast<int>(integer_of(f, {"n_group"}, "expert group count"));
      e.router_group_topk = static_cast<int>(integer_of(f, {"topk_group"}, "groups per token"));
    }
    e.router_expert_bias = method == "noaux_tc";
    e.topk_scaling_factor = f.number_or("routed_scaling_factor", 0.0, 1.0);
    m.mla.enabled = true;
    m.mla.q_lora_rank = static_cast<int>(f.integer_or("q_lora_rank", 0, 0));  // null: queries projected directly
    m.mla.kv_lora_rank = static_cast<int>(integer_of(f, {"kv_lora_rank"}, "KV latent rank"));
    m.mla.qk_head_dim = static_cast<int>(integer_of(f, {"qk_nope_head_dim"}, "no-RoPE query/key head width"));
    m.mla.qk_pos_emb_head_dim = static_cast<int>(integer_of(f, {"qk_rope_head_dim"}, "RoPE query/key head width"));
    m.mla.v_head_dim = static_cast<int>(integer_of(f, {"v_head_dim"}, "value head width"));
    m.explicit_head_dim = 0;  // MLA's head widths are its own
    // DeepSeek-V3 trains with one multi-token-prediction module (its checkpoint's layer 61);
    // transformers drops it when loading, the training run has it.
    m.mtp_num_layers = static_cast<int>(f.integer_or("num_nextn_predict_layers", 0, 0));
  } else if (type == "gpt_oss") {
    // GptOssAttention: biases on Q, K, V and o_proj (attention_bias), and one learned sink logit
    // per head; GptOssTopKRouter: a linear with a bias; GptOssExperts: gate_up_proj_bias and
    // down_proj_bias for every expert.
    e.num_experts = static_cast<int>(integer_of(f, {"num_local_experts"}, "expert count"));
    m.qkv_bias = m.projection_bias = f.boolean_or("attention_bias", true);
    m.attention_sinks = true;
    e.router_linear_bias = true;
    e.expert_linear_biases = true;
    notes.push_back(fmt::format("{}: gpt-oss's clamped SwiGLU (swiglu_limit) is counted and priced as SwiGLU: the "
                                "same matrices and FLOPs", f.where()));
  }
}

}  // namespace

const std::vector<std::string>& hf_model_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t;
    for (const auto& fam : families()) t.emplace_back(fam.model_type);
    return t;
  }();
  return types;
}

std::optional<long long> hf_position_limit(const nlohmann::json& doc, const std::string& where) {
  const JsonFields f(doc, where);
  return optional_integer(f, {position_limit_key(family_of(f))});
}

bool is_hf_config(const nlohmann::json& doc) {
  return doc.is_object() && !doc.contains("num_layers") &&
         (doc.contains("model_type") || doc.contains("architectures") || doc.contains("num_hidden_layers") ||
          doc.contains("n_layer"));
}

HfImport model_from_hf_config(const nlohmann::json& doc, const std::string& where, std::optional<int> seq_length) {
  const JsonFields f(doc, where);
  const Family& fam = family_of(f);
  if (!is_mixture(fam)) refuse_experts(f);
  HfImport out;
  ModelSpec& m = out.model;
  m.name = f.string_or("_name_or_path", fam.model_type);

  switch (fam.keys) {
    case Keys::Gpt2:
      m.num_layers = static_cast<int>(integer_of(f, {"n_layer"}, "layer count"));
      m.hidden_size = static_cast<int>(integer_of(f, {"n_embd"}, "hidden size"));
      m.num_attention_heads = static_cast<int>(integer_of(f, {"n_head"}, "attention head count"));
      m.ffn_hidden_size = static_cast<int>(optional_integer(f, {"n_inner"}).value_or(4LL * m.hidden_size));
      m.num_query_groups = m.num_attention_heads;
      break;
    case Keys::Bloom:
      m.num_layers = static_cast<int>(integer_of(f, {"n_layer", "num_hidden_layers"}, "layer count"));
      m.hidden_size = static_cast<int>(integer_of(f, {"hidden_size", "n_embed"}, "hidden size"));
      m.num_attention_heads =
          static_cast<int>(integer_of(f, {"n_head", "num_attention_heads"}, "attention head count"));
      // BloomMLP: dense_h_to_4h, fixed. In 64 bits: a hidden size the reader accepts (up to an
      // int) overflowed 4h in an int; validate() then names the hidden size.
      m.ffn_hidden_size = static_cast<int>(4LL * m.hidden_size);
      m.num_query_groups = m.num_attention_heads;
      break;
    case Keys::Falcon: {
      m.num_layers = static_cast<int>(integer_of(f, {"num_hidden_layers", "n_layer"}, "layer count"));
      m.hidden_size = static_cast<int>(integer_of(f, {"hidden_size", "n_embed"}, "hidden size"));
      m.num_attention_heads =
          static_cast<int>(integer_of(f, {"num_attention_heads", "n_head"}, "attention head count"));
      m.ffn_hidden_size = static_cast<int>(optional_integer(f, {"ffn_hidden_size"}).value_or(4LL * m.hidden_size));
      // FalconAttention: the new decoder (40B, 180B) has num_kv_heads groups; the old one (7B)
      // is multi-query when multi_query is set (its class default) and multi-head otherwise.
      // The first 40B files say so by their type, "RefinedWeb" (7B's was "RefinedWebModel").
      const auto kv = optional_integer(f, {"num_kv_heads", "n_head_kv"});
      if (f.boolean_or("new_decoder_architecture", f.string_or("model_type", "") == "RefinedWeb"))
        m.num_query_groups = static_cast<int>(kv.value_or(m.num_attention_heads));
      else
        m.num_query_groups = f.boolean_or("multi_query", true) ? 1 : m.num_attention_heads;
      break;
    }
    case Keys::Standard:
      m.num_layers = static_cast<int>(integer_of(f, {"num_hidden_layers"}, "layer count"));
      m.hidden_size = static_cast<int>(integer_of(f, {"hidden_size"}, "hidden size"));
      m.num_attention_heads = static_cast<int>(integer_of(f, {"num_attention_heads"}, "attention head count"));
      m.num_query_groups =
          static_cast<int>(optional_integer(f, {"num_key_value_heads"}).value_or(m.num_attention_heads));
      m.ffn_hidden_size = static_cast<int>(integer_of(f, {"intermediate_size"}, "MLP size"));
      if (const auto hd = optional_integer(f, {"head_dim"});
          hd && (m.num_attention_heads <= 0 || *hd * m.num_attention_heads != m.hidden_size))
        m.explicit_head_dim = static_cast<int>(*hd);
      break;
  }
  m.vocab_size = static_cast<int>(integer_of(f, {"vocab_size"}, "vocabulary size"));
  m.activation = activation_of(f, fam);
  m.normalization = fam.norm;
  switch (fam.positions) {
    case Positions::Learned: m.position_embedding = PositionEmbedding::Learned; break;
    case Positions::Rope: m.position_embedding = PositionEmbedding::Rope; break;
    case Positions::Alibi: m.position_embedding = PositionEmbedding::Alibi; break;
    case Positions::FalconAlibiKey:
      m.position_embedding = f.boolean_or("alibi", false) ? PositionEmbedding::Alibi : PositionEmbedding::Rope;
      break;
  }
  // RoPE's base: rope_theta in most classes, rotary_emb_base in GPT-NeoX's; transformers'
  // default where the file leaves it out is Megatron-LM's too (10,000).
  if (m.position_embedding == PositionEmbedding::Rope)
    m.rotary_base = f.number_or("rope_theta", 1, f.number_or("rotary_emb_base", 1, ModelSpec::kDefaultRotaryBase));
  // Gemma 2's soft caps (null in Gemma 3's files: none).
  m.attention_softcap = f.number_or("attn_logit_softcapping", 0, 0);
  m.final_logit_softcap = f.number_or("final_logit_softcapping", 0, 0);
  m.tied_embeddings = f.boolean_or("tie_word_embeddings", fam.tied_by_default);
  m.dropout = f.number_or("attention_dropout", 0.0, f.number_or("attn_pdrop", 0.0, 0.0)) > 0.0 ||
              f.number_or("hidden_dropout", 0.0, f.number_or("resid_pdrop", 0.0, 0.0)) > 0.0;

  // The sequence length is the user's: the file knows only the longest the model supports.
  const char* length_key = position_limit_key(fam);
  const std::optional<long long> limit = optional_integer(f, {length_key});
  if (seq_length) {
    if (m.position_embedding == PositionEmbedding::Learned && limit && *seq_length > *limit)
      fail("{}: --seq-length {} is longer than {} {}, the model's learned position table; use at most {}", where,
           *seq_length, length_key, *limit, *limit);
    m.seq_length = *seq_length;
    if (m.position_embedding == PositionEmbedding::Learned && limit && *seq_length < *limit)
      out.notes.push_back(fmt::format("{}: the parameter count uses {} position rows (--seq-length); the model's "
                                      "table has {} ({})",
                                      where, *seq_length, *limit, length_key));
  } else if (limit) {
    // The position limit (131,072 for Llama 3.1) is the longest context the model supports, not
    // the length it trains at: taking it would simulate another job than the user's.
    fail_at("--seq-length",
            "{}: no --seq-length given; a HuggingFace config's {} {} is the longest sequence the model supports, "
            "rarely the one it trains at: pass --seq-length (at most {})",
            where, length_key, *limit, *limit);
  } else {
    fail("{}: no --seq-length given, and the file gives no sequence length ({} is absent); pass --seq-length",
         where, length_key);
  }

  // Sliding-window attention attends to the last `sliding_window` tokens only; the simulator
  // prices full causal attention, which is the same thing while the sequence fits the window.
  const bool window_on =
      std::string(fam.model_type).rfind("qwen", 0) == 0 ? f.boolean_or("use_sliding_window", false) : true;
  if (fam.sliding_window && window_on && f.has("sliding_window")) {
    const long long window = f.integer("sliding_window", 1);
    if (m.seq_length > window)
      fail("{}: sliding_window {} is shorter than the sequence length {}: sliding-window attention is not modelled; "
           "pass --seq-length {} or less",
           where, window, m.seq_length, window);
  }

  if (is_mixture(fam)) read_mixture(f, fam, m, out.notes);
  if (fam.parallel_residual && (fam.parallel_key == nullptr || f.boolean_or(fam.parallel_key, true)))
    out.notes.push_back(fmt::format(
        "{}: {} runs attention and the MLP in parallel from one residual; it is simulated as two sequential blocks: "
        "the same parameters and FLOPs, but with tensor parallelism the real model needs one all-reduce per layer "
        "where the simulation charges two",
        where, fam.model_type));
  if (!is_mixture(fam)) read_dense_biases(f, fam, m);
  m.validate(where);
  out.unread_keys = f.unread();
  return out;
}

}  // namespace cc
