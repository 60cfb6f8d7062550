// Megatron-LM's two kernel fusion switches that Megatron-LM's own tests turn: the fused
// vocab-parallel cross-entropy (--cross-entropy-loss-fusion) and RoPE by separate PyTorch kernels
// (--no-rope-fusion). Each is priced by the passes its kernels make over their tensor and the
// collectives they call (sim/layer_program.cpp), and the fused loss's second fp32 copy of the
// logits is held at the loss's peak (sim/memory_model.cpp).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "program_steps.h"
#include "sim/layer_program.h"
#include "sim/memory_model.h"
#include "sim/presets.h"

namespace cc {
namespace {

// Megatron-LM's functional-test model (12 layers, h 512, GPT-2's vocabulary padded to 128 x TP),
// TP 2 and PP 2 as the cross_entropy_loss_fusion test cases run it.
ModelSpec functional_model(bool rope) {
  ModelSpec m = load_model("gpt3-1.3b");
  m.name = "functional";
  m.num_layers = 12;
  m.hidden_size = 512;
  m.num_attention_heads = 8;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 2048;
  m.seq_length = 1024;
  m.vocab_size = 50432;
  m.position_embedding = rope ? PositionEmbedding::Rope : PositionEmbedding::Learned;
  return m;
}

ParallelConfig tp2_pp2(bool fused_loss, bool fused_rope = true) {
  ParallelConfig c;
  c.tp = 2;
  c.pp = 2;
  c.dp = 2;
  c.micro_batch = 4;
  c.global_batch = 32;
  c.attention = AttentionKernel::Flash;
  c.cross_entropy_fusion = fused_loss;
  c.rope_fusion = fused_rope;
  return c;
}

int count_steps(const OpProgram& p, const std::string& name) {
  int n = 0;
  for (const ProgramStep& s : p) n += name == (s.is_collective ? s.comm.name : s.op.name) ? 1 : 0;
  return n;
}

constexpr double kTokens = 4.0 * 1024;      // micro batch x sequence
constexpr double kSlice = 50432.0 / 2;      // the rank's vocabulary slice at TP 2
constexpr double kLogits = kTokens * kSlice;

TEST(KernelFusions, TheFusedLossMakesFewerPassesAndOneAllReduceFewer) {
  const ModelSpec m = functional_model(false);
  const GroupPlacement tp{2, 1, 2};
  const LayerShape plain = make_layer_shape(m, tp2_pp2(false), tp);
  const LayerShape fused = make_layer_shape(m, tp2_pp2(true), tp);
  // The programs outlive the steps found in them.
  const OpProgram plain_out = output_forward(plain), fused_out = output_forward(fused);
  const OpProgram plain_back = output_backward(plain), fused_back = output_backward(fused);
  const ProgramStep* plain_forward = test::find_step(plain_out, "cross_entropy");
  const ProgramStep* fused_forward = test::find_step(fused_out, "cross_entropy");
  const ProgramStep* plain_backward = test::find_step(plain_back, "cross_entropy.backward");
  const ProgramStep* fused_backward = test::find_step(fused_back, "cross_entropy.backward");
  ASSERT_TRUE(plain_forward && fused_forward && plain_backward && fused_backward);
  // bf16 logits: cast 2 + 4, max 4, shift 8, exp 8, sum 4, divide 8 = 38 bytes per element; fused:
  // cast and max 6, shift-exp-sum 4 + 8, divide 8 = 26.
  EXPECT_DOUBLE_EQ(plain_forward->op.bytes, 38 * kLogits);
  EXPECT_DOUBLE_EQ(fused_forward->op.bytes, 26 * kLogits);
  // Backward: scale in place 8, cast back 4 + 2 = 14; fused: read 4, write back 4, cast 2 = 10.
  EXPECT_DOUBLE_EQ(plain_backward->op.bytes, 14 * kLogits);
  EXPECT_DOUBLE_EQ(fused_backward->op.bytes, 10 * kLogits);
  // Max, target logit and exp-sum all-reduced one by one; fused, the last two in one call.
  EXPECT_EQ(count_steps(plain_out, "cross_entropy.all_reduce"), 3);
  EXPECT_EQ(count_steps(fused_out, "cross_entropy.all_reduce"), 2);
  double plain_bytes = 0, fused_bytes = 0;
  for (const ProgramStep& s : plain_out)
    if (s.is_collective && std::string(s.comm.name) == "cross_entropy.all_reduce") plain_bytes += s.comm.bytes;
  for (const ProgramStep& s : fused_out)
    if (s.is_collective && std::string(s.comm.name) == "cross_entropy.all_reduce") fused_bytes += s.comm.bytes;
  EXPECT_DOUBLE_EQ(plain_bytes, 3 * 4 * kTokens);  // one fp32 value per token each
  EXPECT_DOUBLE_EQ(fused_bytes, plain_bytes);
}

// Megatron-LM's functional tests measured it: gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion peaks
// at 1.711 GiB on the last stage, the same run without the fusion (..._reshard_1x4xNone) at 1.329:
// 0.382 GiB, one fp32 copy of the 4,096 x 25,216 logits slice (0.385 GiB).
TEST(KernelFusions, TheFusedLossHoldsOneMoreFp32CopyOfTheLogitsAtItsPeak) {
  const ModelSpec m = functional_model(false);
  const MemoryReport plain = memory_model(m, tp2_pp2(false), MemoryReserve{});
  const MemoryReport fused = memory_model(m, tp2_pp2(true), MemoryReserve{});
  EXPECT_DOUBLE_EQ(fused.stages.back().bytes.activations - plain.stages.back().bytes.activations, 4 * kLogits);
  EXPECT_DOUBLE_EQ(fused.stages.front().bytes.total(), plain.stages.front().bytes.total());  // no loss on stage 0
}

TEST(KernelFusions, UnfusedRopeMakesTwelvePassesForwardAndFourteenBackward) {
  const ModelSpec m = functional_model(true);
  const GroupPlacement tp{2, 1, 2};
  const LayerShape fused = make_layer_shape(m, tp2_pp2(false, true), tp);
  const LayerShape plain = make_layer_shape(m, tp2_pp2(false, false), tp);
  const double rotated = kTokens * (512 + 512) / 2;  // Q and K on this rank
  for (const auto& [shape, forward, backward] :
       {std::tuple{&fused, 2.0, 2.0}, std::tuple{&plain, 12.0, 14.0}}) {
    const OpProgram forward_program = layer_forward(*shape, Phase::Forward);
    const OpProgram backward_program = layer_backward(*shape);
    const ProgramStep* f = test::find_step(forward_program, "rope");
    const ProgramStep* b = test::find_step(backward_program, "rope.backward");
    ASSERT_TRUE(f && b);
    EXPECT_DOUBLE_EQ(f->op.bytes, forward * 2 * rotated);
    EXPECT_DOUBLE_EQ(b->op.bytes, backward * 2 * rotated);
  }
}

// fp32 logits need no cast: the plain loss reads and writes them 32 bytes per element forward and 8
// backward, and holds no 16-bit copy beside its fp32 one.
TEST(KernelFusions, Fp32LogitsSkipTheCasts) {
  const ModelSpec m = functional_model(false);
  ParallelConfig c = tp2_pp2(false);
  c.precision = Precision::FP32;
  const LayerShape x = make_layer_shape(m, c, GroupPlacement{2, 1, 2});
  const OpProgram forward = output_forward(x), backward = output_backward(x);
  const ProgramStep* f = test::find_step(forward, "cross_entropy");
  const ProgramStep* b = test::find_step(backward, "cross_entropy.backward");
  ASSERT_TRUE(f && b);
  EXPECT_DOUBLE_EQ(f->op.bytes, 32 * kLogits);
  EXPECT_DOUBLE_EQ(b->op.bytes, 8 * kLogits);
  EXPECT_DOUBLE_EQ(stage_activations(m, c, 1).loss_workspace, 0.0);
  c.cross_entropy_fusion = true;
  EXPECT_DOUBLE_EQ(stage_activations(m, c, 1).loss_workspace, 4 * kLogits);  // the fused loss's second copy
}

// Megatron-LM turns RoPE fusion off for any position type but rope; multi-latent attention still
// rotates its RoPE parts then, unfused.
TEST(KernelFusions, RopeIsFusedOnlyUnderRopePositions) {
  const GroupPlacement tp{2, 1, 2};
  EXPECT_TRUE(make_layer_shape(functional_model(true), tp2_pp2(false, true), tp).rope_fusion);
  EXPECT_FALSE(make_layer_shape(functional_model(false), tp2_pp2(false, true), tp).rope_fusion);
}

}  // namespace
}  // namespace cc
