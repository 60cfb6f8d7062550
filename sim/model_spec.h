// model_spec.h — the shape of a decoder-only transformer, shared by the simulator and the
// training engine (one definition, two users). Read from our own JSON, from a preset in
// traces/presets/models/, or from a HuggingFace config.json (interop/hf_config.h).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace cc {

// GeGLU is Gemma's gated GeLU: the same three matrices as SwiGLU, a different gate function.
enum class Activation { GeLU, SwiGLU, GeGLU };
enum class Normalization { LayerNorm, RMSNorm };
// ALiBi (BLOOM, MPT) adds a fixed bias to the attention scores: no parameters, no table.
enum class PositionEmbedding { Learned, Rope, Alibi };

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
  // Width of one attention head when it is not hidden / heads (Gemma 7B: 16 heads of 256 on a
  // hidden size of 3072; Megatron-LM's --kv-channels). 0: hidden / heads, as in GPT and Llama.
  int explicit_head_dim = 0;

  int head_dim() const { return explicit_head_dim > 0 ? explicit_head_dim : hidden_size / num_attention_heads; }
  int query_width() const { return head_dim() * num_attention_heads; }  // width of Q and of the projection input
  int kv_channels() const { return head_dim() * num_query_groups; }      // width of K (and of V)
  bool gated_mlp() const { return activation != Activation::GeLU; }

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
nlohmann::json model_to_json(const ModelSpec& model);

const char* to_string(Activation a);
const char* to_string(Normalization n);
const char* to_string(PositionEmbedding p);

}  // namespace cc
