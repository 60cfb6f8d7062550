// micro_model.h — the smallest GPT the engine tests build: hidden 8, 2 heads, FFN 16,
// vocab 16, sequence 4 (small enough for finite-difference gradient checks).
#pragma once

#include "sim/model_spec.h"

namespace cc::engine {

inline ModelSpec micro_model(int layers = 3) {
  ModelSpec m;
  m.name = "micro";
  m.num_layers = layers;
  m.hidden_size = 8;
  m.num_attention_heads = 2;
  m.num_query_groups = 2;
  m.ffn_hidden_size = 16;
  m.vocab_size = 16;
  m.seq_length = 4;
  return m;
}

}  // namespace cc::engine
