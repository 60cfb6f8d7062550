// small_models.h — the small models unit tests count by hand: small_base (the MoE and MLA
// pricing tests: h 64, 4 heads of 16 (MHA), 2 layers, FFN 128, SwiGLU, RMSNorm, RoPE, no biases,
// no dropout, sequence 16, vocabulary 128) and small_gpt (the simulator tests).
#pragma once

#include <string>

#include "sim/model_spec.h"

namespace cc::test {

inline ModelSpec small_base(const std::string& name) {
  ModelSpec m;
  m.name = name;
  m.num_layers = 2;
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_query_groups = 4;
  m.ffn_hidden_size = 128;
  m.vocab_size = 128;
  m.seq_length = 16;
  m.activation = Activation::SwiGLU;
  m.normalization = Normalization::RMSNorm;
  m.position_embedding = PositionEmbedding::Rope;
  m.dropout = false;
  m.qkv_bias = false;
  m.projection_bias = false;
  return m;
}

// The simulator tests' GPT: h 256, 8 heads, FFN 1024, sequence 128, vocabulary 1024 (untied),
// GELU, LayerNorm, learned positions; small enough that hand-fixed costs set every time.
inline ModelSpec small_gpt(int layers) {
  ModelSpec m;
  m.name = "test";
  m.num_layers = layers;
  m.hidden_size = 256;
  m.num_attention_heads = 8;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 1024;
  m.vocab_size = 1024;
  m.seq_length = 128;
  m.tied_embeddings = false;
  return m;
}

}  // namespace cc::test
