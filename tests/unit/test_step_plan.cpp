// step_plan: chunk layers, recompute groups, pass peers and a layer's ops, against hand counts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/presets.h"
#include "sim/step_plan.h"
#include "tiny_with_layers.h"

namespace cc {
namespace {

std::vector<LayerRange> chunk_map(const StepPlan& plan) {
  std::vector<LayerRange> out;
  for (const auto& stage : plan.chunks)
    for (const ChunkPlan& chunk : stage) out.push_back(chunk.layers);
  return out;
}

// A 4-layer chunk under full recomputation of `n` layers by `method`.
ChunkPlan full_recompute_chunk(RecomputeMethod method, int n) {
  ParallelConfig c;
  c.recompute = RecomputeGranularity::Full;
  c.recompute_method = method;
  c.recompute_num_layers = n;
  return chunk_plan(tiny_with_layers(4), c, 0, 0);
}

std::vector<std::string> names(const OpProgram& program) {
  std::vector<std::string> out;
  for (const ProgramStep& step : program) out.emplace_back(step.is_collective ? step.comm.name : step.op.name);
  return out;
}

TEST(StepPlan, UnevenFirstAndLastStagesTakeTheirOwnCounts) {
  ParallelConfig c;
  c.pp = 4;
  c.first_stage_layers = 1;
  c.last_stage_layers = 1;
  c.global_batch = 4;
  const StepPlan plan = step_plan(tiny_with_layers(10), c);
  // 10 layers: 1 first, 1 last, (10 - 2) / 2 = 4 on each middle stage; they start at 0, 1,
  // 1 + 4 = 5 and 10 - 1 = 9.
  const std::vector<LayerRange> expected = {{0, 1}, {1, 4}, {5, 4}, {9, 1}};
  EXPECT_EQ(chunk_map(plan), expected);
  EXPECT_TRUE(plan.chunk(0, 0).has_embedding);
  EXPECT_FALSE(plan.chunk(1, 0).has_embedding);
  EXPECT_TRUE(plan.chunk(3, 0).has_output);
  EXPECT_EQ(stage_layer_count(tiny_with_layers(10), c, 2), 4);
}

TEST(StepPlan, OnlyALighterLastStage) {
  ParallelConfig c;
  c.pp = 3;
  c.last_stage_layers = 2;
  // 10 layers: 2 last, (10 - 2) / 2 = 4 on stages 0 and 1, starting at 0, 4 and 8.
  EXPECT_EQ(chunk_layers(tiny_with_layers(10), c, 0, 0), (LayerRange{0, 4}));
  EXPECT_EQ(chunk_layers(tiny_with_layers(10), c, 1, 0), (LayerRange{4, 4}));
  EXPECT_EQ(chunk_layers(tiny_with_layers(10), c, 2, 0), (LayerRange{8, 2}));
}

TEST(StepPlan, InterleavedChunksFollowVirtualStageOrder) {
  ParallelConfig c;
  c.pp = 2;
  c.virtual_stages = 2;
  c.global_batch = 2;
  const StepPlan plan = step_plan(tiny_with_layers(8), c);
  // 8 layers over 2 x 2 virtual stages of 2; virtual stage j = chunk x 2 + stage holds
  // layers 2j, 2j+1: stage 0 chunk 0 -> 0, chunk 1 -> 4; stage 1 chunk 0 -> 2, chunk 1 -> 6.
  const std::vector<LayerRange> expected = {{0, 2}, {4, 2}, {2, 2}, {6, 2}};
  EXPECT_EQ(chunk_map(plan), expected);
  EXPECT_EQ(plan.chunk(1, 0).virtual_stage, 1);
  EXPECT_EQ(plan.chunk(0, 1).virtual_stage, 2);
  EXPECT_TRUE(plan.chunk(1, 1).has_output);
  EXPECT_FALSE(plan.chunk(1, 0).has_output);
  // Virtual stage 2 (stage 0, chunk 1) follows 1 on stage 1 and feeds 3 on stage 1.
  EXPECT_EQ(plan.chunk(0, 1).previous_stage, 1);
  EXPECT_EQ(plan.chunk(0, 1).previous_chunk, 0);
  EXPECT_EQ(plan.chunk(0, 1).next_stage, 1);
  EXPECT_EQ(plan.chunk(0, 1).next_chunk, 1);
  // Virtual stage 1 (stage 1, chunk 0) wraps back to stage 0's chunk 1.
  EXPECT_EQ(plan.chunk(1, 0).next_stage, 0);
  EXPECT_EQ(plan.chunk(1, 0).next_chunk, 1);
  EXPECT_EQ(plan.chunk(0, 0).previous_stage, -1);
  EXPECT_EQ(plan.chunk(1, 1).next_stage, -1);
}

TEST(StepPlan, DeepSpeedUniformGivesTheFirstStagesTheRemainder) {
  ParallelConfig c;
  c.pp = 4;
  c.framework = "megatron-deepspeed";
  // 10 layers on 4 stages: 10 / 4 = 2 each, the first 10 % 4 = 2 stages one more: 3, 3, 2, 2
  // starting at 0, 3, 6, 8.
  const ModelSpec m = tiny_with_layers(10);
  EXPECT_EQ(chunk_layers(m, c, 0, 0), (LayerRange{0, 3}));
  EXPECT_EQ(chunk_layers(m, c, 1, 0), (LayerRange{3, 3}));
  EXPECT_EQ(chunk_layers(m, c, 2, 0), (LayerRange{6, 2}));
  EXPECT_EQ(chunk_layers(m, c, 3, 0), (LayerRange{8, 2}));
}

TEST(StepPlan, UniformRecomputeGroupsRunNLayersTogether) {
  const ChunkPlan chunk = full_recompute_chunk(RecomputeMethod::Uniform, 2);
  // 4 layers in groups of 2: {0, 1} and {2, 3}; every layer keeps only its group's input.
  const std::vector<LayerRange> expected = {{0, 2}, {2, 2}};
  EXPECT_EQ(chunk.recompute_groups, expected);
  EXPECT_EQ(chunk.recompute, RecomputeScope::WholeLayer);
  EXPECT_EQ(chunk.recomputed_layers(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(chunk.keeps_all(i)) << i;
  EXPECT_EQ(chunk.backward_group(3), (LayerRange{2, 2}));
  EXPECT_EQ(chunk.backward_group(0), (LayerRange{0, 2}));
}

TEST(StepPlan, BlockRecomputeRerunsTheFirstLayersOneByOne) {
  const ChunkPlan chunk = full_recompute_chunk(RecomputeMethod::Block, 2);
  // The first 2 of 4 layers, each alone; layers 2 and 3 keep everything.
  const std::vector<LayerRange> expected = {{0, 1}, {1, 1}};
  EXPECT_EQ(chunk.recompute_groups, expected);
  EXPECT_EQ(chunk.recomputed_layers(), 2);
  EXPECT_FALSE(chunk.keeps_all(1));
  EXPECT_TRUE(chunk.keeps_all(2));
  EXPECT_EQ(chunk.backward_group(2), (LayerRange{2, 1}));
}

TEST(StepPlan, SelectiveRecomputeRerunsEachLayersCoreAttentionUnlessFlash) {
  ParallelConfig c;
  c.recompute = RecomputeGranularity::Selective;
  const ChunkPlan unfused = chunk_plan(tiny_with_layers(3), c, 0, 0);
  const std::vector<LayerRange> each = {{0, 1}, {1, 1}, {2, 1}};
  EXPECT_EQ(unfused.recompute, RecomputeScope::CoreAttention);
  EXPECT_EQ(unfused.recompute_groups, each);
  EXPECT_TRUE(unfused.keeps_all(0));  // nothing beyond the scores is dropped
  c.attention = AttentionKernel::Flash;
  EXPECT_EQ(chunk_plan(tiny_with_layers(3), c, 0, 0).recompute, RecomputeScope::Nothing);
  EXPECT_TRUE(chunk_plan(tiny_with_layers(3), c, 0, 0).recompute_groups.empty());
  c.recompute = RecomputeGranularity::None;
  c.attention = AttentionKernel::Unfused;
  EXPECT_TRUE(chunk_plan(tiny_with_layers(3), c, 0, 0).recompute_groups.empty());
}

TEST(StepPlan, OneF1BPassesReceiveFromTheStageBeforeAndSendToTheNext) {
  ParallelConfig c;
  c.pp = 3;
  c.global_batch = 1;
  const auto passes = planned_passes(c);
  // One microbatch: each stage runs F0 then B0. Stage 1 gets the activation from 0 and
  // sends to 2; backward gets the gradient from 2 and sends it to 0.
  const std::vector<PlannedPass> middle = {{PassKind::Forward, 0, 0, 1, 0, 2, 0, 0},
                                           {PassKind::Backward, 0, 0, 1, 2, 0, 0, 0}};
  EXPECT_EQ(passes[1], middle);
  const std::vector<PlannedPass> first = {{PassKind::Forward, 0, 0, 0, -1, 1, -1, 0},
                                          {PassKind::Backward, 0, 0, 0, 1, -1, 0, -1}};
  EXPECT_EQ(passes[0], first);
  EXPECT_EQ(passes[2][0].send_to, -1);
  EXPECT_EQ(passes[2][1].receive_from, -1);
}

TEST(StepPlan, InterleavedPassesWrapFromTheLastStageToTheFirst) {
  ParallelConfig c;
  c.pp = 2;
  c.virtual_stages = 2;
  c.global_batch = 2;  // 2 microbatches
  const auto passes = planned_passes(c);
  using K = PassKind;
  // Stage 0 warms up with (2-0-1)·2 + (2-1)·2 = 4 forwards (mb 0, 1 on chunk 0, then on
  // chunk 1), then backwards chunk 1 first. Virtual stages: (s0,c0)=0, (s1,c0)=1,
  // (s0,c1)=2, (s1,c1)=3; forward sends to j+1, backward to j-1.
  //                                kind  mb chunk vs  from to  from_chunk to_chunk
  const std::vector<PlannedPass> stage0 = {{K::Forward, 0, 0, 0, -1, 1, -1, 0},
                                           {K::Forward, 1, 0, 0, -1, 1, -1, 0},
                                           {K::Forward, 0, 1, 2, 1, 1, 0, 1},
                                           {K::Forward, 1, 1, 2, 1, 1, 0, 1},
                                           {K::Backward, 0, 1, 2, 1, 1, 1, 0},
                                           {K::Backward, 1, 1, 2, 1, 1, 1, 0},
                                           {K::Backward, 0, 0, 0, 1, -1, 0, -1},
                                           {K::Backward, 1, 0, 0, 1, -1, 0, -1}};
  EXPECT_EQ(passes[0], stage0);
  // Stage 1 warms up with (2-1-1)·2 + 2 = 2 forwards, then alternates: F0c1 (the last
  // virtual stage: nothing to send), B0c1, F1c1, B1c1, then drains chunk 0.
  const std::vector<PlannedPass> stage1 = {{K::Forward, 0, 0, 1, 0, 0, 0, 1},
                                           {K::Forward, 1, 0, 1, 0, 0, 0, 1},
                                           {K::Forward, 0, 1, 3, 0, -1, 1, -1},
                                           {K::Backward, 0, 1, 3, -1, 0, -1, 1},
                                           {K::Forward, 1, 1, 3, 0, -1, 1, -1},
                                           {K::Backward, 1, 1, 3, -1, 0, -1, 1},
                                           {K::Backward, 0, 0, 1, 0, 0, 1, 0},
                                           {K::Backward, 1, 0, 1, 0, 0, 1, 0}};
  EXPECT_EQ(passes[1], stage1);
}

TEST(StepPlan, ThePlanDoesNotGrowWithDataParallelism) {
  ParallelConfig c;
  c.pp = 2;
  c.global_batch = 4;
  const StepPlan one = step_plan(tiny_with_layers(4), c);
  c.dp = 8;
  c.global_batch = 32;  // the same 4 microbatches per replica
  const StepPlan eight = step_plan(tiny_with_layers(4), c);
  EXPECT_EQ(eight.passes, one.passes);
  EXPECT_EQ(chunk_map(eight), chunk_map(one));
}

TEST(StepPlan, LayerOpsRecomputeWhatTheScopeSays) {
  ParallelConfig c;
  c.tp = 2;
  c.recompute = RecomputeGranularity::Selective;
  const StepPlan selective = step_plan(load_model("tiny"), c);
  // Unfused attention with dropout: scores, softmax, dropout, context, as a recompute.
  const std::vector<std::string> core = {"attention_scores", "softmax", "attention_dropout", "attention_context"};
  EXPECT_EQ(names(selective.ops.recompute), core);
  for (const ProgramStep& step : selective.ops.recompute) EXPECT_EQ(step.op.phase, Phase::Recompute);
  c.recompute = RecomputeGranularity::Full;
  const StepPlan full = step_plan(load_model("tiny"), c);
  EXPECT_EQ(names(full.ops.recompute), names(full.ops.forward));
  c.recompute = RecomputeGranularity::None;
  EXPECT_TRUE(step_plan(load_model("tiny"), c).ops.recompute.empty());
}

TEST(StepPlan, AReceivedTransferIsReGatheredOverTensorParallelismWithoutSp) {
  ParallelConfig c;
  c.tp = 2;
  c.pp = 2;
  c.global_batch = 2;
  c.precision = Precision::FP32;
  const StepPlan plan = step_plan(load_model("tiny"), c);
  // One all-gather of the whole activation: 4 B x 128 tokens x 128 hidden = 65,536 B.
  ASSERT_EQ(plan.ops.pipeline_receive.size(), 1u);
  EXPECT_EQ(plan.ops.pipeline_receive[0].comm.kind, CollectiveKind::AllGather);
  EXPECT_DOUBLE_EQ(plan.ops.pipeline_receive[0].comm.bytes, 65536.0);
  c.sequence_parallel = true;  // each rank was sent its own sequence shard: nothing to gather
  EXPECT_TRUE(step_plan(load_model("tiny"), c).ops.pipeline_receive.empty());
}

}  // namespace
}  // namespace cc
