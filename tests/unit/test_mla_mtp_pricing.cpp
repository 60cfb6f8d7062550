// Multi-latent attention and multi-token prediction priced (issue 31, items 1 and 4): which of
// MLA's GEMMs TP splits and which it replicates, the collectives SP adds, flash attention over
// its two head widths, the activations each MLA piece saves, its parameters per TP rank, and the
// MTP layers' ops, FLOPs, parameters and activations on the last stage — each against a hand count.
#include <gtest/gtest.h>

#include <string>

#include "sim/flops.h"
#include "sim/layer_program.h"
#include "sim/layout_validation.h"
#include "sim/memory_model.h"
#include "sim/mla_mtp_memory.h"
#include "sim/step_plan.h"
#include "refusal.h"
#include "program_steps.h"
#include "small_models.h"

namespace cc {
namespace {

// small_models.h's dense model (vocabulary untied) with MLA: query latent 32, key/value latent
// 16, head parts 8 (no RoPE) + 4 (RoPE), value width 8.
ModelSpec small_mla() {
  ModelSpec m = test::small_base("small-mla");
  m.tied_embeddings = false;
  m.mla = {.enabled = true, .q_lora_rank = 32, .kv_lora_rank = 16, .qk_head_dim = 8, .qk_pos_emb_head_dim = 4,
           .v_head_dim = 8};
  return m;
}

// TP 2 with SP, micro batch 1: 16 tokens, 8 region rows, 2 heads per rank.
ParallelConfig tp2_sp() {
  ParallelConfig c;
  c.tp = 2;
  c.sequence_parallel = true;
  c.micro_batch = 1;
  c.global_batch = 1;
  c.attention = AttentionKernel::Flash;
  return c;
}

using test::find_step;

int count_steps(const OpProgram& p, const std::string& name) {
  int n = 0;
  for (const ProgramStep& s : p) n += name == (s.is_collective ? s.comm.name : s.op.name) ? 1 : 0;
  return n;
}

void expect_gemm(const OpProgram& p, const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k) {
  const ProgramStep* s = find_step(p, name);
  ASSERT_NE(s, nullptr) << name;
  EXPECT_EQ(s->op.m, m) << name;
  EXPECT_EQ(s->op.n, n) << name;
  EXPECT_EQ(s->op.k, k) << name;
}

TEST(MlaPricing, DownProjectionsAreReplicatedAndUpProjectionsSplitOverTp) {
  const StepPlan plan = step_plan(small_mla(), tp2_sp());
  const OpProgram& f = plan.ops.forward;
  // Down-projections over the rank's 8 region rows, whole width (replicated weights).
  expect_gemm(f, "q_down_proj", 8, 32, 64);
  expect_gemm(f, "kv_down_proj", 8, 16 + 4, 64);
  // Up-projections over all 16 tokens, this rank's 2 heads: 2 x (8 + 4) and 2 x (8 + 8).
  expect_gemm(f, "q_up_proj", 16, 24, 32);
  expect_gemm(f, "kv_up_proj", 16, 32, 16);
  // Output projection from 2 heads x value 8.
  expect_gemm(f, "attention_proj", 16, 64, 16);
  EXPECT_EQ(find_step(f, "qkv"), nullptr);
  // The first collective is SP's gather of the query latent (2 bytes x 16 tokens x 32), not one
  // of the hidden state: the down-projections need none.
  const ProgramStep* first = nullptr;
  for (const ProgramStep& s : f)
    if (s.is_collective) {
      first = &s;
      break;
    }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(std::string(first->comm.name), "sp_all_gather.q_latent");
  EXPECT_DOUBLE_EQ(first->comm.bytes, 2.0 * 16 * 32);
  const ProgramStep* kv = find_step(f, "sp_all_gather.kv_latent");
  ASSERT_NE(kv, nullptr);
  EXPECT_DOUBLE_EQ(kv->comm.bytes, 2.0 * 16 * (16 + 4));  // the latent with the RoPE key part
  // Causal flash attention: heads 2 x s² 256 x (q·k width 12 + value width 8) = 10,240 FLOPs.
  const ProgramStep* attention = find_step(f, "flash_attention");
  ASSERT_NE(attention, nullptr);
  EXPECT_DOUBLE_EQ(attention->op.flops, 2.0 * 256 * 20);
  // Backward: the latents' gradients are reduced over TP (reduce-scatter under SP).
  const ProgramStep* kv_grad = find_step(plan.ops.backward, "tp_reduce.kv_latent_grad");
  ASSERT_NE(kv_grad, nullptr);
  EXPECT_EQ(kv_grad->comm.kind, CollectiveKind::ReduceScatter);
  EXPECT_DOUBLE_EQ(kv_grad->comm.bytes, 2.0 * 16 * 20);
  expect_gemm(plan.ops.backward, "kv_down_proj.wgrad", 64, 20, 8);
}

TEST(MlaPricing, ParametersPerTpRankKeepTheDownProjectionsWhole) {
  const ModelSpec m = small_mla();
  // Replicated: q down 64 x 32 = 2,048 + its norm 32, kv down 64 x 20 = 1,280 + its norm 16: 3,376.
  // Split: q up 32 x 4 x 12 = 1,536, kv up 16 x 4 x 16 = 1,024, output 4 x 8 x 64 = 2,048: 4,608.
  EXPECT_EQ(mla_attention_parameters_on_rank(m, 1), 3376 + 4608);
  EXPECT_EQ(mla_attention_parameters_on_rank(m, 1), m.attention_parameters());
  EXPECT_EQ(mla_attention_parameters_on_rank(m, 2), 3376 + 4608 / 2);
}

TEST(MlaPricing, EachActivationTermOfAnMlaBlockEqualsItsHandCount) {
  const ModelSpec m = small_mla();
  ParallelConfig c = tp2_sp();
  // e = 2, 8 region rows, 16 tokens, 2 heads per rank.
  //   per region row: input 2 x 64 = 128, query latent 2 x 2 x 32 = 128,
  //                   key/value latent 2 x (16 + 4) + 2 x 16 = 72              -> 328 x 8  = 2,624
  //   per token: Q, K 2 x 2 x 2 x 12 = 96, V and output 2 x 2 x 2 x 8 = 64,
  //              log-sum-exp 4 x 2 = 8                                         -> 168 x 16 = 2,688
  EXPECT_DOUBLE_EQ(mla_attention_activation_bytes(m, c, 2), 2624 + 2688);
  // The whole layer: the dense layer's norms and MLP beside it. Region rows keep the two norm
  // inputs and the FC1 input, 3 x 2 x 64 = 384 per token / TP 2 x 16 = 3,072; the MLP keeps
  // FC1's output 2 x 256 and FC2's input 2 x 128 per token / TP 2 x 16 = 6,144.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c), 3072 + 6144 + 2624 + 2688);
  // Selective recomputation reruns the core attention: its log-sum-exp is not kept.
  c.recompute = RecomputeGranularity::Selective;
  EXPECT_DOUBLE_EQ(mla_attention_activation_bytes(m, c, 2), 2624 + 2688 - 8 * 16);
}

// Without --qk-layernorm Megatron-Core builds the latents' up-projections as plain linears: no
// norm weights, no norm kernels, and each latent kept once (the up-projection's input).
TEST(MlaPricing, LatentsWithoutNormsHaveNoNormWeightsKernelsOrKeptInputs) {
  ModelSpec m = small_mla();
  m.mla.latent_norms = false;
  // Replicated: 3,376 less the two norms' 32 + 16.
  EXPECT_EQ(mla_attention_parameters_on_rank(m, 1), 3328 + 4608);
  EXPECT_EQ(mla_attention_parameters_on_rank(m, 1), m.attention_parameters());
  // Per region row: input 128, query latent 2 x 32 = 64, key/value latent 2 x (16 + 4) = 40 -> 232 x 8.
  EXPECT_DOUBLE_EQ(mla_attention_activation_bytes(m, tp2_sp(), 2), 232 * 8 + 2688);
  const StepPlan plan = step_plan(m, tp2_sp());
  for (const char* norm : {"q_norm", "kv_norm"}) EXPECT_EQ(find_step(plan.ops.forward, norm), nullptr) << norm;
  for (const char* norm : {"q_norm.backward", "kv_norm.backward"})
    EXPECT_EQ(find_step(plan.ops.backward, norm), nullptr) << norm;
  const StepPlan with_norms = step_plan(small_mla(), tp2_sp());
  EXPECT_NE(find_step(with_norms.ops.forward, "q_norm"), nullptr);
  EXPECT_NE(find_step(with_norms.ops.backward, "kv_norm.backward"), nullptr);
  // Our model JSON keeps the choice.
  EXPECT_FALSE(model_from_json(model_to_json(m), "m").mla.latent_norms);
  EXPECT_TRUE(model_from_json(model_to_json(small_mla()), "m").mla.latent_norms);
}

TEST(MlaPricing, WhatIsNotPricedIsRefusedByName) {
  ParallelConfig c;
  c.micro_batch = 1;
  c.global_batch = 1;
  c.attention = AttentionKernel::Flash;
  EXPECT_EQ(refusal_of([&] { validate_layout(c, small_mla(), 1); }).message, "(no error)");
  ParallelConfig cp2 = c;
  cp2.cp = 2;
  EXPECT_EQ(refusal_of([&] { validate_layout(cp2, small_mla(), 2); }).field, "--multi-latent-attention");
}

// Megatron-Core's MLA under --attention-backend unfused: the scores over a query/key head of
// 8 + 4, the context over a value head of 8; the scores kept for backward in place of flash
// attention's log-sum-exp.
TEST(MlaPricing, UnfusedAttentionRunsTheTwoHeadWidthsAndKeepsTheScores) {
  ParallelConfig c = tp2_sp();
  c.attention = AttentionKernel::Unfused;
  const StepPlan plan = step_plan(small_mla(), c);
  const ProgramStep* scores = find_step(plan.ops.forward, "attention_scores");
  const ProgramStep* context = find_step(plan.ops.forward, "attention_context");
  ASSERT_TRUE(scores && context);
  EXPECT_EQ(scores->op.k, 12);   // Q x K^T over 8 + 4
  EXPECT_EQ(context->op.n, 8);   // probabilities x V, 8 wide
  EXPECT_EQ(find_step(plan.ops.forward, "flash_attention"), nullptr);
  const ProgramStep* dgrad_values = find_step(plan.ops.backward, "attention_context.dgrad_values");
  ASSERT_NE(dgrad_values, nullptr);
  EXPECT_EQ(dgrad_values->op.n, 8);
  // Kept: the MLA block's 2,624 + 2,688 less the log-sum-exp's 8 x 16, plus the scores: 2 heads per
  // rank x 16 keys x 16 tokens, one bf16 element each (small_models.h has no dropout).
  const ModelSpec m = small_mla();
  ASSERT_FALSE(m.dropout);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c), 3072 + 6144 + 2624 + 2688 - 8 * 16 + 2.0 * 2 * 16 * 16);
}

ModelSpec small_mla_mtp() {
  ModelSpec m = small_mla();
  m.mtp_num_layers = 1;
  return m;
}

TEST(MtpPricing, TheLastStageRunsTheProjectionALayerAndItsOwnLogits) {
  ParallelConfig c;
  c.micro_batch = 1;
  c.global_batch = 1;
  c.attention = AttentionKernel::Flash;
  const StepPlan plan = step_plan(small_mla_mtp(), c);
  const OpProgram& f = plan.ops.output_forward;
  expect_gemm(f, "mtp.eh_proj", 16, 64, 128);  // 2h -> h over the 16 tokens
  EXPECT_EQ(count_steps(f, "logits"), 2);       // the main head's and the MTP layer's
  EXPECT_EQ(count_steps(f, "kv_up_proj"), 1);   // the MTP layer's transformer layer (MLA)
  EXPECT_EQ(count_steps(plan.ops.output_backward, "logits.wgrad"), 2);
  EXPECT_EQ(count_steps(plan.ops.output_backward, "mtp.eh_proj.wgrad"), 1);
  // Without MTP the output layer is the head alone.
  EXPECT_EQ(count_steps(step_plan(small_mla(), c).ops.output_forward, "logits"), 1);
}

TEST(MtpPricing, FlopsCountTheProjectionTheLayerAndTheLogits) {
  const ModelSpec m = small_mla_mtp();
  // s = 16. Projection 2 x 16 x 128 x 64 = 262,144; logits 2 x 16 x 64 x 128 = 262,144.
  // The layer: MLA projections per token q 64 x 32 + 32 x 4 x 12 = 3,584, kv 64 x 20 +
  // 16 x 4 x 16 = 2,304, output 2,048; SwiGLU 3 x 64 x 128 = 24,576: 32,512 x 2 x 16 =
  // 1,040,384; products 2 x 256 x 4 x (12 + 8) = 40,960.
  EXPECT_DOUBLE_EQ(mtp_forward_flops(m), 262144 + 262144 + 1040384 + 40960);
  EXPECT_DOUBLE_EQ(model_flops_per_iteration(m, 3) - model_flops_per_iteration(small_mla(), 3),
                   3.0 * 3 * mtp_forward_flops(m));
}

TEST(MtpPricing, ParametersAndActivationsLandOnTheLastStage) {
  ParallelConfig c;
  c.pp = 2;
  c.micro_batch = 1;
  c.global_batch = 2;
  c.attention = AttentionKernel::Flash;
  const ModelSpec with = small_mla_mtp(), without = small_mla();
  EXPECT_EQ(stage_parameters(with, c, 0), stage_parameters(without, c, 0));
  // The MTP layer's transformer layer: MLA 7,984 + SwiGLU 3 x 64 x 128 = 24,576 + two norms 128;
  // its enorm, hnorm and final norm 3 x 64, the projection 2 x 64 x 64 = 8,192, and the
  // embedding table 128 x 64 = 8,192 the last stage builds for it.
  EXPECT_EQ(stage_parameters(with, c, 1) - stage_parameters(without, c, 1),
            (7984 + 24576 + 128) + 192 + 8192 + 8192);
  // Activations, e = 2, 16 tokens, TP 1: the embedding, the projection's 2h input and the final
  // norm's input 2 x 16 x (64 + 128 + 64) = 8,192; the output layer's input 2 x 16 x 64 = 2,048
  // and fp32 logits 4 x 16 x 128 = 8,192; beside the layer's own.
  EXPECT_DOUBLE_EQ(mtp_activation_bytes(with, c, 1000, 2), 8192 + 2048 + 8192 + 1000);
  EXPECT_GT(memory_model(with, c).stages[1].bytes.activations, memory_model(without, c).stages[1].bytes.activations);
  EXPECT_DOUBLE_EQ(memory_model(with, c).stages[0].bytes.activations,
                   memory_model(without, c).stages[0].bytes.activations);
}

}  // namespace
}  // namespace cc
