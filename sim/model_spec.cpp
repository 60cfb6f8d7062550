#include "sim/model_spec.h"

#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

const char* to_string(Activation a) {
  switch (a) {
    case Activation::GeLU: return "gelu";
    case Activation::SwiGLU: return "swiglu";
    case Activation::GeGLU: return "geglu";
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

std::int64_t ModelSpec::layer_parameters() const {
  const std::int64_t h = hidden_size, f = ffn_hidden_size, q = query_width(), kv = kv_channels();
  const std::int64_t qkv = h * (q + 2 * kv) + (q + 2 * kv);  // weight + bias
  const std::int64_t proj = q * h + h;
  const std::int64_t mlp = gated_mlp() ? 3 * h * f : 2 * h * f + f + h;  // Llama-style MLPs have no bias
  const std::int64_t norm_params = normalization == Normalization::LayerNorm ? 2 * h : h;
  return qkv + proj + mlp + 2 * norm_params;
}

std::int64_t ModelSpec::embedding_parameters() const {
  const std::int64_t words = std::int64_t{vocab_size} * hidden_size;
  return words + (position_embedding == PositionEmbedding::Learned ? std::int64_t{seq_length} * hidden_size : 0);
}

std::int64_t ModelSpec::output_layer_parameters() const {
  return tied_embeddings ? 0 : std::int64_t{vocab_size} * hidden_size;
}

std::int64_t ModelSpec::total_parameters() const {
  const std::int64_t final_norm = normalization == Normalization::LayerNorm ? 2 * hidden_size : hidden_size;
  return num_layers * layer_parameters() + embedding_parameters() + output_layer_parameters() + final_norm;
}

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
}

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
  const std::string act = f.choice_or("activation", {"gelu", "swiglu", "geglu"}, "gelu");
  m.activation = act == "gelu" ? Activation::GeLU : act == "swiglu" ? Activation::SwiGLU : Activation::GeGLU;
  m.normalization = f.choice_or("normalization", {"layernorm", "rmsnorm"}, "layernorm") == "layernorm"
                        ? Normalization::LayerNorm
                        : Normalization::RMSNorm;
  const std::string pos = f.choice_or("position_embedding", {"learned", "rope", "alibi"}, "learned");
  m.position_embedding = pos == "learned" ? PositionEmbedding::Learned
                         : pos == "rope"  ? PositionEmbedding::Rope
                                          : PositionEmbedding::Alibi;
  m.explicit_head_dim = static_cast<int>(f.integer_or("head_dim", 1, 0));
  m.tied_embeddings = f.boolean_or("tied_embeddings", true);
  m.dropout = f.boolean_or("dropout", true);
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
  if (m.explicit_head_dim != 0) j["head_dim"] = m.explicit_head_dim;  // only where it departs from hidden / heads
  return j;
}

}  // namespace cc
