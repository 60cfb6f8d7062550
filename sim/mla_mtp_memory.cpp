#include "sim/mla_mtp_memory.h"

namespace cc {

std::int64_t mla_attention_parameters_on_rank(const ModelSpec& m, int tp) {
  const MlaSpec& a = m.mla;
  const std::int64_t h = m.hidden_size, heads = m.num_attention_heads, t = tp;
  const std::int64_t qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
  const auto norm = [&](int width) { return a.latent_norms ? m.norm_parameters(width) : 0; };
  std::int64_t replicated = h * (a.kv_lora_rank + a.qk_pos_emb_head_dim) + norm(a.kv_lora_rank);
  std::int64_t split = std::int64_t{a.kv_lora_rank} * heads * (a.qk_head_dim + a.v_head_dim) + heads * a.v_head_dim * h;
  if (a.q_lora_rank > 0) {
    replicated += h * a.q_lora_rank + norm(a.q_lora_rank);
    split += std::int64_t{a.q_lora_rank} * heads * qk;
  } else {
    split += h * heads * qk;
  }
  return replicated + split / t;
}

double mla_attention_activation_bytes(const ModelSpec& m, const ParallelConfig& c, double e) {
  const MlaSpec& a = m.mla;
  const double tokens = static_cast<double>(m.seq_length) * c.micro_batch / c.cp;
  const double region = tokens / (c.sequence_parallel ? c.tp : 1);
  const double heads = static_cast<double>(m.num_attention_heads) / c.tp;
  const double input = e * m.hidden_size;
  // Each latent is kept as the up-projection's input; with its norm, the norm's input besides.
  const double norm_inputs = a.latent_norms ? 1 : 0;
  const double q_latent = a.q_lora_rank > 0 ? (1 + norm_inputs) * e * a.q_lora_rank : 0.0;
  const double kv_latent = e * (a.kv_lora_rank + a.qk_pos_emb_head_dim) + norm_inputs * e * a.kv_lora_rank;
  const double qk = 2 * e * heads * (a.qk_head_dim + a.qk_pos_emb_head_dim);
  const double v_and_output = 2 * e * heads * a.v_head_dim;
  // Flash attention's fp32 log-sum-exp per row; unfused attention keeps its scores instead
  // (memory_model.cpp, as for any attention).
  const bool flash = c.attention != AttentionKernel::Unfused;
  const double log_sum_exp = flash && c.recompute == RecomputeGranularity::None ? 4 * heads : 0.0;
  return region * (input + q_latent + kv_latent) + tokens * (qk + v_and_output + log_sum_exp);
}

int mtp_layers_on_stage(const ModelSpec& m, const ParallelConfig& c, int stage) {
  return stage == c.pp - 1 ? m.mtp_num_layers : 0;
}

int mtp_moe_layers_on_stage(const ModelSpec& m, const ParallelConfig& c, int stage) {
  const bool moe = m.moe.enabled() && m.is_moe_layer(m.num_layers - 1);
  return moe ? mtp_layers_on_stage(m, c, stage) : 0;
}

std::int64_t mtp_extra_parameters(const ModelSpec& m, const ParallelConfig& c, int stage) {
  const int layers = mtp_layers_on_stage(m, c, stage);
  if (layers == 0) return 0;
  const std::int64_t h = m.hidden_size, t = c.tp;
  const std::int64_t per_layer = 3 * m.norm_parameters(m.hidden_size) + 2 * h * h / t;
  // With tied tables the last stage's copy already serves as the embedding (PP > 1).
  const std::int64_t embedding = c.pp > 1 && !m.tied_embeddings ? (std::int64_t{m.vocab_size} + t - 1) / t * h : 0;
  return layers * per_layer + embedding;
}

double mtp_activation_bytes(const ModelSpec& m, const ParallelConfig& c, double layer_bytes, double e) {
  const double tokens = static_cast<double>(m.seq_length) * c.micro_batch / c.cp;
  const double region = tokens / (c.sequence_parallel ? c.tp : 1);
  const double h = m.hidden_size;
  const double per_layer = region * e * (h + 2 * h + h) + tokens * (e * h / c.tp + 4.0 * m.vocab_size / c.tp);
  return m.mtp_num_layers * (per_layer + layer_bytes);
}

}  // namespace cc
