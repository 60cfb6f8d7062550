// moe_spec.h — the mixture-of-experts and multi-latent-attention parts of a model's shape, with
// Megatron-Core's semantics (its TransformerConfig / MLATransformerConfig fields): what the model
// *is*, not how it is parallelised. Part of ModelSpec (sim/model_spec.h); parameter counts live
// there, beside the dense ones.
#pragma once

#include <vector>

namespace cc {

// How the router turns logits into expert scores (--moe-router-score-function).
enum class RouterScore { Softmax, Sigmoid };

struct MoeSpec {
  int num_experts = 0;     // routed experts per MoE layer; 0: a dense model (--num-experts)
  int router_topk = 0;     // routed experts each token visits (--moe-router-topk)
  int ffn_hidden_size = 0;  // one routed expert's FFN width (--moe-ffn-hidden-size)
  // Width of the shared-expert MLP, summed over the shared experts (DeepSeek-V3: 1 x 2048;
  // --moe-shared-expert-intermediate-size). 0: no shared expert.
  int shared_expert_ffn_hidden_size = 0;
  // Qwen2-MoE scales the shared expert's output by sigmoid(x . w): a linear with one output
  // (--moe-shared-expert-gate).
  bool shared_expert_gate = false;
  // Which layers are MoE (--moe-layer-freq): an integer N makes layer i MoE when i % N == 0; a
  // 0/1 pattern (one entry per layer) says it layer by layer and, when given, wins.
  int layer_freq = 1;
  std::vector<int> layer_pattern;
  RouterScore score_function = RouterScore::Softmax;
  // DeepSeek-V3's per-expert routing bias (e_score_correction_bias; --moe-router-enable-expert-bias):
  // one value per expert, stored in the checkpoint, so counted as parameters.
  bool router_expert_bias = false;
  bool router_linear_bias = false;     // gpt-oss: the router is a linear with a bias
  bool expert_linear_biases = false;   // gpt-oss: every expert's linears carry biases
  int router_num_groups = 0;           // grouped top-k: expert groups (--moe-router-num-groups); 0: none
  int router_group_topk = 0;           // groups each token may use (--moe-router-group-topk)
  double topk_scaling_factor = 1.0;    // routed output scale (--moe-router-topk-scaling-factor)

  bool enabled() const { return num_experts > 0; }
};

// Multi-latent attention (DeepSeek-V2/V3; --multi-latent-attention): queries and keys/values pass
// through low-rank latents; each head's query/key has a no-RoPE part and a shared RoPE part.
struct MlaSpec {
  bool enabled = false;
  int q_lora_rank = 0;          // 0: queries projected directly (DeepSeek-V2-Lite)
  int kv_lora_rank = 0;
  int qk_head_dim = 0;          // the no-RoPE part of a query/key head
  int qk_pos_emb_head_dim = 0;  // the RoPE part, one shared key part for all heads
  int v_head_dim = 0;
  // The latents' norms (Megatron-LM's --qk-layernorm; DeepSeek-V2/V3 train with them): without
  // them Megatron-Core builds plain up-projections, no norm weights, no norm kernels.
  bool latent_norms = true;
};

}  // namespace cc
