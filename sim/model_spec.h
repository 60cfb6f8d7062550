// model_spec.h — the shape of a decoder-only transformer, shared by the simulator and the
// training engine (one definition, two users). Read from our own JSON, from a preset in
// traces/presets/models/, or from a HuggingFace config.json (interop/hf_config.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/moe_spec.h"

namespace cc {

// GeGLU is Gemma's gated GeLU: the same three matrices as SwiGLU, a different gate function.
// Squared ReLU, relu(x)^2, is Nemotron-4's: two matrices, as GeLU (Megatron-LM's --squared-relu).
enum class Activation { GeLU, SwiGLU, GeGLU, SquaredReLU };
// A gated MLP's FC1 has two matrices (gate and up), so three in all; the others two.
inline bool is_gated(Activation a) { return a == Activation::SwiGLU || a == Activation::GeGLU; }
enum class Normalization { LayerNorm, RMSNorm };
// ALiBi (BLOOM, MPT) adds a fixed bias to the attention scores: no parameters, no table.
enum class PositionEmbedding { Learned, Rope, Alibi };
// Normalisation of queries and keys before the scores: none; per head over the head width
// (Megatron's --qk-layernorm, Qwen3); or over the whole query / key width (OLMoE).
enum class QkNorm { None, PerHead, Full };

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
  // RoPE's base period θ (Megatron-LM's --rotary-base, HuggingFace's rope_theta; Megatron-LM's
  // default 10,000). It bears on neither time nor memory; it is carried so that an export trains
  // the model it was read as (Llama 3 at 10,000 instead of 500,000 is another model).
  static constexpr double kDefaultRotaryBase = 10'000;
  // The largest base any reader takes: far past any published model's (Llama 3's 500,000,
  // Qwen3's 1,000,000), short of where a typo of extra zeros would pass.
  static constexpr double kMaxRotaryBase = 1e12;
  double rotary_base = kDefaultRotaryBase;
  bool tied_embeddings = true;
  bool dropout = true;  // hidden and attention dropout (masks are stored activations)
  // Width of one attention head when it is not hidden / heads (Gemma 7B: 16 heads of 256 on a
  // hidden size of 3072; Megatron-LM's --kv-channels). 0: hidden / heads, as in GPT and Llama.
  int explicit_head_dim = 0;
  // Biases of the attention's input projections (Q, K, V) and of its output projection. The
  // dense defaults are Megatron-LM's GPT (--add-bias-linear); the MoE importers say each class's.
  bool qkv_bias = true;
  bool projection_bias = true;
  // Biases of the dense MLP's linears. Unset: Megatron-LM's GPT on a GeLU MLP (biases), the
  // Llama family on a gated one and Nemotron-4 on squared ReLU (none); set where a file says
  // (Megatron-LM's --disable-bias-linear and its default --add-bias-linear on a launch line of
  // model flags alone).
  std::optional<bool> mlp_bias;
  bool mlp_bias_by_default() const { return activation == Activation::GeLU; }
  bool dense_mlp_bias() const { return mlp_bias.value_or(mlp_bias_by_default()); }
  // Another MLP activation over this model: its MLP keeps the biases it had (a --swiglu over GPT
  // is Megatron-LM's SwiGLU with --add-bias-linear; a GeLU over Llama has none), not the new
  // activation's convention.
  void change_activation(Activation a) {
    if (a == activation) return;
    mlp_bias = dense_mlp_bias();
    activation = a;
  }
  QkNorm qk_norm = QkNorm::None;
  bool attention_sinks = false;  // gpt-oss: one learned logit per head and layer
  // Gemma 2's soft caps, cap * tanh(x / cap) (0: none): on the attention scores before the
  // softmax, which only an unfused attention computes (Megatron-Bridge's and NeMo's
  // Gemma2DotProductAttention; Megatron-Core's flash and fused backends have no cap), and on the
  // output logits before the loss. Each pass keeps its tanh output for backward.
  double attention_softcap = 0;
  double final_logit_softcap = 0;
  MoeSpec moe;
  MlaSpec mla;
  // Multi-token prediction layers (--mtp-num-layers): each adds two norms, a 2h -> h projection,
  // one transformer layer (MoE when the last decoder layer is) and a final norm; it shares the
  // embedding and output layer with the main model, as in Megatron-Core.
  int mtp_num_layers = 0;

  int head_dim() const { return explicit_head_dim > 0 ? explicit_head_dim : hidden_size / num_attention_heads; }
  int query_width() const { return head_dim() * num_attention_heads; }  // width of Q and of the projection input
  int kv_channels() const { return head_dim() * num_query_groups; }      // width of K (and of V)
  bool gated_mlp() const { return is_gated(activation); }

  // Parameters, piece by piece (the memory model will price MoE layers from these).
  std::int64_t norm_parameters(int width) const;  // one norm over `width` values
  std::int64_t attention_parameters() const;      // projections, biases, q/k norms, sinks, MLA latents
  std::int64_t dense_mlp_parameters() const;      // the MLP of a dense layer (ffn_hidden_size)
  std::int64_t expert_parameters() const;         // one routed expert
  std::int64_t router_parameters() const;         // router weights, its bias, the expert bias
  std::int64_t shared_expert_parameters() const;  // shared experts and their gate
  bool is_moe_layer(int layer) const;             // layer in [0, num_layers)
  int moe_layer_count() const;
  // One transformer layer: attention, MLP or MoE block, and its two norms. `active` counts what
  // one token uses: the router, top-k routed experts and the shared experts of an MoE layer.
  std::int64_t layer_parameters(int layer, bool active = false) const;
  std::int64_t mtp_parameters(bool active = false) const;  // all MTP layers
  // Token embedding (+ learned positions) and the separate output layer when untied.
  std::int64_t embedding_parameters() const;
  std::int64_t output_layer_parameters() const;  // 0 when tied
  std::int64_t total_parameters() const;
  // Parameters one token uses, forward: the embedding and output tables (one table when tied),
  // every dense layer whole, the router, top-k and shared experts of each MoE layer, the MTP
  // layers. Equals total_parameters() for a dense model.
  std::int64_t active_parameters() const;

  // Throws SpecError naming the first inconsistent field.
  void validate(const std::string& where) const;
};

// Our JSON format (see traces/presets/README.md). `where` names the document in errors.
ModelSpec model_from_json(const nlohmann::json& doc, const std::string& where);
nlohmann::json model_to_json(const ModelSpec& model);

const char* to_string(Activation a);
const char* to_string(Normalization n);
const char* to_string(PositionEmbedding p);
const char* to_string(QkNorm n);
const char* to_string(RouterScore s);

}  // namespace cc
