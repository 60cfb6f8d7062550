// step_plan's split under Megatron-Core's other ways of placing layers: uneven first/last
// stages with interleaving, a --pipeline-model-parallel-layout string, the embedding and loss
// counted as layers. Expected ranges are counted by hand and checked against Megatron-Core's
// offset formula (transformer_layer.py get_transformer_layer_offset) in the comments.
#include <gtest/gtest.h>

#include <vector>

#include "sim/flops.h"
#include "sim/layout_validation.h"
#include "sim/memory_model.h"
#include "sim/presets.h"
#include "sim/step_plan.h"
#include "tiny_with_layers.h"

namespace cc {
namespace {

// The layer ranges in virtual-stage order (chunk · PP + stage).
std::vector<LayerRange> by_virtual_stage(const StepPlan& plan) {
  std::vector<LayerRange> out(static_cast<std::size_t>(plan.stages * plan.virtual_stages));
  for (const auto& stage : plan.chunks)
    for (const ChunkPlan& chunk : stage) out[static_cast<std::size_t>(chunk.virtual_stage)] = chunk.layers;
  return out;
}

TEST(StepPlanLayouts, UnevenStagesSplitOverTheirChunks) {
  // 12 layers on PP 4 with 2 chunks per rank: first 2, last 2, middle (12 - 4) / 2 = 4; each
  // stage halves its count. MCore's offset: total per virtual round 1 + 8/2 + 1 = 6; rank 2
  // chunk 1 starts at 6 + 1 + 1·(4/2) = 9, rank 3 chunk 1 at 6 + 1 + 2·2 = 11.
  ParallelConfig c;
  c.pp = 4;
  c.virtual_stages = 2;
  c.first_stage_layers = 2;
  c.last_stage_layers = 2;
  c.global_batch = 4;
  const ModelSpec m = tiny_with_layers(12);
  EXPECT_NO_THROW(validate_layout(c, m, 0));
  const StepPlan plan = step_plan(m, c);
  const std::vector<LayerRange> want = {{0, 1}, {1, 2}, {3, 2}, {5, 1}, {6, 1}, {7, 2}, {9, 2}, {11, 1}};
  EXPECT_EQ(by_virtual_stage(plan), want);
  EXPECT_EQ(stage_layer_count(m, c, 0), 2);
  EXPECT_EQ(stage_layer_count(m, c, 1), 4);
}

TEST(StepPlanLayouts, Llama3InterleavedLayoutString) {
  // 126 layers, PP 16 x 8 chunks: virtual stage 0 holds the embedding alone, 1..126 one layer
  // each, 127 the loss alone. Rank 0 holds virtual stages 0, 16, ..., 112: 7 layers; rank 15
  // holds 15, 31, ..., 127: 7; every other rank 8 (Meta's first and last stage one layer short).
  const ModelSpec m = load_model("llama3-405b");
  ParallelConfig c;
  c.pp = 16;
  c.virtual_stages = 8;
  c.global_batch = 16;
  c.pipeline_layout = "E|(t|)*126,L";
  EXPECT_NO_THROW(validate_layout(c, m, 0));
  const StepPlan plan = step_plan(m, c);
  EXPECT_EQ(plan.chunk(0, 0).layers, (LayerRange{0, 0}));
  EXPECT_TRUE(plan.chunk(0, 0).has_embedding);
  EXPECT_EQ(plan.chunk(1, 0).layers, (LayerRange{0, 1}));
  EXPECT_EQ(plan.chunk(0, 1).layers, (LayerRange{15, 1}));  // virtual stage 16 after 15 one-layer stages
  EXPECT_EQ(plan.chunk(15, 7).layers, (LayerRange{126, 0}));
  EXPECT_TRUE(plan.chunk(15, 7).has_output);
  EXPECT_FALSE(plan.chunk(15, 6).has_output);
  EXPECT_EQ(plan.chunk(15, 7).previous_stage, 14);
  EXPECT_EQ(stage_layer_count(m, c, 0), 7);
  EXPECT_EQ(stage_layer_count(m, c, 15), 7);
  for (int s = 1; s < 15; ++s) EXPECT_EQ(stage_layer_count(m, c, s), 8) << s;
  // A chunk of no layers has no recompute group either.
  c.recompute = RecomputeGranularity::Full;
  EXPECT_NO_THROW(validate_layout(c, m, 0));
  EXPECT_TRUE(chunk_plan(m, c, 0, 0).recompute_groups.empty());
  EXPECT_EQ(chunk_plan(m, c, 0, 1).recompute_groups, (std::vector<LayerRange>{{0, 1}}));
}

TEST(StepPlanLayouts, TheSameSplitSpelledTwoWaysIsTheSamePlan) {
  // Llama 3 405B without interleaving: --decoder-first/last 7 and "Et*7|(t*8|)*14,t*7L".
  const ModelSpec m = load_model("llama3-405b");
  ParallelConfig flags;
  flags.pp = 16;
  flags.global_batch = 16;
  flags.first_stage_layers = 7;
  flags.last_stage_layers = 7;
  ParallelConfig layout = flags;
  layout.first_stage_layers = layout.last_stage_layers = 0;
  layout.pipeline_layout = "Et*7|(t*8|)*14,t*7L";
  EXPECT_NO_THROW(validate_layout(layout, m, 0));
  EXPECT_EQ(virtual_stage_layers(m, flags), virtual_stage_layers(m, layout));
  // Every consumer reads the split from the plan: memory and FLOPs agree too.
  for (int s = 0; s < 16; ++s) {
    EXPECT_EQ(stage_parameters(m, flags, s), stage_parameters(m, layout, s)) << s;
    EXPECT_EQ(memory_model(m, flags).stages[static_cast<std::size_t>(s)].bytes.activations,
              memory_model(m, layout).stages[static_cast<std::size_t>(s)].bytes.activations)
        << s;
  }
  flags.recompute = layout.recompute = RecomputeGranularity::Full;
  EXPECT_EQ(hardware_flops_per_iteration(m, flags), hardware_flops_per_iteration(m, layout));
}

TEST(StepPlanLayouts, EmbeddingAndLossCountedAsLayers) {
  // 6 layers + embedding + loss = 8 on PP 4: 2 per rank; rank 0 holds 2 - 1, rank 3 2 - 1.
  // MCore's offset for rank r > 0 is r·2 - 1: 1, 3, 5.
  ParallelConfig c;
  c.pp = 4;
  c.global_batch = 4;
  c.account_for_embedding = c.account_for_loss = true;
  const ModelSpec m = tiny_with_layers(6);
  EXPECT_NO_THROW(validate_layout(c, m, 0));
  EXPECT_EQ(by_virtual_stage(step_plan(m, c)), (std::vector<LayerRange>{{0, 1}, {1, 2}, {3, 2}, {5, 1}}));
  // PP 2 x 2 chunks: 8 / 2 = 4 per rank, 2 per chunk. MCore: 8 // 2 = 4 per virtual round,
  // rank 0 chunk 1 at 4 - 1 = 3, rank 1 chunk 0 at 2 - 1 = 1, rank 1 chunk 1 at 4 + 2 - 1 = 5.
  c.pp = 2;
  c.virtual_stages = 2;
  EXPECT_NO_THROW(validate_layout(c, m, 0));
  EXPECT_EQ(by_virtual_stage(step_plan(m, c)), (std::vector<LayerRange>{{0, 1}, {1, 2}, {3, 2}, {5, 1}}));
  // 3 layers + the embedding on PP 2 x 2: one per chunk, the first chunk holds the embedding only.
  ParallelConfig e;
  e.pp = 2;
  e.virtual_stages = 2;
  e.global_batch = 2;
  e.account_for_embedding = true;
  const ModelSpec three = tiny_with_layers(3);
  EXPECT_NO_THROW(validate_layout(e, three, 0));
  EXPECT_EQ(by_virtual_stage(step_plan(three, e)), (std::vector<LayerRange>{{0, 0}, {0, 1}, {1, 1}, {2, 1}}));
}

}  // namespace
}  // namespace cc
