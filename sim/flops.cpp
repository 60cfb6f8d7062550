#include "sim/flops.h"

#include "sim/step_plan.h"

namespace cc {

namespace {

double attention_product_flops(const ModelSpec& m) {
  const double s = m.seq_length;
  if (m.mla.enabled) {
    // Multi-latent attention: QK^T over each head's no-RoPE and RoPE parts, softmax·V over its
    // value width (DeepSeek-V2 Sec. 2.1), over the full square.
    const MlaSpec& a = m.mla;
    return 2.0 * s * s * m.num_attention_heads * (a.qk_head_dim + a.qk_pos_emb_head_dim + a.v_head_dim);
  }
  const double q = m.query_width();  // the hidden size unless head_dim is explicit (Gemma)
  return 4.0 * s * s * q;  // QK^T and softmax·V, counted over the full square as Megatron does
}

// Multiply-adds per token of the attention's projections.
double attention_gemm_weights(const ModelSpec& m) {
  const double h = m.hidden_size, n = m.num_attention_heads;
  if (m.mla.enabled) {
    const MlaSpec& a = m.mla;
    const double qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    // Queries through their latent (down, up) or projected directly; keys and values through
    // theirs, the shared RoPE key part beside the latent; the output from every head's value.
    const double queries = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * n * qk : h * n * qk;
    const double keys_values =
        h * (a.kv_lora_rank + a.qk_pos_emb_head_dim) + a.kv_lora_rank * n * (a.qk_head_dim + a.v_head_dim);
    return queries + keys_values + n * a.v_head_dim * h;
  }
  const double q = m.query_width(), kv = m.kv_channels();
  return h * (q + 2 * kv) + q * h;
}

// Multiply-adds per token of an MLP of width `f` (gated: gate, up and down projections).
double mlp_gemm_weights(const ModelSpec& m, double f) { return m.hidden_size * f * (m.gated_mlp() ? 3 : 2); }

}  // namespace

double mtp_forward_flops(const ModelSpec& m) {
  if (m.mtp_num_layers == 0) return 0;
  const double s = m.seq_length, h = m.hidden_size;
  const bool moe = m.moe.enabled() && m.is_moe_layer(m.num_layers - 1);
  const double layer = moe ? moe_layer_forward_flops(m) : layer_forward_flops(m);
  // Each: the 2h -> h projection, a layer of the last decoder layer's kind, its own logits.
  return m.mtp_num_layers * (2.0 * s * 2 * h * h + layer + 2.0 * s * h * static_cast<double>(m.vocab_size));
}

double layer_forward_flops(const ModelSpec& m) {
  const double s = m.seq_length, f = m.ffn_hidden_size;
  const double gemms = 2.0 * s * (attention_gemm_weights(m) + mlp_gemm_weights(m, f));
  return gemms + attention_product_flops(m);
}

double moe_layer_forward_flops(const ModelSpec& m) {
  const double s = m.seq_length, h = m.hidden_size;
  const MoeSpec& e = m.moe;
  // The router's logits over every expert; each token through its top-k routed experts; the
  // shared experts (and Qwen2-MoE's one-output gate on them) for every token.
  const double router = h * e.num_experts;
  const double routed = e.router_topk * mlp_gemm_weights(m, e.ffn_hidden_size);
  const double shared = mlp_gemm_weights(m, e.shared_expert_ffn_hidden_size) + (e.shared_expert_gate ? h : 0.0);
  return 2.0 * s * (attention_gemm_weights(m) + router + routed + shared) + attention_product_flops(m);
}

double model_flops_per_iteration(const ModelSpec& m, int global_batch) {
  const double logits = 2.0 * m.seq_length * m.hidden_size * static_cast<double>(m.vocab_size);
  int moe_layers = 0;
  for (int layer = 0; layer < m.num_layers; ++layer) moe_layers += m.is_moe_layer(layer) ? 1 : 0;
  const double layers = (m.num_layers - moe_layers) * layer_forward_flops(m) +
                        (moe_layers > 0 ? moe_layers * moe_layer_forward_flops(m) : 0.0);  // + 0: dense sums unchanged
  return 3.0 * global_batch * (layers + logits + mtp_forward_flops(m));
}

double hardware_flops_per_iteration(const ModelSpec& m, const ParallelConfig& c) {
  const RecomputeScope scope = recompute_scope(c);
  if (scope == RecomputeScope::Nothing) return model_flops_per_iteration(m, c.global_batch);
  // Each recomputed layer's rerun, dense or MoE by its global index.
  const double dense = scope == RecomputeScope::WholeLayer ? layer_forward_flops(m) : attention_product_flops(m);
  const double moe = scope == RecomputeScope::WholeLayer && m.moe.enabled() ? moe_layer_forward_flops(m) : dense;
  int dense_reruns = 0, moe_reruns = 0;
  for (int s = 0; s < c.pp; ++s)
    for (int k = 0; k < c.virtual_stages; ++k) {
      const ChunkPlan chunk = chunk_plan(m, c, s, k);
      for (const LayerRange& group : chunk.recompute_groups)
        for (int i = group.first; i < group.end(); ++i)
          ++(m.is_moe_layer(chunk.layers.first + i) ? moe_reruns : dense_reruns);
    }
  const double batch = c.global_batch;
  return model_flops_per_iteration(m, c.global_batch) + batch * dense_reruns * dense + batch * moe_reruns * moe;
}

}  // namespace cc
