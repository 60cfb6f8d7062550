// model_spec.h — the shape of a decoder-only transformer, shared by the simulator and the
// training engine (one definition, two users). Read from our own JSON, from a HuggingFace
// config.json, or from a preset in traces/presets/models/.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace cc {

enum class Activation { GeLU, SwiGLU };
enum class Normalization { LayerNorm, RMSNorm };
enum class PositionEmbedding { Learned, Rope };

struct ModelSpec {
  std::string name = "custom";
  int num_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_query_groups = 0;  // KV heads; equals num_attention_heads for multi-head attention
  int ffn_hidden_size = 0;
  int vocab_size = 0;
  int seq_length = 0;
  Activation activation = Activation::GeLU;
  Normalization normalization = Normalization::LayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::Learned;
  bool tied_embeddings = true;
  bool dropout = true;  // hidden and attention dropout (masks are stored activations)

  int head_dim() const { return hidden_size / num_attention_heads; }
  int kv_channels() const { return head_dim() * num_query_groups; }  // width of K (and of V)
  bool gated_mlp() const { return activation == Activation::SwiGLU; }

  // Parameters of one transformer layer: QKV, projection, MLP, two norms and biases.
  std::int64_t layer_parameters() const;
  // Token embedding (+ learned positions) and the separate output layer when untied.
  std::int64_t embedding_parameters() const;
  std::int64_t output_layer_parameters() const;  // 0 when tied
  std::int64_t total_parameters() const;

  // Throws SpecError naming the first inconsistent field.
  void validate(const std::string& where) const;
};

// Our JSON format (see traces/presets/README.md). `where` names the document in errors.
ModelSpec model_from_json(const nlohmann::json& doc, const std::string& where);
// A HuggingFace transformers config.json (GPT-2, GPT-NeoX, Llama, Mistral, Qwen2 style keys).
ModelSpec model_from_hf_config(const nlohmann::json& doc, const std::string& where);
nlohmann::json model_to_json(const ModelSpec& model);

const char* to_string(Activation a);
const char* to_string(Normalization n);
const char* to_string(PositionEmbedding p);

}  // namespace cc
