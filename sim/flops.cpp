#include "sim/flops.h"

#include "sim/step_plan.h"

namespace cc {

namespace {

double attention_product_flops(const ModelSpec& m) {
  const double s = m.seq_length, q = m.query_width();  // the hidden size unless head_dim is explicit (Gemma)
  return 4.0 * s * s * q;  // QK^T and softmax·V, counted over the full square as Megatron does
}

}  // namespace

double layer_forward_flops(const ModelSpec& m) {
  const double s = m.seq_length, h = m.hidden_size, q = m.query_width(), kv = m.kv_channels(), f = m.ffn_hidden_size;
  const double gemms = 2.0 * s * (h * (q + 2 * kv) + q * h + h * f * (m.gated_mlp() ? 3 : 2));
  return gemms + attention_product_flops(m);
}

double model_flops_per_iteration(const ModelSpec& m, int global_batch) {
  const double logits = 2.0 * m.seq_length * m.hidden_size * static_cast<double>(m.vocab_size);
  return 3.0 * global_batch * (m.num_layers * layer_forward_flops(m) + logits);
}

double hardware_flops_per_iteration(const ModelSpec& m, const ParallelConfig& c) {
  const RecomputeScope scope = recompute_scope(c);
  if (scope == RecomputeScope::Nothing) return model_flops_per_iteration(m, c.global_batch);
  int recomputed_layers = 0;
  for (int s = 0; s < c.pp; ++s)
    for (int k = 0; k < c.virtual_stages; ++k) recomputed_layers += chunk_plan(m, c, s, k).recomputed_layers();
  const double per_layer = scope == RecomputeScope::WholeLayer ? layer_forward_flops(m) : attention_product_flops(m);
  const double extra = static_cast<double>(c.global_batch) * recomputed_layers * per_layer;
  return model_flops_per_iteration(m, c.global_batch) + extra;
}

}  // namespace cc
