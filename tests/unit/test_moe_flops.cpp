// FLOPs of MoE layers and multi-latent attention, counted by hand GEMM by GEMM on a small model:
// model FLOPs follow the experts a token uses (the active parameters), not all of them.
#include <gtest/gtest.h>

#include "sim/flops.h"
#include "sim/parallel_config.h"

namespace cc {
namespace {

// Two layers, the first dense, the second MoE; SwiGLU; MLA. h 64, 4 heads, s 16, vocab 128,
// dense FFN 256; 8 experts of width 32, top-2, one shared expert of width 64; query latent 24,
// key/value latent 16, head parts 8 (no RoPE) + 4 (RoPE), value width 8.
ModelSpec small_moe_mla() {
  ModelSpec m;
  m.name = "small-moe-mla";
  m.num_layers = 2;
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_query_groups = 4;
  m.ffn_hidden_size = 256;
  m.seq_length = 16;
  m.vocab_size = 128;
  m.activation = Activation::SwiGLU;
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.ffn_hidden_size = 32;
  m.moe.shared_expert_ffn_hidden_size = 64;
  m.moe.layer_pattern = {0, 1};
  m.mla = {.enabled = true, .q_lora_rank = 24, .kv_lora_rank = 16, .qk_head_dim = 8, .qk_pos_emb_head_dim = 4,
           .v_head_dim = 8};
  return m;
}

TEST(MoeFlops, EachGemmCountedByHand) {
  const ModelSpec m = small_moe_mla();
  // MLA projections per token: q down 64·24 = 1536, q up 24·4·(8+4) = 1152, kv down 64·(16+4) =
  // 1280, kv up 16·4·(8+8) = 1024, output 4·8·64 = 2048: 7040, x 2·s = 225,280. Products:
  // 2·s²·heads·(8 + 4 + 8) = 2·256·4·20 = 40,960. Attention: 266,240.
  const double attention = 266240;
  // Dense SwiGLU MLP: 2·16·64·256·3 = 1,572,864.
  EXPECT_DOUBLE_EQ(layer_forward_flops(m), attention + 1572864);
  // MoE: router 2·16·64·8 = 16,384; two routed experts 2·(2·16·64·32·3) = 393,216; the shared
  // expert 2·16·64·64·3 = 393,216.
  EXPECT_DOUBLE_EQ(moe_layer_forward_flops(m), attention + 16384 + 393216 + 393216);
  // One sequence, forward and backward (x 3), the logits 2·16·64·128 = 262,144 beside the layers.
  EXPECT_DOUBLE_EQ(model_flops_per_iteration(m, 1), 3.0 * (1839104 + 1069056 + 262144));
}

TEST(MoeFlops, FullRecomputationRerunsEachLayerAsWhatItIs) {
  const ModelSpec m = small_moe_mla();
  ParallelConfig c;
  c.recompute = RecomputeGranularity::Full;  // uniform, one layer per group: both layers rerun
  c.global_batch = 4;
  EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(m, c) - model_flops_per_iteration(m, 4), 4.0 * (1839104 + 1069056));
}

}  // namespace
}  // namespace cc
